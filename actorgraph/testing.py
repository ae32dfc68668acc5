"""Helpers for testing graphs built with actorgraph (part of the product)."""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from actorgraph._model.errors import ActorGraphError

__all__ = ["FakeClock", "ScriptedModel"]


class FakeClock:
    """A clock whose waits end at once and are recorded.

    Pass it to `Graph.compile(clock=FakeClock())` so retry backoff does not
    make tests wait; `sleeps` then lists every backoff in order. (Vertex
    timeouts still use real time.)

    Attributes:
        sleeps: the seconds of every backoff requested, in order.
    """

    def __init__(self, start: float = 0.0) -> None:
        self._now = start
        self._lock = threading.Lock()
        self._handles = itertools.count()
        self.sleeps: list[float] = []

    def monotonic(self) -> float:
        """The fake time: the start plus every backoff so far."""
        with self._lock:
            return self._now

    def call_later(self, seconds: float, fn: Callable[[], None]) -> int:
        """Record the wait, advance the fake time, and call `fn()` at once."""
        with self._lock:
            if seconds > 0:
                self.sleeps.append(seconds)
                self._now += seconds
            handle = next(self._handles)
        fn()
        return handle

    def cancel(self, handle: object) -> None:
        """Nothing to cancel: every call has already happened."""


class ScriptedModel:
    """A fake chat model for tests and examples: it replies with a planned list of messages, in order.

    A reply is a string (the assistant's text), an assistant message dict (tool
    calls included: `{"role": "assistant", "content": "", "tool_calls": [{"id": "c1",
    "name": "add", "args": {"a": 1, "b": 2}}]}`), or a function of the messages
    the model was given that returns one of those. It has `invoke(messages)`, and
    with `stream=True` also `stream(messages)`, which yields the reply's text word
    by word (tool calls come with the last piece). Thread-safe; it remembers what
    it was given (`calls`) and fails with a clear error when its script runs out.
    """

    def __init__(self, replies: Sequence[Any], *, stream: bool = False) -> None:
        """Plan the replies; `stream=True` gives the model a `stream` method."""
        self.replies = list(replies)
        self.calls: list[list[Any]] = []
        self._lock = threading.Lock()
        if stream:
            self.stream = self._stream

    def invoke(self, messages: Sequence[Any]) -> Any:
        """The next planned reply to `messages`.

        Raises:
            ActorGraphError: the script has no reply left.
        """
        with self._lock:
            if len(self.calls) >= len(self.replies):
                msg = f"ScriptedModel ran out of replies after {len(self.replies)} calls; plan more replies"
                raise ActorGraphError(msg)
            reply = self.replies[len(self.calls)]
            self.calls.append(list(messages))
        reply = reply(messages) if callable(reply) else reply
        if isinstance(reply, str):
            return {"role": "assistant", "content": reply}
        return dict(reply)

    def _stream(self, messages: Sequence[Any]) -> Iterator[dict[str, Any]]:
        reply = self.invoke(messages)
        words = str(reply.get("content") or "").split(" ")
        pieces = [w + " " for w in words[:-1]] + [words[-1]]
        for i, piece in enumerate(pieces):
            last = i == len(pieces) - 1
            chunk: dict[str, Any] = {"role": "assistant", "content": piece}
            if last and reply.get("tool_calls"):
                chunk["tool_calls"] = reply["tool_calls"]
            yield chunk
