"""Clocks: where a retry waits out its backoff, so tests can use `actorgraph.testing.FakeClock`.

A task waiting to be retried costs a timer entry, not a thread: the run asks
the clock to call it back after the backoff. The real clock is the graph's
timer thread (`_timer.Timer`); `FakeClock` calls back at once and records the wait.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

__all__ = ["Clock"]


class Clock(Protocol):
    """What the engine needs of a clock: call a function later, or not at all."""

    def call_later(self, seconds: float, fn: Callable[[], None]) -> object:
        """Call `fn()` after `seconds` (from another thread); return a handle for `cancel`."""
        ...

    def cancel(self, handle: object) -> None:
        """Forget a call that has not happened yet (a no-op when it has)."""
        ...
