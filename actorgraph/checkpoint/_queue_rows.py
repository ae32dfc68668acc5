"""The run queue's rows as records, read back with checks: a row the queue did not write is named, not run.

Anyone with the database can write anything into a row (SQLite keeps a text in
a REAL column; PostgreSQL keeps NaN and Infinity in one, and the largest bigint
in `attempts`). Each column is checked for what the queue writes there, and a
row that fails is a `CheckpointError` naming its thread, its run, the column and
the value, so the queue can mark it failed with that reason and go on.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from actorgraph._model.errors import CheckpointError

__all__ = [
    "ACTIVE",
    "CANCELS",
    "COLUMNS",
    "MOST_ATTEMPTS",
    "QUEUE_STATES",
    "QueuedRow",
    "WorkerRow",
    "queued_row",
    "shown_id",
    "worker_row",
]

QUEUE_STATES = ("queued", "running", "done", "failed", "interrupted")
"""A queue row's states: waiting for a worker, held by one, stopped (done or paused), failed, and
stopped by a cancel (`interrupted`: its committed supersteps stay)."""

ACTIVE = ("queued", "running")
"""The states of a run that has not ended: its thread is busy."""

CANCELS = ("interrupt", "rollback")
"""What a cancel asks of a run: stop and keep its committed supersteps, or stop and delete them."""

COLUMNS = (
    "run_id, thread_id, seq, state, payload, base_head, worker, lease_until, attempts, submitted_at,"
    " updated_at, error, graph, cancel, not_before"
)
"""The queue's columns, in the order `queued_row` reads them."""

MOST_ATTEMPTS = 2**31  # far beyond any real count, far below where `attempts + 1` would overflow a bigint


@dataclass(frozen=True, slots=True)
class QueuedRow:
    """One queued run as the queue holds it.

    Attributes:
        run_id: the run's id (a new UUID for each submission or server run).
        thread_id: the run's thread.
        seq: its place among the runs of its thread (they are taken in this order, one at a time).
        state: "queued", "running", "done", "failed" or "interrupted".
        payload: the encoded submission (opaque to the queue).
        base_head: the thread's head when a worker first took it (None: a new thread).
        worker: the worker holding it (running), the one it is kept for (queued), or the last one that did.
        lease_until: wall-clock seconds until which the worker's lease (or a queued run's
            reservation for its worker) holds.
        attempts: how many times a worker took it.
        submitted_at: wall-clock seconds of the submission.
        updated_at: wall-clock seconds of its last change.
        error: why it failed (state "failed").
        graph: the name of the graph that runs it (None: any worker of the store, as `submit` queues).
        cancel: "interrupt" or "rollback" when a cancel was asked of the running run, else None.
        not_before: wall-clock seconds before which no worker takes it (`after_seconds`), or None.
    """

    run_id: str
    thread_id: str
    seq: int
    state: str
    payload: bytes
    base_head: str | None
    worker: str | None
    lease_until: float | None
    attempts: int
    submitted_at: float
    updated_at: float
    error: str | None
    graph: str | None = None
    cancel: str | None = None
    not_before: float | None = None


@dataclass(frozen=True, slots=True)
class WorkerRow:
    """A registered worker: its name, when it started, its last heartbeat, its lease in seconds."""

    worker: str
    started_at: float
    seen_at: float
    lease: float


class _Damaged(Exception):  # noqa: N818 - internal: becomes a CheckpointError naming the row
    """One column holds what the queue never writes there."""

    def __init__(self, column: str, value: object, wanted: str) -> None:
        super().__init__(f"its {column} is {value!r:.60}, not {wanted}")


def _state(value: object) -> str:
    if value in QUEUE_STATES:
        return str(value)
    raise _Damaged("state", value, " or ".join(QUEUE_STATES))


def _cancel(value: object) -> str | None:
    if value is None or value in CANCELS:
        return value
    raise _Damaged("cancel", value, "interrupt, rollback or nothing")


def _text(column: str, value: object, *, optional: bool = False) -> Any:
    if (value is None and optional) or (isinstance(value, str) and value):
        return value
    raise _Damaged(column, value, "a text" if optional else "a non-empty text")


def _seconds(column: str, value: object, *, optional: bool = False) -> Any:
    if value is None and optional:
        return None
    if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
        return float(value)
    raise _Damaged(column, value, "a time in seconds")


def _count(column: str, value: object) -> int:
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < MOST_ATTEMPTS:
        return value
    raise _Damaged(column, value, f"a count from 0 to {MOST_ATTEMPTS - 1}")


def _bytes(column: str, value: object) -> bytes:
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value)
    raise _Damaged(column, value, "bytes")


def shown_id(value: object) -> str:
    """A stored thread id as a message shows it: quoted, cut, whatever type it has."""
    return repr(value)[:80]


def queued_row(values: Sequence[Any]) -> QueuedRow:
    """A stored queue row (its `COLUMNS`), checked column by column.

    Raises:
        CheckpointError: a column holds what the queue never writes there (the
            message names the thread, the run, the column and its value, and what to do).
    """
    shown = shown_id(values[1]) if len(values) > 1 else "?"
    try:
        run_id, thread_id, seq, state, payload, base, worker, lease, attempts, *rest = values
        submitted, updated, error, graph, cancel, not_before = rest
        row = QueuedRow(
            _text("run_id", run_id), _text("thread_id", thread_id), _count("seq", seq), _state(state),
            _bytes("payload", payload), _text("base_head", base, optional=True),
            _text("worker", worker, optional=True), _seconds("lease_until", lease, optional=True),
            _count("attempts", attempts), _seconds("submitted_at", submitted),
            _seconds("updated_at", updated), _text("error", error, optional=True),
            _text("graph", graph, optional=True), _cancel(cancel),
            _seconds("not_before", not_before, optional=True),
        )  # fmt: skip
    except (_Damaged, ValueError) as exc:  # ValueError: not the queue's columns
        run = f" (run {shown_id(values[0])})" if values else ""
        msg = f"the queue row of thread {shown}{run} is damaged ({exc}); submit the run again"
        raise CheckpointError(msg) from None
    return row


def worker_row(values: Sequence[Any]) -> WorkerRow | None:
    """A stored worker row, checked; None for one the queue did not write (it is no live worker)."""
    try:
        name, started, seen, lease = values
        return WorkerRow(
            _text("worker", name), _seconds("started_at", started), _seconds("seen_at", seen),
            _seconds("lease", lease),
        )  # fmt: skip
    except (_Damaged, ValueError):
        return None
