"""The runs this server started, one at a time per thread; answers go through the engine's claim.

Which answer wins is the store's decision, not this server's: `CompiledGraph.start`
claims the answer in the checkpointer (compare-and-set) before any vertex runs,
and `RunHandle.wait_started` raises `AlreadyAnsweredError` (who answered, when)
when another answer was claimed first, by this server, another one or the command
line, before or after a restart. What the ledger keeps is what only this process
knows: the runs it started (to show them going, to cancel them, to say why one
could not go on), and a lock per thread so that it starts one run of a thread at
a time.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

from actorgraph import (
    ActorGraphError,
    AlreadyAnsweredError,
    Command,
    CompiledGraph,
    RunHandle,
    RunTimeoutError,
    VertexError,
)
from actorgraph._api.queued import workers_running
from actorgraph._api.text import PREVIEW_CHARS, Preview, dumps, preview
from actorgraph.checkpoint import Checkpointer
from actorgraph.checkpoint._load import answer_aad

__all__ = ["START_WAIT", "Answered", "Ledger", "Refused", "answered"]

START_WAIT = 30.0  # seconds an answer waits for its run to claim it before the page says "still starting"


@dataclass(frozen=True, slots=True)
class Answered:
    """The answer that won a question, as the store keeps it: who, when, and with what (bounded)."""

    by: str
    at: float
    vertex: str
    interrupt_id: str
    value: Preview | None
    unreadable: str = ""  # why the value could not be read back, if it could not


class Refused(ActorGraphError):  # noqa: N818 - a refusal, not a failure of the server
    """Raised by the ledger for an answer or action it does not apply (a run of the thread is going)."""


def answered(store: Checkpointer, lost: AlreadyAnsweredError) -> Answered:
    """The answer that won over `lost`'s, read from the store (its value cut to a preview)."""
    value, unreadable = None, ""
    try:
        row = store.get_answers(lost.thread_id, [lost.interrupt_id]).get(lost.interrupt_id)
        if row is not None:
            decoded = store.serializer.loads(row.data, aad=answer_aad(lost.thread_id, lost.interrupt_id))
            value = preview(dumps(decoded, indent=2), PREVIEW_CHARS)
    except ActorGraphError as exc:  # a damaged row: who and when are still known
        unreadable = f"{type(exc).__name__}: {exc}"
    return Answered(lost.answered_by, lost.answered_at, lost.vertex, lost.interrupt_id, value, unreadable)


class Ledger:
    """The runs this server started, by thread (in memory: they last as long as the process)."""

    def __init__(self, compiled: CompiledGraph[Any]) -> None:
        self._compiled = compiled
        self._guard = threading.Lock()
        self._locks: dict[str, threading.Lock] = {}
        self._runs: dict[str, RunHandle[Any]] = {}
        self._failures: dict[str, str] = {}

    def _lock(self, thread_id: str) -> threading.Lock:
        with self._guard:
            return self._locks.setdefault(thread_id, threading.Lock())

    def running(self, thread_id: str) -> bool:
        """True while a run this server started on the thread is going."""
        handle = self._runs.get(thread_id)
        return handle is not None and not handle.done()

    def failure(self, thread_id: str) -> str | None:
        """Why the last run this server started on the thread could not go on (refused by the engine)."""
        return self._failures.get(thread_id)

    def answer(self, thread_id: str, interrupt_id: str, value: Any, by: str) -> None:
        """Start the run that takes the answer, once the store has claimed it for this question.

        While workers run (`actorgraph worker`), the answer is claimed here and its
        run queued for them (`CompiledGraph.submit`).

        Raises:
            AlreadyAnsweredError: another answer to the question was claimed first (who, when).
            ResumeError: the question is not waiting for an answer (not pending, another thread's).
            Refused: a run of the thread that this server started is still going, or the
                run did not claim the answer within `START_WAIT` (it may still).
            ActorGraphError: the thread cannot be read (damaged) or the answer stored.
        """
        with self._lock(thread_id):
            if self.running(thread_id):
                self._refuse_if_answered(thread_id, interrupt_id)  # who won says more than "wait"
            self._refuse_if_running(thread_id)
            command = Command(resume={interrupt_id: value})
            if workers_running(self._compiled.checkpointer):  # claimed here, run by a worker
                self._compiled.submit(command, thread_id=thread_id, answered_by=by)
                return
            self._started(thread_id, self._compiled.start(command, thread_id=thread_id, answered_by=by))

    def retry(self, thread_id: str) -> None:
        """Resume a failed thread (`invoke(None)`: what failed runs again).

        Raises:
            Refused: a run of the thread is going, or its last run did not fail.
            ActorGraphError: the thread cannot be read, or the run could not start.
        """
        with self._lock(thread_id):
            self._refuse_if_running(thread_id)
            status = self._compiled.get_state(thread_id).status
            if status != "error":
                msg = f"only a failed run is retried; this thread is {status}"
                raise Refused(msg)
            self._started(thread_id, self._compiled.start(None, thread_id=thread_id))

    def cancel(self, thread_id: str) -> bool:
        """Cancel the run this server started on the thread; False if none is going."""
        handle = self._runs.get(thread_id)
        return handle is not None and handle.cancel()

    def _refuse_if_answered(self, thread_id: str, interrupt_id: str) -> None:
        """Raise `AlreadyAnsweredError` when the store holds an answer to the question (claimed already)."""
        store = self._compiled.checkpointer
        row = store.get_answers(thread_id, [interrupt_id]).get(interrupt_id) if store is not None else None
        if row is not None:
            raise AlreadyAnsweredError(thread_id, interrupt_id, row.vertex, row.answered_by, row.answered_at)

    def _refuse_if_running(self, thread_id: str) -> None:
        if self.running(thread_id):
            msg = "a run of this thread is going; wait until it stops"
            raise Refused(msg)

    def _started(self, thread_id: str, handle: RunHandle[Any]) -> None:
        """Wait until the run has claimed its answers; keep it if it goes on (what refused it is raised)."""
        try:
            handle.wait_started(START_WAIT)
        except RunTimeoutError:
            self._keep(thread_id, handle)
            msg = (
                f"the run did not start within {START_WAIT:.0f} s (the store is slow); it may still take "
                f"the answer: reload the thread's page to see"
            )
            raise Refused(msg) from None
        self._keep(thread_id, handle)

    def _keep(self, thread_id: str, handle: RunHandle[Any]) -> None:
        self._failures.pop(thread_id, None)
        self._runs[thread_id] = handle
        handle.future.add_done_callback(lambda future: self._ended(thread_id, future.exception()))

    def _ended(self, thread_id: str, error: BaseException | None) -> None:
        """Keep the reason a run did not finish when the store cannot tell it (a refusal)."""
        if isinstance(error, ActorGraphError) and not isinstance(error, VertexError):
            self._failures[thread_id] = f"{type(error).__name__}: {error}"  # a task failure is in the store
