"""Durable supersteps: each store and durability beside LangGraph's savers and the raw-commit floor.

`python -m benchmarks --only persist` (or `python -m benchmarks.persistence [--repeat N] [--stores
sqlite,postgres] [--quick]`). Four workloads (the loop, the chain, the fan-out and Send) run on
SQLite (a file, WAL, `synchronous=NORMAL`: the checkpointer's own settings) and on PostgreSQL (the
tests' throwaway server, `tests/pg_server.py`), with durability "sync", "async" (actorgraph's
"step", which the LangGraph server API also calls "async") and "exit", beside LangGraph's
`SqliteSaver` and `PostgresSaver` on the same database.

The **floor** is what the durable work cannot cost less than: one raw commit per superstep (and
one for the input) of the bytes actorgraph stored, on the same database, with the same settings:
an `INSERT` of one row of those bytes in its own transaction (SQLite: `BEGIN IMMEDIATE`, the
insert, `COMMIT`; PostgreSQL: one autocommitted statement, one round trip). Candidates alternate
within each round (ours, LangGraph's, the floor), and each figure is the median over the rounds;
the ratios are taken within the run. The counts (transactions and, on PostgreSQL, round trips per
superstep) come from `tests/store_counts.py`, which watches the store's connection from outside.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import itertools
import os
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from actorgraph.checkpoint.postgres import PostgresCheckpointer
from actorgraph.checkpoint.sqlite import SqliteCheckpointer, wal_connect
from benchmarks import durable_graphs
from benchmarks.durable_graphs import SHAPES, Shape

__all__ = ["Measured", "main", "markdown", "measure", "rows"]

TESTS = Path(__file__).resolve().parents[1] / "tests"
MODES = (("sync", "sync"), ("async", "step"), ("exit", "exit"))  # LangGraph's name, actorgraph's
_ids = itertools.count()


@dataclass(frozen=True)
class Measured:
    """One row: a workload on a store with a durability; µs per unit of each candidate."""

    shape: str
    unit: str
    store: str
    durability: str
    ours: float
    theirs: float | None
    floor: float | None
    transactions: float | None
    round_trips: float | None


class _Database:
    """One database of a kind: stores, LangGraph savers and raw commits on it."""

    def __init__(self, kind: str, folder: Path, dsn: str = "") -> None:
        self.kind = kind
        self.folder = folder
        self.dsn = dsn

    def store(self) -> Any:
        if self.kind == "sqlite":
            return SqliteCheckpointer(self.folder / f"ag{next(_ids)}.db")
        return PostgresCheckpointer(self.dsn)

    def saver(self) -> Any:
        if self.kind == "sqlite":
            from langgraph.checkpoint.sqlite import SqliteSaver

            conn = sqlite3.connect(self.folder / f"lg{next(_ids)}.db", check_same_thread=False)
            return SqliteSaver(conn)
        import psycopg
        from langgraph.checkpoint.postgres import PostgresSaver
        from psycopg.rows import dict_row

        conn = psycopg.connect(self.dsn, autocommit=True, prepare_threshold=0, row_factory=dict_row)
        saver = PostgresSaver(conn)
        saver.setup()
        return saver

    def raw(self, size: int) -> Callable[[int], None]:
        """Commits `n` rows of `size` bytes, each in its own transaction, as `raw(n)`."""
        payload = os.urandom(size)
        if self.kind == "sqlite":
            conn = wal_connect(self.folder / f"raw{next(_ids)}.db", 5.0)
            conn.execute("CREATE TABLE raw (k TEXT PRIMARY KEY, v BLOB NOT NULL)")

            def commits(n: int) -> None:
                for _ in range(n):
                    conn.execute("BEGIN IMMEDIATE")
                    conn.execute("INSERT INTO raw VALUES (?, ?)", (f"{next(_ids):012d}", payload))
                    conn.execute("COMMIT")

            return commits
        import psycopg

        pg = psycopg.connect(self.dsn, autocommit=True)
        table = f"raw{next(_ids)}"
        pg.execute(f"CREATE TABLE {table} (k text PRIMARY KEY, v bytea NOT NULL)")

        def round_trips(n: int) -> None:
            for _ in range(n):
                pg.execute(f"INSERT INTO {table} VALUES (%s, %s)", (f"{next(_ids):012d}", payload))  # noqa: S608

        return round_trips


@contextlib.contextmanager
def _databases(kinds: list[str]) -> Iterator[list[_Database]]:
    with tempfile.TemporaryDirectory(prefix="ag-durable-") as tmp, contextlib.ExitStack() as stack:
        found = []
        for kind in kinds:
            if kind == "sqlite":
                found.append(_Database(kind, Path(tmp)))
                continue
            sys.path.insert(0, str(TESTS))
            server = stack.enter_context(importlib.import_module("pg_server").PostgresServer())
            found.append(_Database(kind, Path(tmp), server.dsn()))
        yield found


def _counted(db: _Database, shape: Shape) -> tuple[int, float, float]:
    """Bytes actorgraph stores per run (durability sync), and transactions and round trips per superstep."""
    store_counts = importlib.import_module("store_counts")
    store = db.store()
    sizes = durable_graphs.bytes_stored(store)
    app = shape.ours().compile(store)
    try:
        app.invoke(shape.state(), thread_id=f"w{next(_ids)}", durability="sync")
        sizes.clear()
        with store_counts.counting(store) as counts:
            app.invoke(shape.state(), thread_id=f"c{next(_ids)}", durability="sync")
    finally:
        app.close()
        store.close()
    steps = shape.supersteps
    return sum(sizes), counts.transactions / steps, counts.round_trips / steps


def measure(db: _Database, shape: Shape, repeat: int, have_langgraph: bool) -> list[Measured]:
    """The rows of one workload on one database: every durability, alternating within rounds."""
    sys.path.insert(0, str(TESTS))
    stored, transactions, trips = _counted(db, shape)
    commits = shape.supersteps + 1  # and the input's checkpoint
    floor = db.raw(max(1, stored // commits))
    out = []
    for theirs_name, ours_name in MODES:
        store = db.store()
        app = shape.ours().compile(store)
        candidates: dict[str, Callable[[], object]] = {
            "ours": lambda app=app, d=ours_name: app.invoke(
                shape.state(), thread_id=f"t{next(_ids)}", durability=d
            ),
            "floor": lambda: floor(commits),
        }
        if have_langgraph:
            graph = shape.theirs().compile(checkpointer=db.saver())
            candidates["theirs"] = lambda g=graph, d=theirs_name: g.invoke(
                shape.lg_state(),
                {"configurable": {"thread_id": f"t{next(_ids)}"}, "recursion_limit": shape.supersteps + 10},
                durability=d,
            )
        times = _rounds(candidates, repeat)
        app.close()
        store.close()
        per = {k: v / shape.units * 1e6 for k, v in times.items()}
        sync = theirs_name == "sync"
        out.append(
            Measured(
                shape.name,
                shape.unit,
                "SQLite" if db.kind == "sqlite" else "PostgreSQL",
                theirs_name,
                per["ours"],
                per.get("theirs"),
                per["floor"] if sync else None,
                transactions if sync else None,
                trips if sync and db.kind == "postgres" else None,
            )
        )
    return out


def _rounds(candidates: dict[str, Callable[[], object]], repeat: int) -> dict[str, float]:
    """Median seconds of each candidate over `repeat` rounds, after a warm-up; one run of each per round."""
    for run in candidates.values():
        run()
    samples: dict[str, list[float]] = {k: [] for k in candidates}
    for _ in range(repeat):
        for name, run in candidates.items():
            start = time.perf_counter()
            run()
            samples[name].append(time.perf_counter() - start)
    return {k: statistics.median(v) for k, v in samples.items()}


def in_memory(shape: Shape, repeat: int, have_langgraph: bool) -> list[Measured]:
    """The loop without a checkpointer, and with the memory stores (durability sync): the engine's share."""
    from actorgraph.checkpoint.memory import MemoryCheckpointer

    out = []
    for label, store in (("none", None), ("memory", MemoryCheckpointer())):
        app = shape.ours().compile(store)
        options: dict[str, Any] = {} if store is None else {"durability": "sync"}
        candidates: dict[str, Callable[[], object]] = {
            "ours": lambda app=app, o=options: app.invoke(shape.state(), thread_id=f"m{next(_ids)}", **o)
        }
        if have_langgraph:
            from langgraph.checkpoint.memory import InMemorySaver

            graph = shape.theirs().compile(checkpointer=None if store is None else InMemorySaver())
            candidates["theirs"] = lambda g=graph: g.invoke(
                shape.lg_state(),
                {"configurable": {"thread_id": f"m{next(_ids)}"}, "recursion_limit": shape.supersteps + 10},
            )
        per = {k: v / shape.units * 1e6 for k, v in _rounds(candidates, repeat).items()}
        app.close()
        durability = "no checkpointer" if store is None else "sync"
        ours, theirs = per["ours"], per.get("theirs")
        out.append(Measured(shape.name, shape.unit, label, durability, ours, theirs, None, None, None))
    return out


