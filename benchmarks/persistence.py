"""Checkpointing cost: the 1000-superstep loop with each store and durability mode."""

from __future__ import annotations

import itertools
import sqlite3
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import actorgraph as ag
from actorgraph.checkpoint.memory import MemoryCheckpointer
from actorgraph.checkpoint.sqlite import SqliteCheckpointer
from benchmarks.core import LOOP, N
from benchmarks.harness import Row, median_seconds

__all__ = ["rows"]

_ids = itertools.count()


def _loop_graph() -> ag.Graph:
    g: ag.Graph = ag.Graph()
    g.add_vertex("inc", lambda s: {"n": s["n"] + 1})
    g.add_edge(ag.START, "inc")
    g.add_conditional_edges("inc", lambda s: "inc" if s["n"] < LOOP else ag.END)
    return g


def _ours(store: Any, durability: str) -> tuple[Callable[[], object], Callable[[], None]]:
    app = _loop_graph().compile(store)

    def run() -> object:
        return app.invoke({"n": 0}, thread_id=f"t{next(_ids)}", durability=durability)

    def close() -> None:
        app.close()
        store.close()

    return run, close


def _theirs(saver: Any, durability: str) -> Callable[[], object]:
    from langgraph.graph import END, START, StateGraph

    g = StateGraph(N)
    g.add_node("inc", lambda s: {"n": s["n"] + 1})
    g.add_edge(START, "inc")
    g.add_conditional_edges("inc", lambda s: "inc" if s["n"] < LOOP else END)
    app = g.compile(checkpointer=saver)

    def run() -> object:
        config = {"configurable": {"thread_id": f"t{next(_ids)}"}, "recursion_limit": LOOP + 10}
        return app.invoke({"n": 0}, config, durability=durability)

    return run


def rows(repeat: int, have_langgraph: bool, workdir: Path | None = None) -> list[Row]:
    """Microseconds per superstep for every store and durability, beside LangGraph's."""
    folder = workdir or Path(tempfile.mkdtemp(prefix="ag-bench-"))
    out = []
    stores: list[tuple[str, Callable[[], Any]]] = [
        ("MemoryCheckpointer", MemoryCheckpointer),
        ("SqliteCheckpointer", lambda: SqliteCheckpointer(folder / f"ag{next(_ids)}.db")),
    ]
    savers: dict[str, Callable[[], Any]] = {}
    if have_langgraph:
        from langgraph.checkpoint.memory import InMemorySaver
        from langgraph.checkpoint.sqlite import SqliteSaver

        savers = {
            "MemoryCheckpointer": InMemorySaver,
            "SqliteCheckpointer": lambda: SqliteSaver(
                sqlite3.connect(folder / f"lg{next(_ids)}.db", check_same_thread=False)
            ),
        }
    for (name, make), durability in itertools.product(stores, ("sync", "step", "exit")):
        run, close = _ours(make(), durability)
        ours = median_seconds(run, repeat) / LOOP * 1e6
        close()
        theirs_text, ratio = "n/a", "n/a"
        if name in savers and durability in ("sync", "exit"):
            theirs = median_seconds(_theirs(savers[name](), durability), repeat) / LOOP * 1e6
            theirs_text, ratio = f"{theirs:,.1f} µs/superstep", f"{theirs / ours:.1f}x"
        label = f"loop x {LOOP}, {name}, durability {durability!r}"
        out.append(Row(label, "superstep", f"{ours:,.1f} µs/superstep", theirs_text, ratio))
    out.append(_get_state_row(folder))
    return out


def _get_state_row(folder: Path) -> Row:
    store = SqliteCheckpointer(folder / "state.db")
    with _loop_graph().compile(store) as app:
        app.invoke({"n": 0}, thread_id="long")
        start = time.perf_counter()
        for _ in range(50):
            app.get_state("long")
        per = (time.perf_counter() - start) / 50 * 1000
    store.close()
    return Row(f"get_state of a {LOOP}-step thread (SQLite)", "call", f"{per:.2f} ms", "n/a", "n/a")
