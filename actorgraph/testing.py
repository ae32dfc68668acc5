"""Helpers for testing graphs built with actorgraph (part of the product)."""

from __future__ import annotations

import threading

__all__ = ["FakeClock"]


class FakeClock:
    """A clock whose sleeps return at once and are recorded.

    Pass it to `Graph.compile(clock=FakeClock())` so retry backoff does not
    make tests wait; `sleeps` then lists every backoff in order.

    Attributes:
        sleeps: the seconds of every sleep requested, in order.
    """

    def __init__(self, start: float = 0.0) -> None:
        self._now = start
        self._lock = threading.Lock()
        self.sleeps: list[float] = []

    def monotonic(self) -> float:
        """The fake time: the start plus every sleep so far."""
        with self._lock:
            return self._now

    def sleep(self, seconds: float, cancel: threading.Event | None = None) -> bool:
        """Record the sleep, advance the fake time, and return at once."""
        with self._lock:
            if seconds > 0:
                self.sleeps.append(seconds)
                self._now += seconds
        return not (cancel is not None and cancel.is_set())
