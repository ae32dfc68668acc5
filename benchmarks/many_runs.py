"""Many runs at once, each waiting on I/O: `python -m benchmarks.many_runs [--runs 1,10,100] [--wait 0.5]`.

The shape of an agent server: N conversations at once, each one vertex that
awaits a model for `--wait` seconds. Measured side by side in this process:
actorgraph's `ainvoke` (the async vertex waits on its pool's event loop),
LangGraph's `ainvoke`, and actorgraph's `start()` with a blocking vertex
(`time.sleep`, bounded by the vertex's `concurrency`: 32 by default, or as
many as the runs when set). Reported per N, median and range of `--repeat`
rounds: wall time of all N (the ideal is `--wait` seconds), runs per second,
the most threads this process had; and `tracemalloc`'s peak over one more
round (every thread's Python allocations while the N runs are in flight). A blocking round that would take
longer than `--longest` seconds by its bound is not run.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import threading
import time
from collections.abc import Callable
from typing import Any, Self, TypedDict

import actorgraph as ag
from benchmarks.growth import Curve, Metric, Spread, markdown, peak_mib

__all__ = ["SERIES", "curve", "main"]

SERIES = (
    "actorgraph async",
    "LangGraph async",
    "actorgraph blocking (bound 32)",
    "actorgraph blocking (concurrency=N)",
)
WALL = Metric("wall time of all runs", "s", ",.2f")
RATE = Metric("runs per second", "runs/s", ",.0f", grows=False)
THREADS = Metric("most threads", "threads", ",.0f")
MEMORY = Metric("peak memory of a round", "MiB", ",.2f")
Round = tuple[float, int]  # seconds, most threads
Measured = tuple[list[Round], float]  # the timed rounds, and the peak MiB of one more


class State(TypedDict):
    n: int


class _Peak:
    """The most threads alive, sampled every 10 ms while work runs, and the seconds it took."""

    def __init__(self) -> None:
        self.most = threading.active_count()
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)
        self._start = 0.0
        self.seconds = 0.0

    def __enter__(self) -> Self:
        self._thread.start()
        self._start = time.perf_counter()
        return self

    def __exit__(self, *_: object) -> None:
        self.seconds = time.perf_counter() - self._start
        self._done.set()
        self._thread.join()

    def _watch(self) -> None:
        while not self._done.wait(0.01):
            self.most = max(self.most, threading.active_count())

    def round(self) -> Round:
        """The round's seconds and most threads."""
        return self.seconds, self.most


def _one_vertex(fn: Callable[..., Any], **options: Any) -> ag.Graph[Any]:
    g = ag.Graph(state=State, returns="update")
    g.add_vertex("model", fn, **options)
    g.add_edge(ag.START, "model")
    g.add_edge("model", ag.END)
    return g


def _async_rounds(ainvoke: Callable[[Any], Any], runs: int, repeat: int) -> Measured:
    async def all_runs() -> None:
        await asyncio.gather(*(ainvoke({"n": i}) for i in range(runs)))

    asyncio.run(all_runs())  # warm-up: the pool's loop and the coordinators start
    rounds = []
    for _ in range(repeat):
        with _Peak() as peak:
            asyncio.run(all_runs())
        rounds.append(peak.round())
    return rounds, peak_mib(lambda: asyncio.run(all_runs()))


def actorgraph_async(runs: int, wait: float, repeat: int) -> Measured:
    """`ainvoke`, `runs` times at once, of an async vertex that awaits `wait` seconds."""

    async def model(state: State) -> dict[str, int]:
        await asyncio.sleep(wait)
        return {"n": state["n"] + 1}

    with _one_vertex(model).compile() as app:
        return _async_rounds(app.ainvoke, runs, repeat)


def langgraph_async(runs: int, wait: float, repeat: int) -> Measured | None:
    """LangGraph's `ainvoke`, `runs` times at once, of the same async node."""
    if importlib.util.find_spec("langgraph") is None:
        return None
    from langgraph.graph import END, START, StateGraph

    async def model(state: State) -> dict[str, int]:
        await asyncio.sleep(wait)
        return {"n": state["n"] + 1}

    g = StateGraph(State)
    g.add_node("model", model)
    g.add_edge(START, "model")
    g.add_edge("model", END)
    return _async_rounds(g.compile().ainvoke, runs, repeat)


def actorgraph_blocking(runs: int, wait: float, repeat: int, concurrency: int | None) -> Measured:
    """`start()`, `runs` times at once, of a blocking vertex that sleeps `wait` seconds."""

    def model(state: State) -> dict[str, int]:
        time.sleep(wait)
        return {"n": state["n"] + 1}

    options = {} if concurrency is None else {"concurrency": concurrency}
    rounds = []
    with _one_vertex(model, **options).compile() as app:

        def all_runs() -> None:
            for handle in [app.start({"n": i}) for i in range(runs)]:
                handle.result()

        for _ in range(repeat):
            with _Peak() as peak:
                all_runs()
            rounds.append(peak.round())
        return rounds, peak_mib(all_runs)


def _put(table: Curve, series: str, runs: int, measured: Measured | None) -> None:
    if measured is None:
        return
    rounds, mib = measured
    table.put(series, WALL.name, runs, Spread(tuple(r[0] for r in rounds)))
    table.put(series, RATE.name, runs, Spread(tuple(runs / r[0] for r in rounds)))
    table.put(series, THREADS.name, runs, Spread(tuple(float(r[1]) for r in rounds)))
    table.put(series, MEMORY.name, runs, mib)


def curve(counts: list[int], wait: float, repeat: int, longest: float = 60.0) -> Curve:
    """Measure every design at every count of runs at once."""
    table = Curve(
        "many-runs",
        f"Concurrent runs in one process, each waiting {wait} s on I/O (ideal: {wait} s)",
        "runs",
        (WALL, RATE, THREADS, MEMORY),
        SERIES,
    )
    for runs in counts:
        _put(table, SERIES[0], runs, actorgraph_async(runs, wait, repeat))
        _put(table, SERIES[1], runs, langgraph_async(runs, wait, repeat))
        bounded = (runs + 31) // 32 * wait <= longest
        _put(table, SERIES[2], runs, actorgraph_blocking(runs, wait, repeat, None) if bounded else None)
        unbounded = runs <= 2_000  # a thread per run
        _put(table, SERIES[3], runs, actorgraph_blocking(runs, wait, repeat, runs) if unbounded else None)
        if runs not in table.sizes:
            table.sizes.append(runs)
    return table


def main(argv: list[str] | None = None) -> int:
    """Print the table."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", default="1,10,100,1000", help="comma-separated numbers of runs")
    parser.add_argument("--wait", type=float, default=0.5, help="seconds each vertex waits")
    parser.add_argument("--repeat", type=int, default=3, help="rounds per figure (median and range)")
    parser.add_argument("--longest", type=float, default=60.0, help="longest blocking round run, in seconds")
    args = parser.parse_args(argv)
    counts = [int(n) for n in args.runs.split(",")]
    print(markdown(curve(counts, args.wait, args.repeat, args.longest)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
