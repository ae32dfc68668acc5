"""How cost grows with the work: `python -m benchmarks.growth [--quick]`.

Each table doubles or multiplies one dimension and keeps the rest small, side
by side with LangGraph where it has the same feature, in this one process:

- supersteps per run (a loop of one vertex): time per superstep;
- width (a fan-out to distinct vertices, and `Send` to one vertex): time per branch;
- threads in one SQLite store: `threads(status="interrupted")` and `get_state` of one thread;
- state size (one superstep over a state of N bytes, SQLite, durability "sync"): time per superstep.

Each figure is the median of `--repeat` runs after a warm-up. A growth column
names how the cost per unit changes from the first row to the last: a ratio
near 1 is constant cost per unit (linear total), above it the cost per unit grows.
"""

from __future__ import annotations

import argparse
import importlib.util
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import actorgraph as ag
from actorgraph.checkpoint import SqliteCheckpointer
from benchmarks.core import ag_fan, ag_loop, ag_sends, lg_fan, lg_loop, lg_sends
from benchmarks.harness import median_seconds

__all__ = ["main"]

HAVE_LANGGRAPH = importlib.util.find_spec("langgraph") is not None


def _per_unit(make: Callable[[int], Callable[[], object]], n: int, repeat: int) -> float:
    run = make(n)
    try:
        return median_seconds(run, repeat) / n * 1e6
    finally:
        getattr(run, "close", lambda: None)()


Make = Callable[[int], Callable[[], object]]


def _table(  # noqa: PLR0913, PLR0917 - the table's title and unit, its rows, both libraries, the repeat
    title: str, unit: str, sizes: list[int], ours: Make, theirs: Make | None, repeat: int
) -> str:
    lines = [
        f"### {title}",
        "",
        f"| n | actorgraph (µs/{unit}) | LangGraph (µs/{unit}) |",
        "| ---: | ---: | ---: |",
    ]
    first: list[float] = []
    last: list[float] = []
    for n in sizes:
        a = _per_unit(ours, n, repeat)
        b = _per_unit(theirs, n, repeat) if theirs is not None and HAVE_LANGGRAPH else None
        lines.append(f"| {n:,} | {a:,.1f} | {'n/a' if b is None else f'{b:,.1f}'} |")
        first = first or [a, b or 0.0]
        last = [a, b or 0.0]
    growth = f"{last[0] / first[0]:.2f}x" + (f" (LangGraph {last[1] / first[1]:.2f}x)" if first[1] else "")
    lines += ["", f"Cost per {unit} from the first row to the last: {growth}."]
    return "\n".join(lines)


def _store_table(counts: list[int], repeat: int) -> str:
    """`threads(status=...)` and `get_state` in a SQLite store holding `count` threads."""
    lines = [
        "### Threads in one SQLite store",
        "",
        "| threads | `threads(status='interrupted')` | `get_state` of one thread | threads listed |",
        "| ---: | ---: | ---: | ---: |",
    ]
    g: ag.Graph = ag.Graph()
    g.add_vertex("ask", lambda s: {**s, "answer": ag.interrupt("ok?")})
    g.add_edge(ag.START, "ask").add_edge("ask", ag.END)
    with tempfile.TemporaryDirectory() as tmp:
        store = SqliteCheckpointer(Path(tmp) / "growth.db")
        with g.compile(checkpointer=store) as app:
            made = 0
            for count in counts:
                while made < count:
                    app.invoke({"n": made}, thread_id=f"t{made}", durability="exit")
                    made += 1
                listed = len(store.threads(status="interrupted"))
                listing = median_seconds(lambda: store.threads(status="interrupted"), repeat) * 1000
                one = median_seconds(lambda: app.get_state(thread_id="t0"), repeat) * 1000
                lines.append(f"| {count:,} | {listing:,.1f} ms | {one:,.2f} ms | {listed:,} |")
        store.close()
    return "\n".join(lines)


def _state_table(sizes: list[int], repeat: int) -> str:
    """One superstep that changes a small key of a state of `size` bytes, recorded in SQLite."""
    lines = [
        '### State size (one superstep, SQLite, durability "sync", a new thread each run)',
        "",
        "| state | time per run | bytes stored per run |",
        "| ---: | ---: | ---: |",
    ]
    g: ag.Graph = ag.Graph()
    g.add_vertex("touch", lambda s: {**s, "n": s["n"] + 1})
    g.add_edge(ag.START, "touch").add_edge("touch", ag.END)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "state.db"
        store = SqliteCheckpointer(path)
        with g.compile(checkpointer=store) as app:
            for size in sizes:
                blob = "x" * size
                counter = iter(range(10**9))

                def run(blob: str = blob, counter: Any = counter, size: int = size) -> object:
                    return app.invoke({"n": 0, "blob": blob}, thread_id=f"s{size}-{next(counter)}")

                before = _on_disk(path)
                seconds = median_seconds(run, repeat)
                grown = (_on_disk(path) - before) / (repeat + 1)
                lines.append(f"| {_bytes(size)} | {seconds * 1000:,.1f} ms | {_bytes(int(grown))} |")
        store.close()
    return "\n".join(lines)


def _on_disk(path: Path) -> int:
    """The bytes of a SQLite database and its write-ahead log."""
    wal = path.with_name(path.name + "-wal")
    return path.stat().st_size + (wal.stat().st_size if wal.exists() else 0)


def _bytes(n: int) -> str:
    for unit, scale in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale:
            return f"{n / scale:,.1f} {unit}"
    return f"{n} B"


def main(argv: list[str] | None = None) -> int:
    """Print the growth tables."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=3, help="timed runs per figure (median)")
    parser.add_argument("--quick", action="store_true", help="smaller sizes (a smoke test of the script)")
    args = parser.parse_args(argv)
    quick, repeat = args.quick, args.repeat
    steps = [10, 1_000] if quick else [10, 1_000, 100_000]
    widths = [10, 100] if quick else [10, 100, 1_000]
    sends = [10, 1_000] if quick else [10, 1_000, 10_000]
    stores = [10, 100] if quick else [10, 1_000, 10_000]
    states = [1 << 10, 1 << 20] if quick else [1 << 10, 1 << 20, 10 << 20, 100 << 20]
    print(_table("Supersteps per run (a loop of one vertex)", "superstep", steps, ag_loop, lg_loop, repeat))
    print()
    print(
        _table("Width: a fan-out to distinct vertices and a join", "branch", widths, ag_fan, lg_fan, repeat)
    )
    print()
    print(_table("Width: Send to one vertex", "Send", sends, ag_sends, lg_sends, repeat))
    print()
    print(_store_table(stores, repeat))
    print()
    print(_state_table(states, repeat))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
