"""A run's cancellation: a flag any thread may set, that sleeps wake on and callbacks follow."""

from __future__ import annotations

import threading
from collections.abc import Callable

from actorgraph._actors.log import log

__all__ = ["Cancellation"]


class Cancellation(threading.Event):
    """Set once when a run is cancelled; `wait` wakes a backoff sleep, `on_set` reaches other loops.

    A `threading.Event`, so a `Clock.sleep(seconds, cancel)` can wait on it; `on_set`
    lets an async vertex's event loop cancel the coroutine it is running.
    """

    def __init__(self) -> None:
        super().__init__()
        self._lock = threading.Lock()
        self._callbacks: dict[int, Callable[[], None]] = {}
        self._next = 0

    def set(self) -> None:
        """Cancel: wake every waiter and call every registered callback once."""
        with self._lock:
            if self.is_set():
                return
            super().set()
            callbacks = list(self._callbacks.values())
            self._callbacks.clear()
        for callback in callbacks:
            _call(callback)

    def on_set(self, callback: Callable[[], None]) -> Callable[[], None]:
        """Call `callback` when this is set (at once if it already is); return a remover."""
        with self._lock:
            if not self.is_set():
                key = self._next
                self._next += 1
                self._callbacks[key] = callback
                return lambda: self._forget(key)
        _call(callback)
        return _nothing

    def _forget(self, key: int) -> None:
        with self._lock:
            self._callbacks.pop(key, None)


def _call(callback: Callable[[], None]) -> None:
    try:
        callback()
    except Exception:  # noqa: BLE001 - one failing callback must not keep the others from running
        log("warning", "cancellation callback failed", exc_info=True)


def _nothing() -> None:
    return None
