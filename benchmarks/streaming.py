"""What watching a run costs: stream in each mode against invoke: `python -m benchmarks.streaming`.

Invoke and stream run alternately and the overhead is the median of the
per-pair ratios, so a burst of load on a shared machine hits both sides of a
pair instead of one table column. Beside it, the CPU overhead: the process's
CPU time (every thread's: the run's and the stream's consumer) over all the
stream runs against all the invoke runs, which a loaded machine moves less
than wall time.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import time
from collections.abc import Callable
from typing import Any

from benchmarks import core

__all__ = ["report", "rows"]


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _timed(run: Callable[[], object]) -> tuple[float, float]:
    """Wall and CPU seconds of `run()`."""
    cpu, start = _cpu(), time.perf_counter()
    run()
    return time.perf_counter() - start, _cpu() - cpu


def _drain(app: Any, state: Any, mode: str) -> Callable[[], None]:
    def drain() -> None:
        for _ in app.stream(state, mode=mode):
            pass

    return drain


def rows(repeat: int) -> list[tuple[str, ...]]:
    """Per-unit times of invoke and stream("values"/"updates"), the paired overhead and the CPU overhead."""
    out = []
    for name, make, units, unit in (
        (f"loop x {core.LOOP}", core.ag_loop, core.LOOP, "superstep"),
        (f"chain of {core.CHAIN}", core.ag_chain, core.CHAIN, "vertex"),
    ):
        runner = make()
        modes = {mode: _drain(runner.app, runner.state, mode) for mode in ("values", "updates")}
        for warm_up in (runner, *modes.values()):
            warm_up()
        base: list[tuple[float, float]] = []
        streamed: dict[str, list[tuple[float, float]]] = {mode: [] for mode in modes}
        for _ in range(max(repeat, 3) * 3):
            base.append(_timed(runner))
            for mode, stream_run in modes.items():
                streamed[mode].append(_timed(stream_run))
        invoke = statistics.median(wall for wall, _ in base) / units * 1e6
        invoke_cpu = sum(cpu for _, cpu in base)
        for mode, times in streamed.items():
            overhead = statistics.median(t / b for (t, _), (b, _) in zip(times, base, strict=True)) - 1
            cpu_overhead = sum(cpu for _, cpu in times) / invoke_cpu - 1
            per_unit = statistics.median(wall for wall, _ in times) / units * 1e6
            out.append(
                (
                    f"{name}, stream(mode={mode!r})",
                    f"{per_unit:,.1f} µs/{unit}",
                    f"{invoke:,.1f} µs/{unit}",
                    f"{overhead * 100:+.0f}%",
                    f"{cpu_overhead * 100:+.0f}%",
                )
            )
        runner.close()
    return out


def report(repeat: int) -> str:
    """The streaming table, in Markdown."""
    pairs = max(repeat, 3) * 3
    lines = [
        f"### Streaming overhead ({pairs} alternating pairs; wall: median of the paired ratios)",
        "",
        "| workload | streamed | invoke | overhead (wall) | overhead (CPU) |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    lines += ["| " + " | ".join(row) + " |" for row in rows(repeat)]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=7, help="pairs: three times this (at least 9)")
    args = parser.parse_args(argv)
    print(report(args.repeat))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
