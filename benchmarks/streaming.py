"""What watching a run costs: stream in each mode against invoke, on the core workloads.

Invoke and stream run alternately and the overhead is the median of the
per-pair ratios, so a burst of load on a shared machine hits both sides of a
pair instead of one table column.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from typing import Any

from benchmarks import core
from benchmarks.harness import Row

__all__ = ["rows"]


def _timed(run: Callable[[], object]) -> float:
    start = time.perf_counter()
    run()
    return time.perf_counter() - start


def rows(repeat: int) -> list[Row]:
    """Per-unit times of invoke and stream("values"/"updates"), and the paired overhead."""
    out = []
    for name, make, units, unit in (
        (f"loop x {core.LOOP}", core.ag_loop, core.LOOP, "superstep"),
        (f"chain of {core.CHAIN}", core.ag_chain, core.CHAIN, "vertex"),
    ):
        runner = make()

        def consume(mode: str, app: Any = runner.app, state: Any = runner.state) -> Callable[[], None]:
            def drain() -> None:
                for _ in app.stream(state, mode=mode):
                    pass

            return drain

        modes = {"values": consume("values"), "updates": consume("updates")}
        for warm_up in (runner, *modes.values()):
            warm_up()
        base: list[float] = []
        streamed: dict[str, list[float]] = {mode: [] for mode in modes}
        for _ in range(max(repeat, 3) * 3):
            base.append(_timed(runner))
            for mode, stream_run in modes.items():
                streamed[mode].append(_timed(stream_run))
        invoke = statistics.median(base) / units * 1e6
        for mode, times in streamed.items():
            overhead = statistics.median(t / b for t, b in zip(times, base, strict=True)) - 1
            per_unit = statistics.median(times) / units * 1e6
            out.append(
                Row(
                    f"{name}, stream(mode={mode!r})",
                    unit,
                    f"{per_unit:,.1f} µs/{unit}",
                    f"{invoke:,.1f} µs/{unit}",
                    f"{overhead * 100:+.0f}%",
                )
            )
        runner.close()
    return out
