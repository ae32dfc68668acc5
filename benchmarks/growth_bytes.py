"""Bytes written per superstep when one key of 100 changes: `python -m benchmarks.growth_bytes`.

A loop of one vertex over a state of 100 keys, each holding a value of `--value` bytes (a short
string, 100 B, kept inside actorgraph's manifest; and a long one, 2 KiB, stored as a part of its
own; random hexadecimal text, which no database compresses), that changes one key per superstep
(key `i % 100` at superstep `i`), run to 10, 1,000, 10,000 and 100,000 supersteps with
durability "sync", on SQLite and on PostgreSQL (the stores of `benchmarks.growth_store`), beside
LangGraph's `SqliteSaver` and `PostgresSaver` running the same loop on the same database.

Bytes are what the database takes on disk, per superstep: SQLite's file after a full WAL
checkpoint (`PRAGMA wal_checkpoint(TRUNCATE)`), PostgreSQL's database (`pg_database_size` after
`CHECKPOINT`), each measured from an empty database of its own; for actorgraph also the bytes the
store was handed to write (rows, task results, state blobs and `refs`), which do not depend on the
database's pages. A constant per superstep is linear growth of the thread, which is what it must
be; the figure to read is how it compares with the changed value's size.
"""

from __future__ import annotations

import argparse
import importlib.util
import math
import random
import sqlite3
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypedDict

import actorgraph as ag
from benchmarks.durable_graphs import bytes_stored
from benchmarks.growth_store import _Place, _places

__all__ = ["Grown", "main", "markdown", "rows"]

KEYS = 100


@dataclass(frozen=True)
class Grown:
    """One measurement: a library on a store, a value size, a run length, and bytes per superstep."""

    library: str
    store: str
    value: int
    steps: int
    disk: float
    handed: float | None


