"""The queue of submitted runs, in the checkpointer's own SQL database, and the workers that take them.

A submitted run is one row of `actorgraph_queue`, keyed by its thread: a
thread has at most one run queued or running, so two workers never run one
thread at once. A worker takes a row in one transaction (PostgreSQL:
`SELECT ... FOR UPDATE SKIP LOCKED`, so workers on other machines pass each
other's rows by; SQLite: `BEGIN IMMEDIATE`, the file's write lock) and holds a
lease on it (`lease_until`, wall-clock seconds), renewed by its heartbeat. A
row whose lease ran out (its worker died) is taken again by the next worker
that looks, which resumes the thread from its checkpoint. The guard against a
double commit is not the lease but the thread's head: moving it is a
compare-and-set, so a worker that lost its lease and still runs cannot commit
a superstep its successor committed.

Workers register in `actorgraph_workers` with a heartbeat, so front ends know
whether anyone will take a queued resume (`live_workers`).
"""

# ruff: noqa: S608, SLF001 - statements are fixed text with placeholders; the queue runs in its store's transactions

from __future__ import annotations

import logging
import math
import os
from collections.abc import Sequence
from typing import Any

from actorgraph._model.errors import CheckpointError, ConfigError
from actorgraph.checkpoint._protocol import Checkpointer
from actorgraph.checkpoint._queue_rows import (
    QUEUE_STATES,
    QueuedRow,
    WorkerRow,
    queued_row,
    shown_id,
    worker_row,
)
from actorgraph.checkpoint._store import check_stored_thread_id, now

