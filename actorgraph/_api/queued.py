"""Submitting runs to the queue that workers take them from (`CompiledGraph.submit`), and their handles.

A submission is stored, never run here: an input state (a new run), None
(continue the thread), or `Command(resume=...)`. An answer is claimed here and
now, exactly as `invoke` claims it (a compare-and-set: of two people answering
one question, one wins and the other gets `AlreadyAnsweredError`), and what is
queued is the thread's continuation: the worker that takes it runs the vertex
with the claimed answer, as any resume after a claim does.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from actorgraph._actors.start import default_answerer
from actorgraph._engine.answers import answers_for
from actorgraph._engine.inputs import input_state
from actorgraph._engine.preparing import lookups
from actorgraph._model.errors import (
    ActorGraphError,
    AlreadyAnsweredError,
    CheckpointError,
    ConfigError,
    RunTimeoutError,
    SerializationError,
    ThreadNotFoundError,
)
from actorgraph._model.records import UNSET, Command
from actorgraph._model.runs import Claim
from actorgraph.checkpoint._codec import aad
from actorgraph.checkpoint._load import answer_aad, claims_of, load
from actorgraph.checkpoint._protocol import AnswerRow, Checkpointer
from actorgraph.checkpoint._queue import QUEUE_STATES, QueuedRow, RunQueue, run_queue
from actorgraph.checkpoint._store import check_thread_id

__all__ = ["Submitted", "decode_submission", "submit", "workers_running"]

_POLL = 0.05  # seconds between looks at the queue while waiting


def _payload_aad(thread_id: str) -> bytes:
    return aad(thread_id, "queued-run")


@dataclass(frozen=True, slots=True)
class Submitted:
    """The handle of a queued run: its thread, its run, and a way to wait for a worker to finish it.

    Attributes:
        thread_id: the run's thread (`get_state(thread_id)` reads it).
        run_id: the run's id in the queue.
    """

    thread_id: str
    _queue: RunQueue
    run_id: str | None = None

    def status(self) -> str:
        """The run's state in the queue: "queued", "running" (a worker holds it), "done" or "failed".

        Or "interrupted": a cancel stopped it (its committed supersteps are kept).

        Raises:
            CheckpointError: the queue row's state is none of these (damaged).
        """
        if self.run_id is None:
            state = self._queue.state_of(self.thread_id)
        else:  # the state alone: a damaged row's other columns aside
            state = self._queue.run_state(self.run_id)
        if state is not None and state not in QUEUE_STATES:
            shown = f"its state is {state!r:.60}"
            msg = f"the queue row of thread {self.thread_id!r} is damaged ({shown}); submit the run again"
            raise CheckpointError(msg)
        return "done" if state is None else str(state)

    def worker(self) -> str | None:
        """The worker holding the run (or the last one that did); None while it is queued."""
        row = self._queue.get(self.thread_id) if self.run_id is None else self._queue.run(self.run_id)
        return None if row is None else row.worker

    def wait(self, timeout: float | None = None) -> str:
        """Wait until a worker stopped the run (done, paused or failed); return "done" or "failed".

        "done" means the run stopped as `invoke` would have returned: read the
        thread with `get_state(thread_id)` (status "done" or "interrupted").
        "interrupted" means a cancel stopped it (its committed supersteps are kept).

        Raises:
            RunTimeoutError: the run did not stop within `timeout` seconds (it
                stays queued or running).
            CheckpointError: the queue row's state is damaged.
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            state = self.status()
            if state not in ("queued", "running"):
                return state
            if deadline is not None and time.monotonic() >= deadline:
                msg = (
                    f"the queued run of thread {self.thread_id!r} did not stop within {timeout} s "
                    f"(it is {state}); is a worker running? (actorgraph worker TARGET)"
                )
                raise RunTimeoutError(msg)
            time.sleep(_POLL)


