"""Run the benchmarks and print Markdown tables: `python -m benchmarks [--repeat N] [--only TEXT]`.

`python -m benchmarks --plots [--quick]` runs the growth curves instead
(benchmarks.growth, benchmarks.many_runs, and benchmarks.growth_store where it
exists), prints their tables and draws them into docs/images/ (matplotlib,
from the `bench` extra). The full sizes take about 20 minutes on a 2-core
machine; `--quick` runs small sizes only (a smoke test, about a minute).
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import importlib.util
import platform
import sys
from collections.abc import Iterator
from typing import Any

from benchmarks import agent, big_state, core, growth, isolation, many_runs, persistence, startup, streaming
from benchmarks.growth import Curve, Metric, Spread, markdown
from benchmarks.harness import Floor, measure, table


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=None, help="timed runs (median): 7, or 3 with --plots")
    parser.add_argument("--only", default="", help="run only workloads whose name contains this")
    parser.add_argument("--plots", action="store_true", help="run the growth curves and draw docs/images/")
    parser.add_argument("--quick", action="store_true", help="with --plots: small sizes only")
    args = parser.parse_args(argv)
    if args.plots:
        return growth_plots(args.quick, args.repeat or 3)
    args.repeat = args.repeat or 7
    have_langgraph = importlib.util.find_spec("langgraph") is not None
    if not have_langgraph:
        print("LangGraph is not installed (pip install -e '.[bench]'): its column shows n/a\n")
    print(f"Python {platform.python_version()} on {platform.machine()}, {_cpus()} CPUs\n")
    rows = []
    floor = Floor()
    for workload in core.WORKLOADS:
        if args.only and args.only not in workload.name:
            continue
        chosen = workload if have_langgraph else dataclasses.replace(workload, langgraph=None)
        rows.append(measure(chosen, args.repeat, floor))
        print(f"  measured: {workload.name}", file=sys.stderr)
    if rows:
        print(table(rows, "Core engine (median of %d runs)" % args.repeat, floor))
    if not args.only or "stream" in args.only:
        print()
        print(streaming.report(args.repeat))
    if not args.only or "persist" in args.only:
        print()
        repeat = min(args.repeat, 5)  # LangGraph's durable loop takes seconds a run
        print(persistence.markdown(persistence.rows(repeat, have_langgraph), repeat))
    for text in later_tables(args.only, args.repeat, have_langgraph):
        print()
        print(text)
    if not args.only:
        print()
        print(startup.report(have_langgraph))
        print()
        print(isolation.report())
    return 0


def later_tables(only: str, repeat: int, have_langgraph: bool) -> Iterator[str]:
    """The agent loop's and the big state's tables, when `--only` is empty or names them."""
    if not only or "agent" in only:
        title = f"Prebuilt ReAct agent, {agent.ROUNDS} tool rounds (median of {repeat} runs, alternating)"
        yield table(agent.rows(repeat, have_langgraph), title)
    if not only or "big" in only:
        yield big_state.report(min(repeat, 5), have_langgraph)


def growth_curves(quick: bool, repeat: int) -> Iterator[Curve]:
    """The engine's growth curves and many runs at once."""
    yield from growth.curves(quick, repeat)
    counts = [1, 10, 100] if quick else [1, 10, 100, 1_000, 10_000]
    yield many_runs.curve(counts, 0.1 if quick else 0.5, repeat)


def store_curves(figures: list[Any]) -> Iterator[Curve]:
    """benchmarks.growth_store's figures as curves: one per table, a panel per store, a line per call."""
    titles = {"threads": "Threads in one store", "long": "Long threads' history"}
    for kind_of_table, title in titles.items():
        mine = [f for f in figures if f.table == kind_of_table]
        if not mine:
            continue
        stores = tuple(dict.fromkeys(f.store for f in mine))
        metrics = tuple(Metric(f"time on {kind}", "ms", ",.2f") for kind in stores)
        size = "threads" if kind_of_table == "threads" else "supersteps"
        curve = Curve(f"store-{kind_of_table}", title, size, metrics, ())
        curve.series = tuple(dict.fromkeys(f.what for f in mine))
        for f in sorted(mine, key=lambda f: f.size):
            spread = Spread(tuple(dict.fromkeys((f.low_ms, f.median_ms, f.high_ms))))
            curve.put(f.what, f"time on {f.store}", f.size, spread)
        yield curve


def growth_plots(quick: bool, repeat: int) -> int:
    """Print the growth tables and draw each into docs/images/growth-<curve>.png."""
    from benchmarks import plots

    print(f"Python {platform.python_version()} on {platform.machine()}, {_cpus()} CPUs\n")
    for curve in growth_curves(quick, repeat):
        print(markdown(curve), end="\n\n", flush=True)
        print(f"  drawn: {plots.plot(curve)}", file=sys.stderr)
    if importlib.util.find_spec("benchmarks.growth_store") is not None:  # the stores' tables, in their form
        store = importlib.import_module("benchmarks.growth_store")
        figures = store.rows(quick=quick, repeat=repeat)
        print(store.markdown(figures), flush=True)
        for curve in store_curves(figures):
            print(f"  drawn: {plots.plot(curve)}", file=sys.stderr)
    return 0


def _cpus() -> int:
    import os

    return os.cpu_count() or 1


if __name__ == "__main__":
    raise SystemExit(main())