__all__ = ["QUEUE_STATES", "QueuedRow", "RunQueue", "WorkerRow", "check_lease", "run_queue", "worker_name"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS actorgraph_queue (
    thread_id {key} PRIMARY KEY, state {text} NOT NULL, payload {blob} NOT NULL, base_head {key},
    worker {text}, lease_until {real}, attempts {int} NOT NULL, submitted_at {real} NOT NULL,
    updated_at {real} NOT NULL, error {text}
);
CREATE INDEX IF NOT EXISTS actorgraph_queue_by_state ON actorgraph_queue (state, submitted_at);
CREATE TABLE IF NOT EXISTS actorgraph_workers (
    worker {key} PRIMARY KEY, started_at {real} NOT NULL, seen_at {real} NOT NULL, lease {real} NOT NULL
)
"""

_COLUMNS = (
    "thread_id, state, payload, base_head, worker, lease_until, attempts, submitted_at, updated_at, error"
)
_ERROR_TEXT = 2000  # characters of a failed run's error kept in its row
_LONGEST_LEASE = 86400.0  # a day
_FORGED_LEASE = 366 * 86400.0  # a lease ending over a year from now was not written by a worker: take it
_UNREADABLE_PER_CLAIM = 100  # damaged rows one claim marks failed before it lets the transaction go

log = logging.getLogger("actorgraph.queue")


def worker_name() -> str:
    """`host:pid`, the default name of a worker process."""
    import socket  # noqa: PLC0415 - only workers need it, and `import actorgraph` stays slim

    return f"{socket.gethostname()}:{os.getpid()}"


class RunQueue:
    """The run queue and the worker registry of one SQL checkpointer (SQLite or PostgreSQL)."""

    def __init__(self, store: Any) -> None:
        """Use `store`'s database (tables are created on first use). Prefer `run_queue(store)`."""
        self._store = store
        dialect = store.dialect
        self._m = dialect.mark
        self._postgres = dialect.name == "PostgreSQL"
        self._ddl = [
            s for s in _SCHEMA.format(key=dialect.key, text=dialect.text, real=dialect.real,
                                      int=dialect.int, blob=dialect.blob).split(";") if s.strip()
        ]  # fmt: skip
        self._ready = False

    def _write(self, op: str, work: Any) -> Any:
        if not self._ready:
            self._store._write("creating the run queue", self._create)
            self._ready = True
        return self._store._write(op, work)

    def _create(self, conn: Any) -> None:
        lock = self._store.dialect.lock_schema
        if lock:
            conn.execute(lock)
        for statement in self._ddl:
            conn.execute(statement)

    def _read(self, op: str, sql: str, args: Sequence[Any]) -> list[Any]:
        if not self._ready and not self._store.readonly:
            self._write("creating the run queue", lambda _conn: None)
        if not self._has_tables():
            return []
        return list(self._store._read(op, sql, args))

    def _has_tables(self) -> bool:
        if self._ready:
            return True
        found = self._store._query(
            "reading the run queue", lambda c: self._store._has_table(c, "actorgraph_queue")
        )
        self._ready = bool(found)
        return self._ready

    # -- submitting ----------------------------------------------------------------------------

    def enqueue(self, thread_id: str, payload: bytes, *, base_head: str | None) -> None:
        """Queue a run of `thread_id`; its thread's listed status becomes "queued".

        Raises:
            CheckpointError: the thread has a run queued or running already (it is
                not queued twice), or the database failed.
        """
        check_stored_thread_id(thread_id)
        m, stamp = self._m, now()

        def work(conn: Any) -> None:
            found = conn.execute(
                f"SELECT state, worker FROM actorgraph_queue WHERE thread_id = {m}{self._lock()}",
                (thread_id,),
            ).fetchone()
            if found is not None and found[0] in ("queued", "running"):
                held = f" by worker {found[1]}" if found[0] == "running" else ""
                msg = (
                    f"thread {thread_id!r} has a run {found[0]}{held} already; wait for it to stop "
                    "(handle.wait()) before submitting another"
                )
                raise CheckpointError(msg)
            conn.execute(f"DELETE FROM actorgraph_queue WHERE thread_id = {m}", (thread_id,))
            conn.execute(
                f"INSERT INTO actorgraph_queue ({_COLUMNS})"
                f" VALUES ({m}, 'queued', {m}, {m}, NULL, NULL, 0, {m}, {m}, NULL)",
                (thread_id, payload, base_head, stamp, stamp),
            )
            conn.execute(
                f"UPDATE actorgraph_threads SET status = 'queued', updated_at = {m} WHERE thread_id = {m}",
                (stamp, thread_id),
            )

        self._write(f"queueing a run of thread {thread_id!r}", work)

    def _lock(self) -> str:
        return " FOR UPDATE" if self._postgres else ""

    # -- working -------------------------------------------------------------------------------

    def claim(self, worker: str, lease: float) -> QueuedRow | None:
        """Take the oldest queued run, or one whose worker's lease ran out; None when there is none.

        A row the queue did not write (a column holding what it never writes
        there, a lease that cannot end) is marked failed on the way, with the
        reason naming its thread and column, and logged; the claim goes on to the
        next row, so one damaged row never stops the workers.
        """
        m, stamp = self._m, now()
        skip = " FOR UPDATE SKIP LOCKED" if self._postgres else ""
        pick = (
            f"SELECT {_COLUMNS} FROM actorgraph_queue WHERE state = 'queued' OR (state = 'running' AND"
            f" (lease_until IS NULL OR lease_until < {m} OR lease_until > {m}))"
            f" ORDER BY submitted_at, thread_id LIMIT 1{skip}"
        )  # a lease that cannot end (NULL, text in SQLite, NaN or Infinity) is taken, not waited for
        unreadable: list[tuple[Any, str]] = []

        def work(conn: Any) -> QueuedRow | None:
            unreadable.clear()  # a retried transaction starts over
            for _ in range(_UNREADABLE_PER_CLAIM):
                found = conn.execute(pick, (stamp, stamp + _FORGED_LEASE)).fetchone()
                if found is None:
                    return None
                try:
                    row = queued_row(found)
                except CheckpointError as exc:
                    unreadable.append((found[0], str(exc)))
                    self._fail_unreadable(conn, found[0], str(exc), worker, stamp)
                    continue
                return self._take(conn, row, worker, stamp, lease)
            return None

        result: QueuedRow | None = self._write("taking a queued run", work)
        for key, reason in unreadable:  # once the transaction holds
            thread_id = key if isinstance(key, str) else shown_id(key)
            fields = {"worker": worker, "thread_id": thread_id, "error": reason}
            log.warning("queued run unreadable: marked failed", extra=fields)
        return result

    def _take(self, conn: Any, row: QueuedRow, worker: str, stamp: float, lease: float) -> QueuedRow:
        """Hold `row` for `worker` (its attempts counted here, checked: SQL arithmetic could overflow)."""
        m = self._m
        conn.execute(
            f"UPDATE actorgraph_queue SET state = 'running', worker = {m}, lease_until = {m},"
            f" attempts = {m}, updated_at = {m} WHERE thread_id = {m}",
            (worker, stamp + lease, row.attempts + 1, stamp, row.thread_id),
        )
        conn.execute(
            f"UPDATE actorgraph_threads SET status = 'running', updated_at = {m}"
            f" WHERE thread_id = {m} AND status = 'queued'",
            (stamp, row.thread_id),
        )
        return QueuedRow(
            row.thread_id, "running", row.payload, row.base_head, worker, stamp + lease,
            row.attempts + 1, row.submitted_at, stamp, None,
        )  # fmt: skip

    def _fail_unreadable(self, conn: Any, key: Any, reason: str, worker: str, stamp: float) -> None:
        """Mark a damaged row failed with why, so no worker takes it again (its key as stored, even NULL)."""
        m = self._m
        where = "thread_id IS NULL" if key is None else f"thread_id = {m}"
        conn.execute(
            f"UPDATE actorgraph_queue SET state = 'failed', error = {m}, worker = {m}, lease_until = NULL,"
            f" updated_at = {m} WHERE {where}",
            (reason[:_ERROR_TEXT], worker, stamp, *(() if key is None else (key,))),
        )

    def heartbeat(self, worker: str, lease: float, thread_ids: Sequence[str]) -> set[str]:
        """Record that `worker` lives and renew its leases; return the threads whose lease it lost."""
        m, stamp = self._m, now()

        def work(conn: Any) -> set[str]:
            conn.execute(
                f"INSERT INTO actorgraph_workers VALUES ({m}, {m}, {m}, {m})"
                " ON CONFLICT (worker) DO UPDATE SET seen_at = excluded.seen_at, lease = excluded.lease",
                (worker, stamp, stamp, lease),
            )
            lost: set[str] = set()
            for thread_id in thread_ids:
                renewed = conn.execute(
                    f"UPDATE actorgraph_queue SET lease_until = {m} WHERE thread_id = {m}"
                    f" AND worker = {m} AND state = 'running'",
                    (stamp + lease, thread_id, worker),
                )
                if renewed.rowcount != 1:
                    lost.add(thread_id)
            return lost

        result: set[str] = self._write(f"renewing the leases of worker {worker}", work)
        return result

    def finish(self, thread_id: str, worker: str, *, state: str, error: str | None = None) -> bool:
        """Mark the run stopped ("done"), "failed" or "queued" again (let go); False if the lease was lost."""
        if state not in ("done", "failed", "queued"):
            raise ConfigError(f"a run finishes as 'done', 'failed' or 'queued', not {state!r}")
        m, stamp = self._m, now()
        text = None if error is None else error[:_ERROR_TEXT]

        def work(conn: Any) -> bool:
            changed = conn.execute(
                f"UPDATE actorgraph_queue SET state = {m}, error = {m}, lease_until = NULL, updated_at = {m}"
                f" WHERE thread_id = {m} AND worker = {m} AND state = 'running'",
                (state, text, stamp, thread_id, worker),
            )
            return bool(changed.rowcount == 1)

        result: bool = self._write(f"finishing the queued run of thread {thread_id!r}", work)
        return result

    def leave(self, worker: str) -> None:
        """Remove `worker` from the registry (it stops)."""
        self._write(
            f"removing worker {worker}",
            lambda conn: conn.execute(f"DELETE FROM actorgraph_workers WHERE worker = {self._m}", (worker,)),
        )

    # -- reading -------------------------------------------------------------------------------

    def get(self, thread_id: str) -> QueuedRow | None:
        """The queue row of `thread_id`, or None."""
        sql = f"SELECT {_COLUMNS} FROM actorgraph_queue WHERE thread_id = {self._m}"
        found = self._read(f"reading the queued run of thread {thread_id!r}", sql, (thread_id,))
        return queued_row(found[0]) if found else None

    def state_of(self, thread_id: str) -> str | None:
        """The state of `thread_id`'s queued run, or None; creates no table in a store never queued to."""
        if not self._has_tables():
            return None
        sql = f"SELECT state FROM actorgraph_queue WHERE thread_id = {self._m}"
        found = self._store._read(f"reading the queued run of thread {thread_id!r}", sql, (thread_id,))
        return str(found[0][0]) if found else None

    def rows(self, *, states: Sequence[str] = ("queued", "running"), limit: int = 1000) -> list[QueuedRow]:
        """Queue rows in these states, oldest submission first (at most `limit`); damaged rows are skipped."""
        marks = ", ".join([self._m] * len(states))
        sql = (
            f"SELECT {_COLUMNS} FROM actorgraph_queue WHERE state IN ({marks})"
            f" ORDER BY submitted_at, thread_id LIMIT {self._m}"
        )
        rows = []
        for values in self._read("listing queued runs", sql, (*states, limit)):
            try:
                rows.append(queued_row(values))
            except CheckpointError:
                continue
        return rows

    def live_workers(self, *, grace: float = 5.0) -> list[WorkerRow]:
        """The workers whose last heartbeat is younger than their lease plus `grace` seconds."""
        m = self._m
        sql = (
            "SELECT worker, started_at, seen_at, lease FROM actorgraph_workers"
            f" WHERE seen_at + lease + {m} >= {m}"
        )
        found = self._read("listing workers", sql, (grace, now()))
        return [row for values in found if (row := worker_row(values)) is not None]  # damaged: not live


def run_queue(checkpointer: Checkpointer) -> RunQueue:
    """The run queue of a SQL checkpointer (`SqliteCheckpointer` or `PostgresCheckpointer`).

    Raises:
        ConfigError: the checkpointer keeps no SQL database (a `MemoryCheckpointer`
            lives in one process, so no worker could take its runs).
    """
    dialect = getattr(checkpointer, "dialect", None)
    if dialect is None or not hasattr(checkpointer, "_write"):
        kind = type(checkpointer).__name__
        msg = (
            f"queued runs need a SqliteCheckpointer (workers on one machine) or a PostgresCheckpointer "
            f"(workers anywhere); {kind} keeps no database workers can share"
        )
        raise ConfigError(msg)
    queue = getattr(checkpointer, "_run_queue", None)
    if not isinstance(queue, RunQueue):
        queue = RunQueue(checkpointer)
        checkpointer._run_queue = queue  # type: ignore[attr-defined]
    return queue


def check_lease(lease: object) -> float:
    """A lease in seconds, checked: a finite number from 1 to a day.

    Raises:
        ConfigError: anything else.
    """
    if (
        isinstance(lease, bool)
        or not isinstance(lease, int | float)
        or not math.isfinite(lease)
        or not 1 <= lease <= _LONGEST_LEASE
    ):
        msg = f"lease={lease!r}: give the lease in seconds, a number from 1 to 86400 (default 30)"
        raise ConfigError(msg)
    return float(lease)
