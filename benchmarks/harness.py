"""Timing helpers and the result table shared by every benchmark module."""

from __future__ import annotations

import gc
import queue
import statistics
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

__all__ = ["Floor", "Row", "Workload", "median_seconds", "ping_pong", "table"]

PING_PONGS = 2000


def ping_pong(rounds: int = PING_PONGS) -> float:
    """Seconds of one round trip between two threads through `queue.SimpleQueue`s.

    The physical floor of an actor design: one hand-off there and one back. A
    single-task superstep needs one coordinator-to-vertex round trip and no more.
    """
    there: queue.SimpleQueue[int | None] = queue.SimpleQueue()
    back: queue.SimpleQueue[int] = queue.SimpleQueue()

    def echo() -> None:
        while (item := there.get()) is not None:
            back.put(item)

    thread = threading.Thread(target=echo, daemon=True)
    thread.start()
    for i in range(50):  # warm up
        there.put(i)
        back.get()
    start = time.perf_counter()
    for i in range(rounds):
        there.put(i)
        back.get()
    seconds = (time.perf_counter() - start) / rounds
    there.put(None)
    thread.join()
    return seconds


@dataclass
class Floor:
    """Ping-pong samples taken between the workloads of one benchmark run."""

    samples: list[float] = field(default_factory=list)

    def sample(self) -> float:
        """Measure the floor now and remember it."""
        seconds = ping_pong()
        self.samples.append(seconds)
        return seconds

    @property
    def median(self) -> float:
        """The run's floor: the median of its samples."""
        return statistics.median(self.samples)


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
    """One line of the result table.

    Attributes:
        floors: the workload's time per unit as a multiple of the run's ping-pong
            (empty for workloads that are not per-unit times).
    """

    name: str
    unit: str
    ours: str
    theirs: str
    ratio: str
    floors: str = ""


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


def measure(workload: Workload, repeat: int, floor: Floor | None = None) -> Row:
    """Run a workload on both libraries and describe the result.

    With `floor`, a ping-pong is sampled before the workload, so the floor of the
    run is measured interleaved with the workloads.
    """
    if floor is not None:
        floor.sample()
    ours_run = workload.actorgraph()
    seconds = median_seconds(ours_run, repeat)
    ours_text, ours = _figure(workload, seconds)
    close = getattr(ours_run, "close", None)
    if close is not None:
        close()
    floors = ""
    if floor is not None and workload.per in ("time", "rate"):
        floors = f"{seconds / workload.units / floor.sample():.2f}"
    if workload.langgraph is None:
        return Row(workload.name, workload.unit, ours_text, "n/a", "n/a", floors)
    theirs_text, theirs = _figure(workload, median_seconds(workload.langgraph(), repeat))
    ratio = ours / theirs if workload.per == "rate" else theirs / ours
    return Row(workload.name, workload.unit, ours_text, theirs_text, f"{ratio:.1f}x", floors)


def table(rows: list[Row], title: str, floor: Floor | None = None) -> str:
    """A Markdown table of the rows ("faster" is LangGraph's figure over ours).

    With `floor`, a column gives each row's time per unit in ping-pongs of this run.
    """
    head = "| workload | actorgraph | LangGraph | actorgraph faster by |"
    rule = "| --- | ---: | ---: | ---: |"
    if floor is not None:
        head += " ping-pongs per unit |"
        rule += " ---: |"
    lines = [f"### {title}", ""]
    if floor is not None:
        spread = f"{min(floor.samples) * 1e6:.1f}-{max(floor.samples) * 1e6:.1f}"
        lines += [f"Ping-pong floor this run: {floor.median * 1e6:.1f} µs (samples {spread} µs).", ""]
    lines += [head, rule]
    for r in rows:
        line = f"| {r.name} | {r.ours} | {r.theirs} | {r.ratio} |"
        lines.append(line + (f" {r.floors or 'n/a'} |" if floor is not None else ""))
    return "\n".join(lines)
