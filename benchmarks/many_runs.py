"""Many runs at once, each waiting on I/O: `python -m benchmarks.many_runs [--runs 100,1000] [--wait 0.5]`.

The shape of an agent server: N conversations at once, each one vertex that
awaits a model for `--wait` seconds. Measured side by side in this process:
actorgraph's `ainvoke` (the async vertex waits on its pool's event loop),
LangGraph's `ainvoke`, and actorgraph's `start()` with a blocking vertex
(`time.sleep`, bounded by the vertex's `concurrency`: 32 by default, or as
many as the runs when set). Reported: wall time of all N, and the most threads
this process had while they ran. The ideal is `--wait` seconds.
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

__all__ = ["main", "report"]


class State(TypedDict):
    n: int


class _Peak:
    """The most threads alive, sampled every 10 ms while work runs."""

    def __init__(self) -> None:
        self.most = threading.active_count()
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._done.set()
        self._thread.join()

    def _watch(self) -> None:
        while not self._done.wait(0.01):
            self.most = max(self.most, threading.active_count())


def _one_vertex(fn: Callable[..., Any], **options: Any) -> ag.Graph[Any]:
    g = ag.Graph(state=State, returns="update")
    g.add_vertex("model", fn, **options)
    g.add_edge(ag.START, "model")
    g.add_edge("model", ag.END)
    return g


def actorgraph_async(runs: int, wait: float) -> tuple[float, int]:
    """`ainvoke`, `runs` times, of an async vertex that awaits `wait` seconds."""

    async def model(state: State) -> dict[str, int]:
        await asyncio.sleep(wait)
        return {"n": state["n"] + 1}

    with _one_vertex(model).compile() as app:

        async def all_runs() -> None:
            await asyncio.gather(*(app.ainvoke({"n": i}) for i in range(runs)))

        asyncio.run(all_runs())  # warm-up: the pool's loop and the coordinators start
        with _Peak() as peak:
            start = time.perf_counter()
            asyncio.run(all_runs())
            return time.perf_counter() - start, peak.most


def actorgraph_blocking(runs: int, wait: float, concurrency: int | None) -> tuple[float, int]:
    """`start()`, `runs` times, of a blocking vertex that sleeps `wait` seconds."""

    def model(state: State) -> dict[str, int]:
        time.sleep(wait)
        return {"n": state["n"] + 1}

    options = {} if concurrency is None else {"concurrency": concurrency}
    with _one_vertex(model, **options).compile() as app, _Peak() as peak:
        start = time.perf_counter()
        handles = [app.start({"n": i}) for i in range(runs)]
        for handle in handles:
            handle.result()
        return time.perf_counter() - start, peak.most


def langgraph_async(runs: int, wait: float) -> tuple[float, int] | None:
    """LangGraph's `ainvoke`, `runs` times, of the same async node."""
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
    app = g.compile()

    async def all_runs() -> None:
        await asyncio.gather(*(app.ainvoke({"n": i}) for i in range(runs)))

    asyncio.run(all_runs())
    with _Peak() as peak:
        start = time.perf_counter()
        asyncio.run(all_runs())
        return time.perf_counter() - start, peak.most


def report(counts: list[int], wait: float) -> str:
    """The table: seconds for all runs and the most threads, per design and N."""
    lines = [
        f"### Many runs at once, each waiting {wait} s (one run; the ideal is {wait} s)",
        "",
        "| runs | actorgraph async | LangGraph async | actorgraph blocking (32) | blocking (concurrency=N) |",
        "| ---: | --- | --- | --- | --- |",
    ]
    for runs in counts:
        cells = [
            actorgraph_async(runs, wait),
            langgraph_async(runs, wait),
            actorgraph_blocking(runs, wait, None),
            actorgraph_blocking(runs, wait, runs) if runs <= 2_000 else None,
        ]
        shown = ["n/a" if c is None else f"{c[0]:.2f} s, {c[1]} threads" for c in cells]
        lines.append(f"| {runs:,} | " + " | ".join(shown) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Print the table."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", default="100,1000", help="comma-separated numbers of runs")
    parser.add_argument("--wait", type=float, default=0.5, help="seconds each vertex waits")
    args = parser.parse_args(argv)
    print(report([int(n) for n in args.runs.split(",")], args.wait))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