def rows(
    repeat: int, have_langgraph: bool, *, kinds: tuple[str, ...] = ("sqlite", "postgres"), quick: bool = False
) -> list[Measured]:
    """Every row: the loop in memory, then each workload on each database, with every durability."""
    out = in_memory(SHAPES(quick)[0], repeat, have_langgraph)
    with _databases(list(kinds)) as databases:
        for db in databases:
            for shape in SHAPES(quick):
                out.extend(measure(db, shape, repeat, have_langgraph))
                print(f"  measured: {shape.name} on {db.kind}", file=sys.stderr)
    return out


def _us(value: float | None) -> str:
    return "n/a" if value is None else f"{value:,.1f} µs"


def _ratio(a: float | None, b: float | None) -> str:
    return "" if a is None or b is None else f"{a / b:.1f}x"


def _count(value: float | None) -> str:
    return "" if value is None else f"{value:.2f}"


def markdown(found: list[Measured], repeat: int) -> str:
    """The table: per unit, the floor, the ratios, and the counts of the sync rows."""
    title = (
        f"Durable supersteps (µs per unit; median of {repeat} alternating rounds; floor: a raw commit "
        "of the same bytes per superstep, same database)"
    )
    header = (
        "| workload | store | durability | actorgraph | LangGraph | floor | actorgraph / floor "
        "| LangGraph / actorgraph | transactions per superstep | round trips per superstep |"
    )
    lines = [title, "", header, "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    lines.extend(
        f"| {m.shape} (per {m.unit}) | {m.store} | {m.durability} | {_us(m.ours)} | {_us(m.theirs)} "
        f"| {_us(m.floor) if m.floor is not None else ''} | {_ratio(m.ours, m.floor)} "
        f"| {_ratio(m.theirs, m.ours)} | {_count(m.transactions)} | {_count(m.round_trips)} |"
        for m in found
    )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Print the table."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--stores", default="sqlite,postgres")
    parser.add_argument("--quick", action="store_true", help="small workloads (a smoke test)")
    args = parser.parse_args(argv)
    have = importlib.util.find_spec("langgraph") is not None
    kinds = tuple(args.stores.split(","))
    print(markdown(rows(args.repeat, have, kinds=kinds, quick=args.quick), args.repeat))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
