"""What every vertex pool shares, whatever runs its attempts: the bound, the queue, the timeouts.

A pool runs at most `concurrency` attempts of its vertex at once; orders beyond
the bound wait in its queue, in order; a closed pool takes no more work; an
attempt that overruns the vertex's `timeout` is reported to its coordinator as
`TimedOut` (the coordinator then abandons it). The thread backend's
`VertexPool` (slots are actors) and the Ray backend's `RayPool` (slots are calls
in flight) say only what a slot is and how an order starts.
"""

from __future__ import annotations

import contextlib
import threading
from abc import ABC, abstractmethod
from collections import deque
from collections.abc import Callable
from typing import Protocol

import pykka

from actorgraph._actors.messages import Order, TimedOut
from actorgraph._actors.timer import Timer
from actorgraph._model.errors import ActorGraphError
from actorgraph._model.spec import GraphSpec, VertexSpec

__all__ = ["BoundedPool", "Joinable", "Worker", "closed_pool"]


class Joinable(Protocol):
    """What `close()` waits for: a `threading.Thread`, or the end of an actor without a thread of its own."""

    @property
    def ident(self) -> int | None:
        """The thread it runs on now (for its stack), or None."""
        ...

    def join(self, timeout: float | None = None) -> None:
        """Wait up to `timeout` seconds for it to end."""
        ...

    def is_alive(self) -> bool:
        """True until it ended."""
        ...


class Worker(Protocol):
    """What runs a vertex's attempts: a vertex actor, a scheduler thread, an event loop."""

    @property
    def busy(self) -> bool:
        """True while it runs an attempt."""
        ...

    @property
    def thread(self) -> Joinable | None:
        """What `close()` waits for (None before it started)."""
        ...


class BoundedPool(ABC):
    """A vertex's bound on attempts at once, its queue of waiting orders, and its timeouts.

    Subclasses hold `_lock` while they change their slots, and call `_admit`
    and `_next_queued` under it.
    """

    def __init__(self, spec: GraphSpec, vertex: VertexSpec, timer: Callable[[], Timer]) -> None:
        """An empty, open pool for `vertex` of `spec`; `timer` gives the backend's timer."""
        self.spec = spec
        self.vertex = vertex
        self.timer = timer
        self._lock = threading.Lock()
        self._queue: deque[Order] = deque()
        self._closed = False
        self.bound = vertex.concurrency  # attempts at once (a backend may lower a default it cannot afford)

    @property
    def closed(self) -> bool:
        """True once the pool's graph was closed: it takes no more work."""
        return self._closed

    @abstractmethod
    def _used(self) -> int:
        """How many slots are taken now (called with `_lock` held)."""

    @abstractmethod
    def _is_running(self, token: int) -> bool:
        """Whether attempt `token` still runs in a slot (called with `_lock` held)."""

    def _admit(self, order: Order) -> bool:
        """True when a slot is free for `order`; else queue it (with `_lock` held).

        Raises:
            ActorGraphError: the pool is closed (its graph was closed).
        """
        if self._closed:
            raise closed_pool(self.vertex.name)
        if self._used() < self.bound:
            return True
        self._queue.append(order)
        return False

    def _next_queued(self) -> Order | None:
        """The first waiting order, if the pool is open and a slot is free (with `_lock` held)."""
        if self._closed or not self._queue or self._used() >= self.bound:
            return None
        return self._queue.popleft()

    def _close(self) -> None:
        """Take no more work and drop what waits (with `_lock` held)."""
        self._closed = True
        self._queue.clear()

    def _arm(self, order: Order) -> object:
        """Start `order`'s timeout; the handle cancels it (`self.timer().cancel(handle)`)."""
        return self.timer().call_later(self.vertex.timeout or 0.0, lambda: self._timed_out(order))

    def _timed_out(self, order: Order) -> None:
        """Timer callback: tell the coordinator that `order` overran, if it still runs."""
        with self._lock:
            running = self._is_running(order.token)
        if running:
            with contextlib.suppress(pykka.ActorDeadError):  # the graph was closed meanwhile
                order.reply_to.tell(TimedOut(order.run_id, order.token))


def closed_pool(vertex: str) -> ActorGraphError:
    """The error of submitting to the pool of `vertex` after its graph was closed."""
    return ActorGraphError(f"the pool of vertex {vertex!r} is closed; compile the graph again to run it")
