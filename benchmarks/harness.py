"""Timing helpers and the result table shared by every benchmark module."""

from __future__ import annotations

import gc
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["Row", "Workload", "median_seconds", "table"]


@dataclass(frozen=True)
class Workload:
    """One measured task, the same for both libraries.

    Attributes:
        name: what the row is called.
        unit: what one unit is ("superstep", "vertex", "invoke", ...).
        units: how many units one run performs.
        actorgraph: builds the graph and returns a zero-argument run function.
        langgraph: the same for LangGraph, or None when there is no equivalent.
        per: "time" reports microseconds per unit; "rate" reports units per second;
            "ideal" reports the wall time as a multiple of `ideal` seconds.
        ideal: the ideal wall time for "ideal" workloads.
    """

    name: str
    unit: str
    units: int
    actorgraph: Callable[[], Callable[[], object]]
    langgraph: Callable[[], Callable[[], object]] | None = None
    per: str = "time"
    ideal: float = 0.0


@dataclass(frozen=True)
class Row:
    """One line of the result table."""

    name: str
    unit: str
    ours: str
    theirs: str
    ratio: str


def median_seconds(run: Callable[[], object], repeat: int, warmup: int = 1) -> float:
    """The median wall time of `run()` over `repeat` runs, after `warmup` runs."""
    for _ in range(warmup):
        run()
    times = []
    for _ in range(repeat):
        gc.collect()
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _figure(workload: Workload, seconds: float) -> tuple[str, float]:
    if workload.per == "rate":
        rate = workload.units / seconds
        return f"{rate:,.0f} {workload.unit}s/s", rate
    if workload.per == "ideal":
        times = seconds / workload.ideal
        return f"{times:.2f}x ideal ({seconds * 1000:.0f} ms)", times
    micros = seconds / workload.units * 1e6
    return f"{micros:,.1f} µs/{workload.unit}", micros


def measure(workload: Workload, repeat: int) -> Row:
    """Run a workload on both libraries and describe the result."""
    ours_run = workload.actorgraph()
    ours_text, ours = _figure(workload, median_seconds(ours_run, repeat))
    close = getattr(ours_run, "close", None)
    if close is not None:
        close()
    if workload.langgraph is None:
        return Row(workload.name, workload.unit, ours_text, "n/a", "n/a")
    theirs_text, theirs = _figure(workload, median_seconds(workload.langgraph(), repeat))
    ratio = ours / theirs if workload.per == "rate" else theirs / ours
    return Row(workload.name, workload.unit, ours_text, theirs_text, f"{ratio:.1f}x")


def table(rows: list[Row], title: str) -> str:
    """A Markdown table of the rows ("faster" is LangGraph's figure over ours)."""
    lines = [
        f"### {title}",
        "",
        "| workload | actorgraph | LangGraph | actorgraph faster by |",
        "| --- | ---: | ---: | ---: |",
    ]
    lines += [f"| {r.name} | {r.ours} | {r.theirs} | {r.ratio} |" for r in rows]
    return "\n".join(lines)
