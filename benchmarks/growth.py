"""How cost grows with the work: `python -m benchmarks.growth [--quick] [--repeat N]`.

Each curve multiplies one dimension and keeps the rest small, side by side
with LangGraph where it has the same feature, in this one process:

- supersteps per run (a loop of one vertex): time per superstep, peak memory of one run;
- width (a fan-out to distinct vertices and a join, and `Send` to one vertex):
  time per branch, peak memory of one run;
- state size (one superstep over a state of N bytes, SQLite, durability
  "sync", a new thread each run): time and bytes stored per superstep.

Times are the median and range of `--repeat` runs after a warm-up. Peak
memory is `tracemalloc`'s peak over one more run (every thread's Python
allocations: the coordinator's and the vertices'). Each row's growth is the
exponent k of total cost ~ n^k between the row before it and itself, named:
constant, sublinear, linear, worse than linear, quadratic.
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import itertools
import math
import sqlite3
import statistics
import tempfile
import tracemalloc
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypedDict

import actorgraph as ag
from actorgraph.checkpoint import SqliteCheckpointer
from benchmarks.core import ag_fan, ag_loop, ag_sends, lg_fan, lg_loop, lg_sends
from benchmarks.harness import median_seconds

__all__ = ["Curve", "Metric", "Spread", "curves", "growth_class", "main", "markdown"]

HAVE_LANGGRAPH = importlib.util.find_spec("langgraph") is not None
OURS, THEIRS = "actorgraph", "LangGraph"


@dataclass(frozen=True)
class Spread:
    """A figure measured `len(samples)` times: its median and range."""

    samples: tuple[float, ...]

    @property
    def median(self) -> float:
        """The median sample."""
        return statistics.median(self.samples)

    def show(self, fmt: str) -> str:
        """The median, and the range when there is one."""
        low, high = min(self.samples), max(self.samples)
        middle = format(self.median, fmt)
        return middle if low == high else f"{middle} ({format(low, fmt)}-{format(high, fmt)})"


@dataclass(frozen=True)
class Metric:
    """One measured column: its name, unit, format, and whether it is per item of n."""

    name: str
    unit: str
    fmt: str = ",.1f"
    per_item: bool = False  # the figure is per item of n: the total is the figure times n
    grows: bool = True  # whether a growth class means anything for it (not for a rate)


@dataclass
class Curve:
    """One growth table: sizes, series (libraries or designs), metrics, and the figures."""

    key: str  # the stem of its plot in docs/images/
    title: str
    size: str  # what n counts
    metrics: tuple[Metric, ...]
    series: tuple[str, ...]
    sizes: list[int] = field(default_factory=list)
    figures: dict[tuple[str, str, int], Spread | None] = field(default_factory=dict)
    size_format: Callable[[int], str] = "{:,}".format

    def put(self, series: str, metric: str, n: int, value: Spread | float | None) -> None:
        """Record one figure (a bare float counts as one sample)."""
        if n not in self.sizes:
            self.sizes.append(n)
        self.figures[series, metric, n] = Spread((value,)) if isinstance(value, float | int) else value

    def get(self, series: str, metric: str, n: int) -> Spread | None:
        """The figure, or None when it was not measured."""
        return self.figures.get((series, metric, n))


_CLASSES = ((0.15, "constant"), (0.85, "sublinear"), (1.15, "linear"), (1.85, "worse than linear"))


def growth_class(n0: int, total0: float, n1: int, total1: float) -> str:
    """The name of the growth of a total from (n0, total0) to (n1, total1), with its exponent k."""
    if min(total0, total1) <= 0 or n0 == n1:
        return "n/a"
    k = math.log(total1 / total0) / math.log(n1 / n0)
    for limit, name in _CLASSES:
        if k < limit:
            return f"{name} (k={k:.2f})"
    return f"quadratic or worse (k={k:.2f})"


def _growth(curve: Curve, series: str, metric: Metric, n: int) -> str:
    at = curve.sizes.index(n)
    now = curve.get(series, metric.name, n)
    before = next(
        (m for m in reversed(curve.sizes[:at]) if curve.get(series, metric.name, m) is not None), None
    )
    if now is None or before is None or not metric.grows:
        return "-"
    then = curve.get(series, metric.name, before) or now
    scale = (lambda m: m) if metric.per_item else (lambda _m: 1)
    return growth_class(before, then.median * scale(before), n, now.median * scale(n))


def markdown(curve: Curve) -> str:
    """The curve as a Markdown table: a row per size and series, each figure with its growth."""
    head = [curve.size, "library", *(c for m in curve.metrics for c in (f"{m.name} ({m.unit})", "growth"))]
    lines = [f"### {curve.title}", "", "| " + " | ".join(head) + " |"]
    lines.append("| ---: | --- |" + " ---: | --- |" * len(curve.metrics))
    for n in curve.sizes:
        for series in curve.series:
            cells = [curve.size_format(n), series]
            for metric in curve.metrics:
                figure = curve.get(series, metric.name, n)
                cells += [
                    "not run" if figure is None else figure.show(metric.fmt),
                    _growth(curve, series, metric, n),
                ]
            lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


# -- measuring ------------------------------------------------------------------------------------


def samples(run: Callable[[], object], repeat: int) -> list[float]:
    """Seconds of `repeat` runs of `run()`, after one warm-up run."""
    run()
    return [median_seconds(run, 1, warmup=0) for _ in range(repeat)]


def peak_mib(run: Callable[[], object]) -> float:
    """`tracemalloc`'s peak, in MiB, over one run of `run()` (every thread's Python allocations)."""
    gc.collect()
    tracemalloc.start()
    try:
        run()
        return tracemalloc.get_traced_memory()[1] / (1 << 20)
    finally:
        tracemalloc.stop()


Make = Callable[[int], Callable[[], object]]
TIME_PER = Metric("time per {}", "µs", per_item=True)
PEAK = Metric("peak memory of a run", "MiB", ",.2f")


def _per_item_curve(  # noqa: PLR0913, PLR0917 - its table's names, its sizes and both libraries' builders
    key: str, title: str, item: str, sizes: list[int], ours: Make, theirs: Make, repeat: int
) -> Curve:
    time_per = Metric(TIME_PER.name.format(item), TIME_PER.unit, per_item=True)
    series = (OURS, THEIRS) if HAVE_LANGGRAPH else (OURS,)
    curve = Curve(key, title, item + "s" if item != "branch" else "branches", (time_per, PEAK), series)
    for n in sizes:
        for name, make in zip(series, (ours, theirs), strict=False):
            run = make(n)
            try:
                times = samples(run, repeat)
                curve.put(name, time_per.name, n, Spread(tuple(t / n * 1e6 for t in times)))
                curve.put(name, PEAK.name, n, peak_mib(run))
            finally:
                getattr(run, "close", lambda: None)()
    return curve


# -- state size -----------------------------------------------------------------------------------


class _Blob(TypedDict):
    n: int
    blob: str


_ids = itertools.count()
STATE_TIME = Metric("time per superstep", "ms", ",.1f")
STATE_BYTES = Metric("bytes stored per superstep", "MiB", ",.3f")


def _disk(path: Path) -> int:
    """The bytes of a SQLite database and its write-ahead log."""
    wal = path.with_name(path.name + "-wal")
    return path.stat().st_size + (wal.stat().st_size if wal.exists() else 0)


def _ours_state(path: Path) -> tuple[Callable[[str], object], Callable[[], None]]:
    g: ag.Graph = ag.Graph()
    g.add_vertex("touch", lambda s: {**s, "n": s["n"] + 1})
    g.add_edge(ag.START, "touch").add_edge("touch", ag.END)
    store = SqliteCheckpointer(path)
    app = g.compile(checkpointer=store)

    def close() -> None:
        app.close()
        store.close()

    return lambda blob: app.invoke({"n": 0, "blob": blob}, thread_id=f"s{next(_ids)}"), close


def _theirs_state(path: Path) -> tuple[Callable[[str], object], Callable[[], None]]:
    from langgraph.checkpoint.sqlite import SqliteSaver
    from langgraph.graph import END, START, StateGraph

    conn = sqlite3.connect(path, check_same_thread=False)
    g = StateGraph(_Blob)
    g.add_node("touch", lambda s: {"n": s["n"] + 1})
    g.add_edge(START, "touch")
    g.add_edge("touch", END)
    app = g.compile(checkpointer=SqliteSaver(conn))

    def run(blob: str) -> object:
        config = {"configurable": {"thread_id": f"s{next(_ids)}"}}
        return app.invoke({"n": 0, "blob": blob}, config, durability="sync")

    return run, conn.close


def _state_curve(sizes: list[int], repeat: int) -> Curve:
    series = (OURS, THEIRS) if HAVE_LANGGRAPH else (OURS,)
    curve = Curve(
        "state-size",
        'State size (one superstep, SQLite, durability "sync", a new thread each run)',
        "state",
        (STATE_TIME, STATE_BYTES),
        series,
        size_format=_bytes,
    )
    with tempfile.TemporaryDirectory() as tmp:
        for name, make in zip(series, (_ours_state, _theirs_state), strict=False):
            path = Path(tmp) / f"{name}.db"
            run, close = make(path)
            try:
                for size in sizes:
                    blob = "x" * size
                    before = _disk(path)
                    times = samples(lambda blob=blob, run=run: run(blob), repeat)
                    curve.put(name, STATE_TIME.name, size, Spread(tuple(t * 1000 for t in times)))
                    grown = (_disk(path) - before) / (repeat + 1) / (1 << 20)
                    curve.put(name, STATE_BYTES.name, size, grown)
            finally:
                close()
    return curve


def _bytes(n: int) -> str:
    for unit, scale in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale:
            return f"{n / scale:,.0f} {unit}"
    return f"{n} B"


# -- the curves -----------------------------------------------------------------------------------


def curves(quick: bool, repeat: int) -> Iterator[Curve]:
    """Measure every growth curve, one at a time (quick: small sizes, a smoke test)."""
    steps = [10, 1_000] if quick else [10, 1_000, 100_000]
    widths = [10, 100] if quick else [10, 1_000, 10_000]
    states = [1 << 10, 1 << 20] if quick else [1 << 10, 1 << 20, 10 << 20, 100 << 20]
    loop = "Supersteps per run (a loop of one vertex)"
    yield _per_item_curve("supersteps", loop, "superstep", steps, ag_loop, lg_loop, repeat)
    fan = "Width: a fan-out to distinct vertices and a join"
    yield _per_item_curve("fan-out", fan, "branch", widths, ag_fan, lg_fan, repeat)
    yield _per_item_curve("send", "Width: Send to one vertex", "Send", widths, ag_sends, lg_sends, repeat)
    yield _state_curve(states, repeat)


def main(argv: list[str] | None = None) -> int:
    """Print the growth tables."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=3, help="timed runs per figure (median and range)")
    parser.add_argument("--quick", action="store_true", help="smaller sizes (a smoke test of the script)")
    args = parser.parse_args(argv)
    for curve in curves(args.quick, args.repeat):
        print(markdown(curve), end="\n\n", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
