"""One timer thread per compiled graph: per-vertex timeouts and retry backoff.

Started on first use and stopped by `close()`, so a graph that never times out
and never retries has no timer thread at all. Scheduling wakes the thread only
when the new call is due before every other one, and cancelling is O(1): a
cancelled call stays in the heap and is skipped when it comes up, so a vertex
with a timeout costs the timer thread at most one wake-up per timeout period,
not one per task.
"""

from __future__ import annotations

import heapq
import itertools
import threading
import time
from collections.abc import Callable
from typing import Any

from actorgraph._actors.log import log
from actorgraph._model.errors import ActorGraphError

__all__ = ["Timer"]


class Timer:
    """Calls functions after a delay, on its own thread (the real `Clock`)."""

    def __init__(self, name: str = "actorgraph-timer") -> None:
        self._name = name
        self._cond = threading.Condition()
        self._heap: list[tuple[float, int, Callable[[], None]]] = []
        self._pending: set[int] = set()  # handles not yet called nor cancelled
        self._seq = itertools.count()
        self._thread: threading.Thread | None = None
        self._closed = False

    def call_later(self, seconds: float, fn: Callable[[], None]) -> int:
        """Call `fn()` after `seconds` on the timer thread; return a handle for `cancel`."""
        with self._cond:
            if self._closed:
                msg = "the graph's timer is closed; compile the graph again to run it"
                raise ActorGraphError(msg)
            handle = next(self._seq)
            entry = (time.monotonic() + seconds, handle, fn)
            heapq.heappush(self._heap, entry)
            self._pending.add(handle)
            if self._thread is None:
                self._thread = threading.Thread(target=self._loop, name=self._name, daemon=True)
                self._thread.start()
            elif self._heap[0] is entry:  # due before everything else: the thread sleeps too long
                self._cond.notify()
        return handle

    def cancel(self, handle: Any) -> None:
        """Forget a pending call (a no-op when it already ran)."""
        with self._cond:
            self._pending.discard(handle)

    def close(self) -> None:
        """Drop pending calls and stop the thread."""
        with self._cond:
            self._closed = True
            self._heap.clear()
            self._pending.clear()
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
                if handle not in self._pending:
                    continue  # cancelled
                self._pending.discard(handle)
            try:
                fn()
            except Exception:  # noqa: BLE001 - a failing callback must not stop every later call
                log("error", "timer callback failed", exc_info=True)
