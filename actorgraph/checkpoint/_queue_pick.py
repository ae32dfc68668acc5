"""Which run a worker takes next: the claim's query.

The oldest queued run of the graphs the worker runs (or of none: `submit`'s) whose
thread has no run running and none queued before it, so that a thread's runs are
taken in order and never overlap; a run kept for another worker is passed by
until that worker's reservation runs out, and one not yet due waits. A running
run whose lease ran out (its worker died) is taken again. The runs kept for the
worker come first.
"""

# ruff: noqa: S608 - statements are fixed text with placeholders

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from actorgraph.checkpoint._queue_rows import COLUMNS

__all__ = ["pick"]

_FORGED_LEASE: Final = (
    366 * 86400.0
)  # a lease ending over a year from now was not written by a worker: take it


def _free(alias: str, m: str) -> str:
    """A lease (or reservation) that holds no more: none, over, or one no worker wrote (taken at once)."""
    return f"({alias}.lease_until IS NULL OR {alias}.lease_until < {m} OR {alias}.lease_until > {m})"


def pick(  # noqa: PLR0913 - the placeholder, the worker, the time, and which runs it takes
    m: str, worker: str, stamp: float, *, graphs: Sequence[str] | None, mine_only: bool, postgres: bool
) -> tuple[str, tuple[Any, ...]]:
    """The claim's query and its arguments: the oldest run a worker may take, first the ones kept for it.

    A lease or a time that cannot end (NULL, text in SQLite, NaN or Infinity) is taken, not waited for.
    """
    graph = "q.graph IS NULL" if graphs is None else f"q.graph IN ({', '.join([m] * len(graphs))})"
    due = f"(q.not_before IS NULL OR q.not_before <= {m} OR q.not_before > {m})"
    queued = f"q.state = 'queued' AND (q.worker = {m} OR {_free('q', m)}) AND {due}"
    mine = f" AND q.state = 'queued' AND q.worker = {m}" if mine_only else ""
    sql = (
        f"SELECT {', '.join('q.' + c.strip() for c in COLUMNS.split(','))} FROM actorgraph_queue q"
        f" WHERE {graph} AND (({queued}) OR (q.state = 'running' AND {_free('q', m)})){mine}"
        " AND NOT EXISTS (SELECT 1 FROM actorgraph_queue r WHERE r.thread_id = q.thread_id"
        " AND r.run_id <> q.run_id AND (r.state = 'running' OR (r.state = 'queued' AND r.seq < q.seq)))"
        f" ORDER BY CASE WHEN q.worker = {m} THEN 0 ELSE 1 END, q.submitted_at, q.run_id LIMIT 1"
        + (" FOR UPDATE SKIP LOCKED" if postgres else "")
    )
    forged = stamp + _FORGED_LEASE
    args = (
        *(graphs or ()), worker, stamp, forged, stamp, forged, stamp, forged,
        *((worker,) if mine_only else ()), worker,
    )  # fmt: skip
    return sql, args
