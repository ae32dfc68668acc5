"""The run queue's tables, and the move of a queue written by an earlier actorgraph into today's shape.

Until the API server's background runs, `actorgraph_queue` held one row per
thread (keyed by `thread_id`). It now holds runs: keyed by `run_id`, with the
thread's order (`seq`), the graph that runs it, a cancel asked of it, and the
time before which no worker takes it. A database written by an earlier
actorgraph may hold a queue of the old shape with runs still queued: the first
store that opens the queue for writing moves each of its rows into the new
table (a new run id, first of its thread), in the transaction that creates the
tables and under the schema lock, so every run queued before the upgrade is
still taken, once. Workers of an earlier actorgraph must be stopped first: they
read the old columns.
"""

# ruff: noqa: S608 - statements are fixed text

from __future__ import annotations

import uuid
from typing import Any, Final

from actorgraph.checkpoint._queue_rows import COLUMNS

__all__ = ["create_queue", "has_queue", "queue_ddl"]

_SCHEMA: Final = """
CREATE TABLE IF NOT EXISTS actorgraph_queue (
    run_id {key} NOT NULL PRIMARY KEY, thread_id {key} NOT NULL, seq {int} NOT NULL, state {text} NOT NULL,
    payload {blob} NOT NULL, base_head {key}, worker {text}, lease_until {real}, attempts {int} NOT NULL,
    submitted_at {real} NOT NULL, updated_at {real} NOT NULL, error {text}, graph {text}, cancel {text},
    not_before {real}, base_items {text}
);
CREATE UNIQUE INDEX IF NOT EXISTS actorgraph_queue_by_thread ON actorgraph_queue (thread_id, seq);
CREATE INDEX IF NOT EXISTS actorgraph_queue_by_state ON actorgraph_queue (state, submitted_at);
CREATE TABLE IF NOT EXISTS actorgraph_workers (
    worker {key} PRIMARY KEY, started_at {real} NOT NULL, seen_at {real} NOT NULL, lease {real} NOT NULL
)
"""
_OLD_COLUMNS: Final = (
    "thread_id, state, payload, base_head, worker, lease_until, attempts, submitted_at, updated_at, error"
)
_MOVING: Final = "actorgraph_queue_moving"


def queue_ddl(dialect: Any, table: str = "actorgraph_queue") -> list[str]:
    """The statements that create the queue's tables (and its indexes) in `dialect`'s spelling."""
    ddl = _SCHEMA.format(
        key=dialect.key, text=dialect.text, real=dialect.real, int=dialect.int, blob=dialect.blob
    )
    if table != "actorgraph_queue":  # the new table of a move: only its CREATE TABLE
        ddl = ddl.split(";", 1)[0].replace("actorgraph_queue", table, 1)
    return [s for s in ddl.split(";") if s.strip()]


def _columns(conn: Any, table: str) -> set[str]:
    """The column names of `table` (read from an empty result, the same way on both databases)."""
    cursor = conn.execute(f"SELECT * FROM {table} LIMIT 0")
    try:
        return {str(d[0]).lower() for d in cursor.description or ()}
    finally:
        cursor.close()


def has_queue(store: Any, conn: Any) -> bool:
    """Whether the database holds a queue of today's shape (an earlier one is moved on the first write)."""
    return bool(store._has_table(conn, "actorgraph_queue")) and "run_id" in _columns(conn, "actorgraph_queue")  # noqa: SLF001


def create_queue(store: Any, conn: Any) -> None:
    """Create the queue's tables, first moving the rows of an old-shaped queue into the new table.

    Runs in the caller's transaction, which holds the schema lock (PostgreSQL) or the
    file's write lock (SQLite), so one process moves them and the others find it done.
    """
    dialect = store.dialect
    if store._has_table(conn, "actorgraph_queue") and "run_id" not in _columns(conn, "actorgraph_queue"):  # noqa: SLF001
        _move(conn, dialect)
    for statement in queue_ddl(dialect):
        conn.execute(statement)


def _move(conn: Any, dialect: Any) -> None:
    """Copy each row of the old queue into a new table (as stored: a damaged row stays damaged), swap them."""
    conn.execute(f"DROP TABLE IF EXISTS {_MOVING}")
    for statement in queue_ddl(dialect, _MOVING):
        conn.execute(statement)
    m = dialect.mark
    insert = f"INSERT INTO {_MOVING} ({COLUMNS}) VALUES ({', '.join([m] * 15)})"
    for thread_id, state, payload, base, worker, lease, attempts, *rest in conn.execute(
        f"SELECT {_OLD_COLUMNS} FROM actorgraph_queue"
    ).fetchall():
        if thread_id is None:  # SQLite let a key be NULL: no run can be found for it
            continue
        submitted, updated, error = rest
        values = (str(uuid.uuid4()), thread_id, 1, state, payload, base, worker, lease, attempts)
        conn.execute(insert, (*values, submitted, updated, error, None, None, None))
    conn.execute("DROP TABLE actorgraph_queue")  # its indexes go with it
    conn.execute(f"ALTER TABLE {_MOVING} RENAME TO actorgraph_queue")