def submit(
    store: Checkpointer | None, input_: Any, thread_id: object, *, answered_by: str | None
) -> Submitted:
    """Queue a run of `thread_id` for the workers; an answer in `input_` is claimed first.

    Raises:
        ConfigError: no SQL checkpointer, no thread id, or a `Command` that is not a resume.
        AlreadyAnsweredError: another answer to the question was claimed first.
        ResumeError: nothing waits for the answer, or it is ambiguous.
        CheckpointError: the thread has a run queued or running already.
    """
    if store is None:
        msg = (
            "submit needs a checkpointer that workers share: compile(checkpointer=PostgresCheckpointer(dsn))"
        )
        raise ConfigError(msg)
    queue = run_queue(store)
    thread = check_thread_id(thread_id)
    if isinstance(input_, Command):
        if input_.resume is UNSET or input_.update is not None or input_.goto:
            msg = "submit takes an input state, None, or Command(resume=...); run other Commands with invoke"
            raise ConfigError(msg)
        _claim(store, thread, input_.resume, answered_by or default_answerer())
        payload: dict[str, Any] = {"kind": "continue"}
    elif input_ is None:
        payload = {"kind": "continue"}
    else:
        payload = {"kind": "input", "value": input_state(input_)}
    data = store.serializer.dumps(payload, aad=_payload_aad(thread))
    return Submitted(thread, queue, queue.enqueue(thread, data))


def decode_submission(store: Checkpointer, row: QueuedRow) -> tuple[bool, Any]:
    """What a worker runs for a queue row: `(True, input)` for a new input, `(False, None)` to continue.

    A run taken over from a worker that died continues from its checkpoint when
    that worker got as far as recording the input (the thread's head moved).

    Raises:
        SerializationError: the stored submission is damaged or was not made by `submit`.
    """
    try:
        payload = store.serializer.loads(row.payload, aad=_payload_aad(row.thread_id))
    except SerializationError as exc:
        msg = f"the queued run of thread {row.thread_id!r} cannot be read ({exc}); submit it again"
        raise SerializationError(msg) from exc
    if not isinstance(payload, dict) or payload.get("kind") not in ("input", "continue"):
        msg = f"the queued run of thread {row.thread_id!r} holds no submission of submit(); submit it again"
        raise SerializationError(msg)
    if payload["kind"] == "continue":
        return False, None
    if row.attempts > 1:
        head = store.get(row.thread_id)
        if (head.checkpoint_id if head is not None else None) != row.base_head:
            return False, None  # the worker that died recorded the input: continue its run
    return True, payload.get("value")


def _claim(store: Checkpointer, thread: str, resume: Any, answered_by: str) -> None:
    """Claim the answers `resume` gives the thread's questions (compare-and-set), as `invoke` would."""
    loaded = load(store, thread)
    if loaded is None:
        raise ThreadNotFoundError(f"thread {thread!r} has no checkpoint, so it waits for no answer")
    ids, checkpoints = lookups(loaded, Command(resume=resume))
    stored = store.get_answers(thread, ids) if ids else {}
    for checkpoint_id in checkpoints:
        if stored:
            break
        stored = store.answers_at(thread, checkpoint_id)
    earlier: dict[str, Claim] = claims_of(store, thread, stored.values())
    answering = answers_for(loaded, resume, earlier)
    at, dumps = time.time(), store.serializer.dumps
    rows = [
        AnswerRow(
            q.id, loaded.checkpoint_id, q.vertex, answered_by, at, dumps(v, aad=answer_aad(thread, q.id))
        )
        for q, v in answering.new
    ]
    won = store.claim_answers(thread, loaded.checkpoint_id, rows) if rows else []
    if won:
        first = won[0]
        raise AlreadyAnsweredError(
            thread, first.interrupt_id, first.vertex, first.answered_by, first.answered_at
        )


def workers_running(store: Checkpointer | None) -> int:
    """How many workers take the queued runs of `store` now (0 for a store without a queue, or unreadable)."""
    if store is None:
        return 0
    try:
        return len(run_queue(store).live_workers())
    except ActorGraphError:  # a memory store, a read-only store without the tables: nobody works on it
        return 0
