"""One timer thread per compiled graph, for per-vertex timeouts.

Started on first use and stopped by `close()`, so a graph without timeouts has
no timer thread at all.
"""

from __future__ import annotations

import heapq
import itertools
import threading
import time
from collections.abc import Callable

from actorgraph._errors import ActorGraphError
from actorgraph._log import log

__all__ = ["Timer"]


class Timer:
    """Calls functions after a delay, on its own thread."""

    def __init__(self, name: str = "actorgraph-timer") -> None:
        self._name = name
        self._cond = threading.Condition()
        self._heap: list[tuple[float, int, Callable[[], None]]] = []
        self._cancelled: set[int] = set()
        self._seq = itertools.count()
        self._thread: threading.Thread | None = None
        self._closed = False

    def call_later(self, delay: float, fn: Callable[[], None]) -> int:
        """Call `fn()` after `delay` seconds; return a handle for `cancel`."""
        with self._cond:
            if self._closed:
                msg = "the timer is closed"
                raise ActorGraphError(msg)
            handle = next(self._seq)
            heapq.heappush(self._heap, (time.monotonic() + delay, handle, fn))
            if self._thread is None:
                self._thread = threading.Thread(target=self._loop, name=self._name, daemon=True)
                self._thread.start()
            self._cond.notify()
        return handle

    def cancel(self, handle: int) -> None:
        """Forget a pending call (a no-op when it already ran)."""
        with self._cond:
            if any(h == handle for _, h, _ in self._heap):
                self._cancelled.add(handle)

    def close(self) -> None:
        """Drop pending calls and stop the thread."""
        with self._cond:
            self._closed = True
            self._heap.clear()
            self._cond.notify()
            thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=5)

    def _loop(self) -> None:
        while True:
            with self._cond:
                while not self._closed and (not self._heap or self._heap[0][0] > time.monotonic()):
                    wait = self._heap[0][0] - time.monotonic() if self._heap else None
                    self._cond.wait(wait)
                if self._closed:
                    return
                _, handle, fn = heapq.heappop(self._heap)
                if handle in self._cancelled:
                    self._cancelled.discard(handle)
                    continue
            try:
                fn()
            except Exception:  # noqa: BLE001 - a failing callback must not stop every later timeout
                log("error", "timer callback failed", exc_info=True)
