"""Reading the run queue: a thread's runs, one run, the rows in some states, the live workers.

A store opened read-only never creates the queue's tables, and reads a queue of
an earlier actorgraph's shape (one row per thread, moved into today's shape by
the first store that opens it for writing) as empty.
"""

# ruff: noqa: S608, SLF001 - statements are fixed text with placeholders; the queue reads through its store

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from actorgraph._model.errors import CheckpointError
from actorgraph.checkpoint._queue_rows import COLUMNS, QueuedRow, WorkerRow, queued_row, worker_row
from actorgraph.checkpoint._queue_schema import create_queue, has_queue
from actorgraph.checkpoint._store import now

__all__ = ["QueueReader"]


class QueueReader:
    """The reading half of the run queue of one SQL checkpointer (its tables made, or moved, on first use)."""

    def __init__(self, store: Any) -> None:
        """Use `store`'s database (tables are created on first use). Prefer `run_queue(store)`."""
        self._store = store
        self._m: str = store.dialect.mark
        self._postgres = store.dialect.name == "PostgreSQL"
        self._ready = False

    @property
    def store(self) -> Any:
        """The checkpointer whose database holds the queue."""
        return self._store

    def _write(self, op: str, work: Any) -> Any:
        """`work(conn)` in one transaction of the store, the queue's tables made (or moved) first."""
        if not self._ready:
            self._store._write("creating the run queue", self._create)
            self._ready = True
        return self._store._write(op, work)

    def _create(self, conn: Any) -> None:
        lock = self._store.dialect.lock_schema
        if lock:
            conn.execute(lock)
        create_queue(self._store, conn)

    def _read(self, op: str, sql: str, args: Sequence[Any]) -> list[Any]:
        if not self._ready and not self._store.readonly:
            self._write("creating the run queue", lambda _conn: None)
        if not self._has_tables():
            return []
        return list(self._store._read(op, sql, args))

    def _has_tables(self) -> bool:
        if self._ready:
            return True
        found = self._store._query("reading the run queue", lambda c: has_queue(self._store, c))
        self._ready = bool(found)
        return self._ready

    def _rows(self, op: str, sql: str, args: Sequence[Any]) -> list[QueuedRow]:
        """The rows a query finds, checked; damaged rows are left out."""
        rows = []
        for values in self._read(op, sql, args):
            try:
                rows.append(queued_row(values))
            except CheckpointError:
                continue
        return rows

    def get(self, thread_id: str) -> QueuedRow | None:
        """The newest run of `thread_id` (the last queued), or None.

        Raises:
            CheckpointError: its row is damaged (naming the column).
        """
        sql = f"SELECT {COLUMNS} FROM actorgraph_queue WHERE thread_id = {self._m} ORDER BY seq DESC LIMIT 1"
        found = self._read(f"reading the queued run of thread {thread_id!r}", sql, (thread_id,))
        return queued_row(found[0]) if found else None

    def run(self, run_id: str) -> QueuedRow | None:
        """The run `run_id`, or None.

        Raises:
            CheckpointError: its row is damaged (naming the column).
        """
        sql = f"SELECT {COLUMNS} FROM actorgraph_queue WHERE run_id = {self._m}"
        found = self._read(f"reading queued run {run_id!r}", sql, (run_id,))
        return queued_row(found[0]) if found else None

    def state_of(self, thread_id: str) -> str | None:
        """The state of the newest run of `thread_id`, or None; creates no table in a store without one."""
        if not self._has_tables():
            return None
        sql = f"SELECT state FROM actorgraph_queue WHERE thread_id = {self._m} ORDER BY seq DESC LIMIT 1"
        found = self._store._read(f"reading the queued run of thread {thread_id!r}", sql, (thread_id,))
        return None if not found else found[0][0]

    def run_state(self, run_id: str) -> Any:
        """The state of run `run_id` as stored (None: no such run), read without its other columns."""
        if not self._has_tables():
            return None
        sql = f"SELECT state FROM actorgraph_queue WHERE run_id = {self._m}"
        found = self._store._read(f"reading queued run {run_id!r}", sql, (run_id,))
        return None if not found else found[0][0]

    def rows(self, *, states: Sequence[str] = ("queued", "running"), limit: int = 1000) -> list[QueuedRow]:
        """Queue rows in these states, oldest submission first (at most `limit`); damaged rows are skipped."""
        marks = ", ".join([self._m] * len(states))
        sql = (
            f"SELECT {COLUMNS} FROM actorgraph_queue WHERE state IN ({marks})"
            f" ORDER BY submitted_at, run_id LIMIT {self._m}"
        )
        return self._rows("listing queued runs", sql, (*states, limit))

    def runs_of(
        self, thread_id: str, *, states: Sequence[str] | None = None, limit: int = 100, offset: int = 0
    ) -> list[QueuedRow]:
        """The runs of a thread that name their graph (the API server's), newest first, damaged ones out."""
        m = self._m
        where, args = f"thread_id = {m} AND graph IS NOT NULL", [thread_id]
        if states is not None:
            where += f" AND state IN ({', '.join([m] * len(states))})"
            args.extend(states)
        sql = f"SELECT {COLUMNS} FROM actorgraph_queue WHERE {where} ORDER BY seq DESC LIMIT {m} OFFSET {m}"
        return self._rows(f"listing the runs of thread {thread_id!r}", sql, (*args, limit, offset))

    def live_workers(self, *, grace: float = 5.0) -> list[WorkerRow]:
        """The workers whose last heartbeat is younger than their lease plus `grace` seconds."""
        m = self._m
        sql = (
            "SELECT worker, started_at, seen_at, lease FROM actorgraph_workers"
            f" WHERE seen_at + lease + {m} >= {m}"
        )
        found = self._read("listing workers", sql, (grace, now()))
        return [row for values in found if (row := worker_row(values)) is not None]  # damaged: not live
