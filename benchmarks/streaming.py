"""What watching a run costs: invoke against stream in each mode, on the core workloads."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from benchmarks import core
from benchmarks.harness import Row, median_seconds

__all__ = ["rows"]


def rows(repeat: int) -> list[Row]:
    """Microseconds per unit for invoke and for stream("values"/"updates"), and the overhead."""
    out = []
    for name, make, units, unit in (
        (f"loop x {core.LOOP}", core.ag_loop, core.LOOP, "superstep"),
        (f"chain of {core.CHAIN}", core.ag_chain, core.CHAIN, "vertex"),
    ):
        runner = make()
        app, state = runner.app, runner.state

        def consume(mode: str, app: Any = app, state: Any = state) -> Callable[[], None]:
            def run() -> None:
                for _ in app.stream(state, mode=mode):
                    pass

            return run

        base = median_seconds(runner, repeat) / units * 1e6
        for mode in ("values", "updates"):
            streamed = median_seconds(consume(mode), repeat) / units * 1e6
            overhead = f"+{(streamed / base - 1) * 100:.0f}%"
            out.append(
                Row(
                    f"{name}, stream(mode={mode!r})",
                    unit,
                    f"{streamed:,.1f} µs/{unit}",
                    f"{base:,.1f} µs/{unit}",
                    overhead,
                )
            )
        runner.close()
    return out
