"""Counting what a store sends to its database: statements, transactions and round trips.

Used by the tests that pin a durable superstep's cost (`tests/checkpoint/test_superstep_counts.py`)
and by `benchmarks.persistence`. It watches the store's connection from outside the
product's code: SQLite's trace callback (every statement SQLite runs, `COMMIT` included),
and libpq's protocol trace on PostgreSQL, where a round trip is one `ReadyForQuery`
from the server (each Sync of a pipeline, each simple query) and a statement one
`Execute` or `Query` from the client.
"""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["Counts", "counting"]


@dataclass
class Counts:
    """What a store sent while it was watched.

    Attributes:
        statements: statements run (SQLite: every one, `BEGIN` and `COMMIT` included;
            PostgreSQL: every `Execute` and simple `Query`).
        transactions: transactions committed (SQLite: `COMMIT`s; PostgreSQL: round
            trips that wrote, each a transaction of its own).
        round_trips: times the client waited for the server (PostgreSQL); SQLite runs
            in the process, where this counts the statements.
        pages: pages SQLite appended to its write-ahead log (0 on PostgreSQL).
    """

    statements: int = 0
    transactions: int = 0
    round_trips: int = 0
    pages: int = 0


@contextlib.contextmanager
def counting(store: Any) -> Iterator[Counts]:
    """Count what `store` (a `SqliteCheckpointer` or `PostgresCheckpointer`) sends inside the block."""
    counts = Counts()
    if store.dialect.name == "SQLite":
        with _sqlite(store, counts):
            yield counts
    else:
        with _postgres(store, counts):
            yield counts


@contextlib.contextmanager
def _sqlite(store: Any, counts: Counts) -> Iterator[None]:
    conn = store._conn

    def seen(sql: str) -> None:
        counts.statements += 1
        counts.round_trips += 1
        counts.transactions += sql.startswith("COMMIT")

    wal = Path(f"{store._path}-wal")
    frames = conn.execute("PRAGMA wal_autocheckpoint").fetchone()[0]
    conn.execute("PRAGMA wal_autocheckpoint=0")  # the log only grows while counted
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    before = wal.stat().st_size if wal.exists() else 0
    conn.set_trace_callback(seen)
    try:
        yield
    finally:
        conn.set_trace_callback(None)
        after = wal.stat().st_size if wal.exists() else 0
        page = conn.execute("PRAGMA page_size").fetchone()[0]
        counts.pages = (after - before) // (page + 24)  # a frame: a 24-byte header and the page
        conn.execute(f"PRAGMA wal_autocheckpoint={int(frames)}")


@contextlib.contextmanager
def _postgres(store: Any, counts: Counts) -> Iterator[None]:
    from psycopg import pq

    conn = store._connection()
    with tempfile.TemporaryFile("w+") as log:
        conn.pgconn.trace(log.fileno())
        conn.pgconn.set_trace_flags(pq.Trace.SUPPRESS_TIMESTAMPS | pq.Trace.REGRESS_MODE)
        try:
            yield
        finally:
            conn.pgconn.untrace()
        log.seek(0)
        writing = False
        for line in log:
            direction, _, rest = line.partition("\t")
            message = rest.split("\t")[1] if "\t" in rest else ""
            if direction == "F" and message in ("Execute", "Query"):
                counts.statements += 1
            if direction == "B" and message == "CommandComplete":  # its tag: "INSERT 0 1", "SELECT 1"
                writing = writing or any(w in line for w in ("INSERT", "UPDATE", "DELETE"))
            if direction == "B" and message == "ReadyForQuery":
                counts.round_trips += 1
                counts.transactions += writing
                writing = False
