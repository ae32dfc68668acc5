"""The runs of one thread in the queue, changed inside a caller's transaction.

These are the steps the queue and the API server compose into one transaction
each (a check and a claim, a cancel, the end of a run):

- `lock_thread`: the thread's runs are changed by one transaction at a time (PostgreSQL: a transaction
  advisory lock on the thread; SQLite: `BEGIN IMMEDIATE` holds the file's write lock already).
- `active_runs`: its runs queued or running, in order; `insert_run` adds one behind them (`seq`), taken
  at once by a worker (running, under its lease) or queued, possibly kept for one worker until its turn.
- `ask_cancel`: a queued run ends at once; a running one gets the cancel in its row (`cancel`), which its
  worker reads at its next heartbeat, stops the run, and `settle` ends it: `interrupted` (its committed
  supersteps stay) or, for a rollback, deleted with what it wrote (`_queue_rollback.py`).
- `take`: a worker holds a run; at its first take the thread's head is recorded (`base_head`, where a
  rollback returns to) with what the thread held against it (`base_items`).

Lock order, so that two transactions never wait for each other: the thread's lock, then queue rows, then
the thread's own rows (its head, the API server's thread row).
"""

# ruff: noqa: S608 - statements are fixed text with placeholders; these run in their store's transactions

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any, Final

from actorgraph.checkpoint._queue_rollback import base_items, roll_back
from actorgraph.checkpoint._queue_rows import COLUMNS, QueuedRow

__all__ = ["ActiveRun", "NewRun", "active_runs", "ask_cancel", "insert_run", "lock_thread", "settle", "take"]

_LOCK_CLASS: Final = 0x61677175  # the first key of the thread locks: "agqu"


@dataclass(frozen=True, slots=True)
class NewRun:
    """A run to add to the queue.

    Attributes:
        thread_id: its thread.
        payload: the encoded run (opaque to the queue).
        graph: the name of the graph that runs it (None: any worker of the store).
        run_id: its id (a new UUID by default).
        holder: a worker that takes it at once when its thread is free (`take_now` in `insert_run`).
        kept_for: a worker it is kept for while it waits: no other takes it until that worker's
            reservation (renewed by its heartbeat) runs out.
        lease: seconds of the holder's lease or of the reservation.
        not_before: wall-clock seconds before which no worker takes it.
    """

    thread_id: str
    payload: bytes
    graph: str | None = None
    run_id: str = field(default_factory=lambda: str(uuid.uuid4()))
    holder: str | None = None
    kept_for: str | None = None
    lease: float = 30.0
    not_before: float | None = None


@dataclass(frozen=True, slots=True)
class ActiveRun:
    """A run of the thread that has not ended: its id (as stored), state, worker and cancel asked of it."""

    run_id: Any
    state: str
    worker: Any
    cancel: Any


def lock_thread(store: Any, conn: Any, thread_id: str) -> None:
    """Hold the thread's lock until the transaction ends (PostgreSQL; SQLite's transactions hold the file)."""
    if store.dialect.name == "PostgreSQL":
        conn.execute("SELECT pg_advisory_xact_lock(%s, hashtext(%s))", (_LOCK_CLASS, thread_id))


def active_runs(store: Any, conn: Any, thread_id: str) -> list[ActiveRun]:
    """The thread's runs queued or running, in their order."""
    m = store.dialect.mark
    found = conn.execute(
        f"SELECT run_id, state, worker, cancel FROM actorgraph_queue WHERE thread_id = {m}"
        " AND state IN ('queued', 'running') ORDER BY seq",
        (thread_id,),
    ).fetchall()
    return [ActiveRun(*values) for values in found]


def _next_seq(store: Any, conn: Any, thread_id: str) -> int:
    """One more than the thread's largest `seq` (a damaged one, not a number, is passed over)."""
    m = store.dialect.mark
    last = conn.execute(
        f"SELECT seq FROM actorgraph_queue WHERE thread_id = {m} ORDER BY seq DESC LIMIT 1", (thread_id,)
    ).fetchone()
    if last is None:
        return 1
    if isinstance(last[0], int) and not isinstance(last[0], bool):
        return last[0] + 1
    every = conn.execute(f"SELECT seq FROM actorgraph_queue WHERE thread_id = {m}", (thread_id,)).fetchall()
    return 1 + max((s for (s,) in every if isinstance(s, int) and not isinstance(s, bool)), default=0)


def _head(store: Any, conn: Any, thread_id: str) -> str | None:
    found = conn.execute(store.sql.head, (thread_id,)).fetchone()
    return None if found is None else found[0]


