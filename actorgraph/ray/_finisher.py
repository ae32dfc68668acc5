"""The finisher: the one thread of the driver that finishes Ray tasks whose answers landed."""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from typing import Any, Protocol

from actorgraph._actors.log import log
from actorgraph._model.spec import VertexSpec

__all__ = ["Finisher", "Lands"]


class Lands(Protocol):
    """Where an answer is finished: a vertex's pool (`RayPool`)."""

    vertex: VertexSpec

    def landed(self, token: int, answer: Any) -> None:
        """Finish attempt `token` with `answer` (what the partition returned, or the Ray error)."""


class Finisher:
    """The thread that finishes tasks whose answers landed.

    Ray calls back on its own threads, which must not run user code (routers,
    reducers) or block; the callbacks only queue the answer here. When no answer
    lands for `every` seconds, the thread calls `idle` (the backend checks that
    Ray is still there: after `ray.shutdown()` no answer ever lands).
    """

    def __init__(self, idle: Callable[[], None] | None = None, every: float = 0.5) -> None:
        """Start the thread."""
        self._inbox: queue.SimpleQueue[tuple[Lands, int, Any] | None] = queue.SimpleQueue()
        self._idle, self._every = idle, every
        self._thread = threading.Thread(target=self._loop, name="actorgraph-ray-finisher", daemon=True)
        self._thread.start()

    def tell(self, landed: tuple[Lands, int, Any]) -> None:
        """Queue `(pool, token, answer)`: that attempt's answer (or its Ray error) landed."""
        self._inbox.put(landed)

    def stop(self, timeout: float = 5.0) -> None:
        """Finish what is queued, then end the thread."""
        self._inbox.put(None)
        if threading.current_thread() is not self._thread:
            self._thread.join(timeout)

    def _loop(self) -> None:
        while True:
            try:
                landed = self._inbox.get(timeout=self._every)
            except queue.Empty:
                self._quiet()
                continue
            if landed is None:
                return
            pool, token, answer = landed
            try:
                pool.landed(token, answer)
            except Exception:  # noqa: BLE001 - never lose the thread: log, and go on with the next
                log("error", "finishing a Ray task failed", vertex=pool.vertex.name, exc_info=True)

    def _quiet(self) -> None:
        if self._idle is None:
            return
        try:
            self._idle()
        except Exception:  # noqa: BLE001 - never lose the thread
            log("error", "checking the Ray connection failed", exc_info=True)