def _text(seed: int, value: int) -> str:
    """`value` characters that no database compresses (PostgreSQL compresses values over 2 KiB)."""
    return random.Random(seed).randbytes(value // 2 + 1).hex()[:value]  # noqa: S311 - data, not a secret


def _state(value: int) -> dict[str, Any]:
    return {"i": 0, **{f"k{j:02d}": _text(-1 - j, value) for j in range(KEYS)}}


def _step(value: int) -> Callable[[dict[str, Any]], dict[str, Any]]:
    def step(s: dict[str, Any]) -> dict[str, Any]:
        i = s["i"] + 1
        return {"i": i, f"k{i % KEYS:02d}": _text(i, value)}

    return step


def _ours(steps: int, value: int) -> ag.Graph[Any]:
    g: ag.Graph[Any] = ag.Graph()
    g.add_vertex("step", _step(value), returns="update")
    g.add_edge(ag.START, "step")
    g.add_conditional_edges("step", lambda s: "step" if s["i"] < steps else ag.END)
    return g


def _theirs(steps: int, value: int) -> Any:
    from langgraph.graph import END, START, StateGraph

    state = TypedDict("State", {"i": int, **{f"k{j:02d}": str for j in range(KEYS)}})  # type: ignore[misc]
    g = StateGraph(state)
    g.add_node("step", _step(value))
    g.add_edge(START, "step")
    g.add_conditional_edges("step", lambda s: "step" if s["i"] < steps else END)
    return g


def _disk(place: _Place) -> int:
    """The database's bytes on disk, once everything written is in its main files."""
    if place.kind == "sqlite":
        conn = sqlite3.connect(place.target, isolation_level=None)
        try:
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        finally:
            conn.close()
        return Path(place.target).stat().st_size
    with place.connect() as conn:
        conn.execute("CHECKPOINT")
        return int(conn.execute("SELECT pg_database_size(current_database())").fetchone()[0])


def _saver(place: _Place) -> Any:
    if place.kind == "sqlite":
        from langgraph.checkpoint.sqlite import SqliteSaver

        return SqliteSaver(sqlite3.connect(place.target, check_same_thread=False))
    import psycopg
    from langgraph.checkpoint.postgres import PostgresSaver
    from psycopg.rows import dict_row

    saver = PostgresSaver(psycopg.connect(place.target, autocommit=True, row_factory=dict_row))
    saver.setup()
    return saver


def _measure_ours(place: _Place, steps: int, value: int) -> Grown:
    store = place.open()
    try:
        before = _disk(place)
        handed = bytes_stored(store)
        with _ours(steps, value).compile(store) as app:
            app.invoke(_state(value), thread_id="grown", recursion_limit=steps + 10)
    finally:
        store.close()
    return Grown("actorgraph", place.kind, value, steps, (_disk(place) - before) / steps, sum(handed) / steps)


def _measure_theirs(place: _Place, steps: int, value: int) -> Grown:
    saver = _saver(place)
    if place.kind == "sqlite":
        saver.setup()
    before = _disk(place)
    app = _theirs(steps, value).compile(checkpointer=saver)
    app.invoke(_state(value), {"configurable": {"thread_id": "grown"}, "recursion_limit": steps + 10})
    saver.conn.close()
    return Grown("LangGraph", place.kind, value, steps, (_disk(place) - before) / steps, None)


def rows(
    *,
    quick: bool = False,
    kinds: tuple[str, ...] = ("sqlite", "postgres"),
    values: tuple[int, ...] = (100, 2048),
    theirs_up_to: int = 10_000,
) -> list[Grown]:
    """Every measurement (small run lengths when `quick`); LangGraph's runs up to `theirs_up_to` supersteps.

    (LangGraph's savers store every channel's value in each checkpoint: 100,000 supersteps of
    2 KiB values would be about 20 GB and an hour per database.)
    """
    lengths = [10, 100, 1_000] if quick else [10, 1_000, 10_000, 100_000]
    have_langgraph = importlib.util.find_spec("langgraph") is not None
    out = []
    for kind in kinds:
        with _places(kind) as make:
            for value in values:
                for steps in lengths:
                    out.append(_measure_ours(make(f"ours_{value}_{steps}"), steps, value))
                    if have_langgraph and steps <= theirs_up_to:
                        out.append(_measure_theirs(make(f"theirs_{value}_{steps}"), steps, value))
                    print(f"  measured: {kind}, {value} B values, {steps:,} supersteps", file=sys.stderr)
    return out


def _k(a: Grown, b: Grown) -> str:
    total = (b.disk * b.steps) / max(a.disk * a.steps, 1.0)
    return f"k = {math.log(max(total, 1e-9)) / math.log(b.steps / a.steps):.2f}"


def markdown(found: list[Grown]) -> str:
    """One table per store: bytes per superstep by run length, each library and value size a row."""
    out = []
    for kind in dict.fromkeys(g.store for g in found):
        mine = [g for g in found if g.store == kind]
        lengths = sorted({g.steps for g in mine})
        name = "SQLite" if kind == "sqlite" else "PostgreSQL"
        out += [f"### Bytes per superstep, one key of {KEYS} changing: {name}", ""]
        out.append(
            "| library | value | what | "
            + " | ".join(f"{n:,} supersteps" for n in lengths)
            + " | growth of the total |"
        )
        out.append("| --- | ---: | --- |" + " ---: |" * len(lengths) + " --- |")
        for library, value in dict.fromkeys((g.library, g.value) for g in mine):
            line = {g.steps: g for g in mine if (g.library, g.value) == (library, value)}
            ran = [line[n] for n in lengths if n in line]
            disk = " | ".join(f"{line[n].disk:,.0f} B" if n in line else "not run" for n in lengths)
            grew = _k(ran[-2], ran[-1]) if len(ran) > 1 else ""
            out.append(f"| {library} | {value:,} B | on disk | {disk} | {grew} |")
            if ran[0].handed is not None:
                handed = " | ".join(f"{line[n].handed:,.0f} B" if n in line else "" for n in lengths)
                out.append(f"| {library} | {value:,} B | handed to the store | {handed} | |")
        out.append("")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    """Print the tables."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="10, 100 and 1,000 supersteps")
    parser.add_argument("--stores", default="sqlite,postgres")
    parser.add_argument("--value", default="100,2048", help="value sizes in bytes, comma-separated")
    parser.add_argument("--langgraph-up-to", type=int, default=10_000, help="LangGraph's longest run")
    args = parser.parse_args(argv)
    values = tuple(int(v) for v in args.value.split(","))
    kinds = tuple(args.stores.split(","))
    print(markdown(rows(quick=args.quick, kinds=kinds, values=values, theirs_up_to=args.langgraph_up_to)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
