"""Helpers for testing graphs built with actorgraph (part of the product)."""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable

__all__ = ["FakeClock"]


class FakeClock:
    """A clock whose waits end at once and are recorded.

    Pass it to `Graph.compile(clock=FakeClock())` so retry backoff does not
    make tests wait; `sleeps` then lists every backoff in order. (Vertex
    timeouts still use real time.)

    Attributes:
        sleeps: the seconds of every backoff requested, in order.
    """

    def __init__(self, start: float = 0.0) -> None:
        self._now = start
        self._lock = threading.Lock()
        self._handles = itertools.count()
        self.sleeps: list[float] = []

    def monotonic(self) -> float:
        """The fake time: the start plus every backoff so far."""
        with self._lock:
            return self._now

    def call_later(self, seconds: float, fn: Callable[[], None]) -> int:
        """Record the wait, advance the fake time, and call `fn()` at once."""
        with self._lock:
            if seconds > 0:
                self.sleeps.append(seconds)
                self._now += seconds
            handle = next(self._handles)
        fn()
        return handle

    def cancel(self, handle: object) -> None:
        """Nothing to cancel: every call has already happened."""
