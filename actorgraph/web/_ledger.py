"""Answers applied exactly once, and the runs the server started, each tracked by its thread.

One lock per thread serialises everything that starts a run on it (answers,
retries). Under the lock an answer is refused when its interrupt was answered
already (the record says by whom and with what), when a run of the thread is
still going, or when the store no longer lists the interrupt as pending (a
stale form, or an answer given before a restart). Only then is the answer
recorded and the run started (`CompiledGraph.start`: the request never waits
for the run).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from actorgraph import ActorGraphError, Command, CompiledGraph, RunHandle, VertexError

__all__ = ["Answered", "Ledger", "Refused"]


@dataclass(frozen=True, slots=True)
class Answered:
    """Who answered an interrupt, with what, and when."""

    thread_id: str
    interrupt_id: str
    value: Any
    by: str
    at: float


class Refused(Exception):  # noqa: N818 - a refusal, not a failure of the server
    """An answer or action that is not applied; `answered` is the answer that won, if any."""

    def __init__(self, message: str, answered: Answered | None = None) -> None:
        super().__init__(message)
        self.answered = answered


class Ledger:
    """The server's memory of answers and runs (in memory: it lasts as long as the process)."""

    def __init__(self, compiled: CompiledGraph[Any]) -> None:
        self._compiled = compiled
        self._guard = threading.Lock()
        self._locks: dict[str, threading.Lock] = {}
        self._answers: dict[str, Answered] = {}
        self._runs: dict[str, RunHandle[Any]] = {}
        self._failures: dict[str, str] = {}

    def _lock(self, thread_id: str) -> threading.Lock:
        with self._guard:
            return self._locks.setdefault(thread_id, threading.Lock())

    def answered(self, interrupt_id: str) -> Answered | None:
        """The answer recorded for an interrupt, if this server applied one."""
        return self._answers.get(interrupt_id)

    def running(self, thread_id: str) -> bool:
        """True while a run this server started on the thread is going."""
        handle = self._runs.get(thread_id)
        return handle is not None and not handle.done()

    def failure(self, thread_id: str) -> str | None:
        """Why the last run this server started on the thread could not run (refused by the engine)."""
        return self._failures.get(thread_id)

    def answer(self, thread_id: str, interrupt_id: str, value: Any, by: str) -> Answered:
        """Apply an answer once and start the run that takes it; the record of it.

        Raises:
            Refused: answered already, a run of the thread is going, or the interrupt is not pending.
        """
        with self._lock(thread_id):
            earlier = self._answers.get(interrupt_id)
            if earlier is not None:
                raise Refused("already answered", earlier)
            self._refuse_if_running(thread_id)
            pending = {p.id for p in self._compiled.get_state(thread_id).interrupts}
            if interrupt_id not in pending:
                raise Refused("already answered: this question is no longer waiting for an answer")
            record = Answered(thread_id, interrupt_id, value, by, time.time())
            self._answers[interrupt_id] = record
            self._start(thread_id, lambda: Command(resume={interrupt_id: value}))
            return record

    def retry(self, thread_id: str) -> None:
        """Resume a failed thread (`invoke(None)`: what failed runs again).

        Raises:
            Refused: a run of the thread is going, or its last run did not fail.
        """
        with self._lock(thread_id):
            self._refuse_if_running(thread_id)
            status = self._compiled.get_state(thread_id).status
            if status != "error":
                raise Refused(f"only a failed run is retried; this thread is {status}")
            self._start(thread_id, lambda: None)

    def cancel(self, thread_id: str) -> bool:
        """Cancel the run this server started on the thread; False if none is going."""
        handle = self._runs.get(thread_id)
        return handle is not None and handle.cancel()

    def _refuse_if_running(self, thread_id: str) -> None:
        if self.running(thread_id):
            raise Refused("a run of this thread is going; wait until it stops")

    def _start(self, thread_id: str, given: Callable[[], Any]) -> None:
        self._failures.pop(thread_id, None)
        handle = self._compiled.start(given(), thread_id=thread_id)
        self._runs[thread_id] = handle
        handle.future.add_done_callback(lambda future: self._ended(thread_id, future.exception()))

    def _ended(self, thread_id: str, error: BaseException | None) -> None:
        """Keep the reason a run did not start or finish when the store cannot tell it (a refusal)."""
        if isinstance(error, ActorGraphError) and not isinstance(error, VertexError):
            self._failures[thread_id] = f"{type(error).__name__}: {error}"  # a task failure is in the store
