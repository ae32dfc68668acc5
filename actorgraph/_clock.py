"""Clocks: where retry backoff sleeps, so tests can use `actorgraph.testing.FakeClock`."""

from __future__ import annotations

import threading
import time
from typing import Protocol

__all__ = ["Clock", "SystemClock"]


class Clock(Protocol):
    """What the engine needs of a clock: the time, and an interruptible sleep."""

    def monotonic(self) -> float:
        """Seconds from an arbitrary origin; never goes backwards."""
        ...

    def sleep(self, seconds: float, cancel: threading.Event | None = None) -> bool:
        """Wait `seconds`; return False if `cancel` was set first."""
        ...


class SystemClock:
    """The real clock."""

    def monotonic(self) -> float:
        """`time.monotonic()`."""
        return time.monotonic()

    def sleep(self, seconds: float, cancel: threading.Event | None = None) -> bool:
        """Sleep, waking early (and returning False) if `cancel` is set."""
        if seconds <= 0:
            return not (cancel is not None and cancel.is_set())
        if cancel is None:
            time.sleep(seconds)
            return True
        return not cancel.wait(seconds)
