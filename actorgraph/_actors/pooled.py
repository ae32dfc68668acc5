"""Pooled actors: pykka actors without a thread of their own, run in slices by a dispatcher.

`dispatcher` holds the scheduler threads; this module holds what one actor
is to them: its mailbox (putting a message makes the actor ready), its slice
(up to `SLICE` messages through pykka's own handling), and its end (joinable
as a thread is, for `close()`).
"""

from __future__ import annotations

import sys
import threading
from collections import deque
from typing import Any, Protocol

import pykka
from pykka import ActorRegistry

__all__ = ["SLICE", "ActorEnd", "PooledActor", "Schedules"]

SLICE = 64  # messages one actor handles before the next ready actor gets its turn


class Schedules(Protocol):
    """What runs pooled actors (`dispatcher.Dispatcher`)."""

    def schedule(self, actor: PooledActor) -> None:
        """Make `actor` ready: a scheduler thread runs a slice of it soon."""
        ...


class ActorEnd:
    """The end of a pooled actor, joinable as a thread's (`close()` waits for it)."""

    def __init__(self) -> None:
        self.ended = threading.Event()
        self.ident: int | None = None  # the scheduler thread that ran it last

    def join(self, timeout: float | None = None) -> None:
        """Wait up to `timeout` seconds for the actor to have stopped."""
        self.ended.wait(timeout)

    def is_alive(self) -> bool:
        """True until the actor stopped."""
        return not self.ended.is_set()


class _Mailbox:
    """A pooled actor's inbox: putting a message makes the actor ready (pykka's `ActorInbox`)."""

    def __init__(self, actor: PooledActor) -> None:
        self._actor = actor
        self._messages: deque[Any] = deque()

    def put(self, envelope: Any, block: bool = True, timeout: float | None = None) -> None:  # noqa: ARG002 - pykka's signature
        self._messages.append(envelope)
        self._actor.wake()

    def get(self, block: bool = True, timeout: float | None = None) -> Any:  # noqa: ARG002 - pykka's signature
        return self._messages.popleft()

    def take(self) -> Any | None:
        """The next message, or None."""
        try:
            return self._messages.popleft()
        except IndexError:
            return None

    def empty(self) -> bool:
        return not self._messages


class PooledActor(pykka.Actor):
    """A pykka actor without a thread of its own: its messages run on the dispatcher's schedulers."""

    def __init__(self, dispatcher: Schedules) -> None:
        """An actor for `dispatcher` (call before pykka's `__init__`, which makes the mailbox)."""
        self.dispatcher = dispatcher
        self._wake_lock = threading.Lock()
        self._scheduled = False
        self._set_up = False
        self._torn_down = False
        self.end = ActorEnd()
        super().__init__()

    def _create_actor_inbox(self) -> Any:  # type: ignore[override] # pykka's hook: ours needs the actor
        return _Mailbox(self)

    @staticmethod
    def _create_future() -> pykka.Future[Any]:
        return pykka.ThreadingFuture()

    def _start_actor_loop(self) -> None:
        self.wake()  # the first slice runs on_start

    def describe(self) -> str:
        """What this actor is, for close()'s messages."""
        return type(self).__name__

    def wake(self) -> None:
        """Make the actor ready, unless it already is."""
        with self._wake_lock:
            if self._scheduled:
                return
            self._scheduled = True
        self.dispatcher.schedule(self)

    def run_slice(self) -> None:
        """On a scheduler: handle up to `SLICE` messages, then give the thread back."""
        self.end.ident = threading.get_ident()
        if not self._set_up:
            self._set_up = True
            self._actor_loop_setup()
        inbox: _Mailbox = self.actor_inbox  # type: ignore[assignment]
        for _ in range(SLICE):
            if self.actor_stopped.is_set():
                break
            envelope = inbox.take()
            if envelope is None:
                break
            self._handle(envelope)
        if self.actor_stopped.is_set():
            if not self._torn_down:
                self._torn_down = True
                self._actor_loop_teardown()
                self.end.ended.set()
            return
        with self._wake_lock:
            if inbox.empty():
                self._scheduled = False
                return
        self.dispatcher.schedule(self)  # more to do: the back of the line, so others get their turn

    def _handle(self, envelope: Any) -> None:
        """One message, as pykka's own loop handles it (replies, failures, a BaseException stops all)."""
        try:
            response = self._handle_receive(envelope.message)
            if envelope.reply_to is not None:
                envelope.reply_to.set(response)
        except Exception:  # noqa: BLE001 - pykka's rule: the asker gets it, else on_failure
            if envelope.reply_to is not None:
                envelope.reply_to.set_exception()
            else:
                self._handle_failure(*sys.exc_info())
                try:
                    self.on_failure(*sys.exc_info())
                except Exception:  # noqa: BLE001
                    self._handle_failure(*sys.exc_info())
        except BaseException:  # noqa: BLE001 - pykka's rule: stop every actor
            self._stop()
            ActorRegistry.stop_all()