def insert_run(store: Any, conn: Any, new: NewRun, *, take_now: bool, stamp: float) -> QueuedRow:
    """Add `new` behind the thread's runs: running for `new.holder` when `take_now`, else queued."""
    m = store.dialect.mark
    seq = _next_seq(store, conn, new.thread_id)
    state, worker, lease, attempts, base, items = "queued", new.kept_for, None, 0, None, None
    if new.kept_for is not None:
        lease = stamp + new.lease
    if take_now and new.holder is not None:
        state, worker, lease, attempts = "running", new.holder, stamp + new.lease, 1
        base = _head(store, conn, new.thread_id)
        items = base_items(conn, m, new.thread_id, base)
    conn.execute(
        f"INSERT INTO actorgraph_queue ({COLUMNS}, base_items) VALUES ({', '.join([m] * 16)})",
        (
            new.run_id, new.thread_id, seq, state, new.payload, base, worker, lease, attempts, stamp, stamp,
            None, new.graph, None, new.not_before, items,
        ),
    )  # fmt: skip
    conn.execute(
        f"UPDATE actorgraph_threads SET status = {m}, updated_at = {m} WHERE thread_id = {m}",
        (state, stamp, new.thread_id),
    )
    return QueuedRow(
        new.run_id, new.thread_id, seq, state, new.payload, base, worker, lease, attempts, stamp, stamp,
        None, new.graph, None, new.not_before,
    )  # fmt: skip


def take(  # noqa: PLR0913 - the store, its transaction, the run, and who takes it for how long
    store: Any, conn: Any, row: QueuedRow, worker: str, *, lease: float, stamp: float
) -> QueuedRow:
    """Hold `row` for `worker` (its attempts counted here, checked: SQL arithmetic could overflow)."""
    m = store.dialect.mark
    base, items = row.base_head, None
    if row.attempts == 0:
        base = _head(store, conn, row.thread_id)
        items = base_items(conn, m, row.thread_id, base)
    conn.execute(
        f"UPDATE actorgraph_queue SET state = 'running', worker = {m}, lease_until = {m}, attempts = {m},"
        f" updated_at = {m}, base_head = {m}, base_items = coalesce({m}, base_items) WHERE run_id = {m}",
        (worker, stamp + lease, row.attempts + 1, stamp, base, items, row.run_id),
    )
    conn.execute(
        f"UPDATE actorgraph_threads SET status = 'running', updated_at = {m}"
        f" WHERE thread_id = {m} AND status = 'queued'",
        (stamp, row.thread_id),
    )
    return QueuedRow(
        row.run_id, row.thread_id, row.seq, "running", row.payload, base, worker, stamp + lease,
        row.attempts + 1, row.submitted_at, stamp, None, row.graph, row.cancel, row.not_before,
    )  # fmt: skip


def ask_cancel(store: Any, conn: Any, run_id: str, action: str, stamp: float) -> str | None:
    """Ask a run to stop; its state afterwards ("running" when its worker is to stop it), None if absent.

    A queued run ends here: `interrupted`, or deleted ("deleted") for a rollback (it wrote nothing).
    A running one keeps running until its worker reads the cancel (a rollback asked once stays one).
    """
    m = store.dialect.mark
    found = conn.execute(
        f"SELECT state, cancel FROM actorgraph_queue WHERE run_id = {m}", (run_id,)
    ).fetchone()
    if found is None:
        return None
    state, asked = found
    if state == "queued":
        if action == "rollback":
            conn.execute(f"DELETE FROM actorgraph_queue WHERE run_id = {m}", (run_id,))
            return "deleted"
        conn.execute(
            f"UPDATE actorgraph_queue SET state = 'interrupted', lease_until = NULL, updated_at = {m}"
            f" WHERE run_id = {m}",
            (stamp, run_id),
        )
        return "interrupted"
    if state == "running" and asked != "rollback":
        conn.execute(f"UPDATE actorgraph_queue SET cancel = {m} WHERE run_id = {m}", (action, run_id))
    return str(state)


def settle(  # noqa: PLR0913 - the store, its transaction, the run, and how and when it ended
    store: Any, conn: Any, row: QueuedRow, state: str, *, stamp: float, error: str | None = None
) -> str:
    """End a run that stopped (`state`: how it ended), as the cancel asked of it says; how it ended then.

    A rollback deletes the run and what it wrote ("deleted"); an interrupt makes a run that was
    stopped or given back `interrupted` (a run that finished or failed first keeps its end).
    """
    m = store.dialect.mark
    if row.cancel == "rollback":
        items = conn.execute(
            f"SELECT base_items FROM actorgraph_queue WHERE run_id = {m}", (row.run_id,)
        ).fetchone()
        roll_back(store, conn, row.thread_id, row.base_head, items[0] if items else None)
        conn.execute(f"DELETE FROM actorgraph_queue WHERE run_id = {m}", (row.run_id,))
        return "deleted"
    if row.cancel == "interrupt" and state == "queued":
        state = "interrupted"
    conn.execute(
        f"UPDATE actorgraph_queue SET state = {m}, error = {m}, lease_until = NULL, updated_at = {m}"
        f" WHERE run_id = {m}",
        (state, error, stamp, row.run_id),
    )
    return state
