"""Both actor designs side by side: `python -m benchmarks.actors [--repeat N] [--runs K]`.

`compile(actors="threads")` gives every vertex actor a thread of its own;
`compile(actors="pooled")` runs vertex actors on the process's scheduler
threads (one per core, more while vertex code blocks). Every core workload
runs in this one process on both, interleaved, `--runs` times; each cell is the
median of the runs' medians with the range, beside LangGraph's figure and the
thread hand-offs per unit (`benchmarks.handoffs`: voluntary context switches
over those of a `SimpleQueue` ping-pong, taken in the same run).
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics

from benchmarks import core
from benchmarks.handoffs import ping_pong_switches, switches
from benchmarks.harness import Workload, median_seconds

__all__ = ["main"]

DESIGNS = ("threads", "pooled")


def _per_unit(workload: Workload, seconds: float) -> float:
    if workload.per == "rate":
        return workload.units / seconds
    if workload.per == "ideal":
        return seconds / workload.ideal
    return seconds / workload.units * 1e6


def _shown(workload: Workload, values: list[float]) -> str:
    middle, low, high = statistics.median(values), min(values), max(values)
    unit = {"rate": f" {workload.unit}s/s", "ideal": "x ideal"}.get(workload.per, f" µs/{workload.unit}")
    digits = 2 if workload.per == "ideal" else (0 if workload.per == "rate" else 1)
    return f"{middle:,.{digits}f}{unit} ({low:,.{digits}f}-{high:,.{digits}f})"


def _measure(workload: Workload, design: str, repeat: int, unit: float) -> tuple[float, float]:
    """(figure per unit, hand-offs per unit) of one run of `workload` on `design`."""
    core.ACTORS = design
    run = workload.actorgraph()
    try:
        figure = _per_unit(workload, median_seconds(run, repeat))
        before = switches()
        run()
        handoffs = (switches() - before) / workload.units / unit
    finally:
        getattr(run, "close", lambda: None)()
        core.ACTORS = None
    return figure, handoffs


def main(argv: list[str] | None = None) -> int:
    """Print the table."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=5, help="timed runs per workload and design (median)")
    parser.add_argument("--runs", type=int, default=3, help="interleaved runs of the whole comparison")
    parser.add_argument("--only", default="", help="only workloads whose name contains this")
    args = parser.parse_args(argv)
    have_langgraph = importlib.util.find_spec("langgraph") is not None
    unit = ping_pong_switches()
    workloads = [w for w in core.WORKLOADS if args.only in w.name]
    figures: dict[tuple[str, str], list[float]] = {}
    handoffs: dict[tuple[str, str], list[float]] = {}
    theirs: dict[str, list[float]] = {}
    for _ in range(args.runs):
        for workload in workloads:
            for design in DESIGNS:
                figure, handoff = _measure(workload, design, args.repeat, unit)
                figures.setdefault((workload.name, design), []).append(figure)
                handoffs.setdefault((workload.name, design), []).append(handoff)
            if have_langgraph and workload.langgraph is not None:
                seconds = median_seconds(workload.langgraph(), args.repeat)
                theirs.setdefault(workload.name, []).append(_per_unit(workload, seconds))
    print(f"### Actor designs (median of {args.runs} runs of {args.repeat}; range in brackets)\n")
    print("| workload | threads | pooled | LangGraph | hand-offs threads | hand-offs pooled |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for workload in workloads:
        cells = [_shown(workload, figures[workload.name, d]) for d in DESIGNS]
        lg = _shown(workload, theirs[workload.name]) if workload.name in theirs else "n/a"
        hand = [f"{statistics.median(handoffs[workload.name, d]):.2f}" for d in DESIGNS]
        print(f"| {workload.name} | {cells[0]} | {cells[1]} | {lg} | {hand[0]} | {hand[1]} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
