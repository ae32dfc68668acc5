"""The parts of resumable streams, kept in the database so a client can join from any server process.

A run started with `stream_resumable=True` writes each of its parts (the SSE
event's name and its JSON data, numbered from 0 across the run's attempts) to
`actorgraph_server_events`, a few at a time while it goes and the rest before
its end is recorded. A client that joins the run's stream
(`GET .../runs/{run_id}/stream`) with `Last-Event-ID: N` gets the parts after
N, from the process running the run or from any other one, which reads them
here until the run ends. A server sweeps the parts of runs that ended more than
`KEPT_FOR` seconds ago (an hour); deleting the run or its thread deletes them
at once. Parts of runs started without `stream_resumable` are not kept: a
client joins those only on the server process that runs them.
"""

# ruff: noqa: S608, SLF001 - statements are fixed text with placeholders; they use their store's transactions

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from actorgraph.checkpoint._store import now

__all__ = ["KEPT_FOR", "Events"]

KEPT_FOR: Final = 3600.0  # seconds the parts of an ended run's resumable stream are kept
_PAGE: Final = 500


class Events:
    """The kept parts of resumable streams in one SQL checkpointer's database (the table is the server's)."""

    def __init__(self, store: Any) -> None:
        """Read and write the parts in `store`'s database (its tables made by `Tables`)."""
        self._store = store
        self._m = store.dialect.mark

    def append(self, run_id: str, thread_id: str, parts: Sequence[tuple[int, str, bytes]]) -> None:
        """Keep `(seq, name, JSON data)` parts of a run (a part kept already is kept as it was)."""
        m, stamp = self._m, now()
        sql = (
            "INSERT INTO actorgraph_server_events (run_id, seq, thread_id, name, data, created_at)"
            f" VALUES ({m}, {m}, {m}, {m}, {m}, {m}) ON CONFLICT (run_id, seq) DO NOTHING"
        )
        rows = [(run_id, seq, thread_id, name, data, stamp) for seq, name, data in parts]
        self._store._write(
            f"keeping the stream of run {run_id}", lambda conn: self._store._many(conn, sql, rows)
        )

    def after(self, run_id: str, seq: int) -> list[tuple[int, str, bytes]]:
        """The run's kept parts numbered above `seq`, in order (a page of them)."""
        m = self._m
        sql = (
            f"SELECT seq, name, data FROM actorgraph_server_events WHERE run_id = {m} AND seq > {m}"
            f" ORDER BY seq LIMIT {_PAGE}"
        )
        found = self._store._read(f"reading the stream of run {run_id}", sql, (run_id, seq))
        return [(int(n), str(name), bytes(data)) for n, name, data in found]

    def last(self, run_id: str) -> int:
        """The number of the run's last kept part (-1 when none is kept)."""
        sql = f"SELECT max(seq) FROM actorgraph_server_events WHERE run_id = {self._m}"
        found = self._store._read(f"reading the stream of run {run_id}", sql, (run_id,))
        return -1 if not found or found[0][0] is None else int(found[0][0])

    def forget(self, run_id: str) -> None:
        """Delete the kept parts of a run (it was deleted)."""
        sql = f"DELETE FROM actorgraph_server_events WHERE run_id = {self._m}"
        self._store._write(f"deleting the stream of run {run_id}", lambda conn: conn.execute(sql, (run_id,)))

    def sweep(self, kept_for: float = KEPT_FOR) -> None:
        """Delete the parts older than `kept_for` seconds of runs that are not queued or running."""
        m = self._m
        sql = (
            f"DELETE FROM actorgraph_server_events WHERE created_at < {m} AND run_id NOT IN"
            " (SELECT run_id FROM actorgraph_queue WHERE state IN ('queued', 'running'))"
        )
        self._store._write("sweeping old streams", lambda conn: conn.execute(sql, (now() - kept_for,)))
