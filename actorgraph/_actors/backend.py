"""Where vertex work runs: the `Backend` a compiled graph's pools come from.

The default keeps every vertex actor a thread of this process (`ThreadBackend`,
the `VertexPool` of `pool`), and runs an async vertex's attempts as tasks on an
event loop thread (`async_pool`), so an awaiting attempt holds no thread.
Another backend (`actorgraph.ray.RayBackend`) gives pools that run attempts
elsewhere; the coordinator, the pure superstep logic and the checkpointer stay
in this process whichever backend runs the vertices, so a run means the same on
every backend.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Protocol

from actorgraph._actors.messages import Order
from actorgraph._actors.pool import VertexPool
from actorgraph._actors.timer import Timer
from actorgraph._engine.call import is_async
from actorgraph._model.spec import GraphSpec, VertexSpec

__all__ = ["THREADS", "Backend", "Pool", "ThreadBackend", "Worker"]


class Worker(Protocol):
    """A thread of this process that runs a vertex's attempts: a vertex actor, or an event loop."""

    @property
    def busy(self) -> bool:
        """True while it runs an attempt."""
        ...

    @property
    def thread(self) -> threading.Thread | None:
        """Its thread (None before it started)."""
        ...


class Pool(Protocol):
    """The workers of one vertex, bounded by its `concurrency`."""

    def submit(self, order: Order) -> None:
        """Run the attempt `order` (now, or when a worker frees up); its `Done` goes to `order.reply_to`."""
        ...

    def abandon(self, token: int) -> bool:
        """Give up on the attempt `token` (it overran its timeout); False if it already finished."""
        ...

    def stop(self) -> Sequence[Worker]:
        """Stop taking work; return the local workers whose threads the caller may wait for."""
        ...


class Backend(Protocol):
    """Makes the pools of a compiled graph's vertices."""

    def check(self, spec: GraphSpec) -> None:
        """Refuse, at compile time, a graph this backend cannot run (naming the vertex and why)."""
        ...

    def pool(self, spec: GraphSpec, vertex: VertexSpec, timer: Callable[[], Timer]) -> Pool:
        """The pool of `vertex` of graph `spec` (`timer()` gives the graph's timer thread)."""
        ...


class ThreadBackend:
    """Every vertex actor is a thread of this process (the default)."""

    def check(self, spec: GraphSpec) -> None:
        """Every graph runs on threads."""

    def pool(self, spec: GraphSpec, vertex: VertexSpec, timer: Callable[[], Timer]) -> Pool:
        """A pool of vertex actors, started on demand; an async vertex's attempts go on an event loop."""
        if is_async(vertex.fn):
            from actorgraph._actors.async_pool import AsyncPool  # noqa: PLC0415 - asyncio only when used

            return AsyncPool(spec, vertex, timer)
        return VertexPool(spec, vertex, timer)

    def __repr__(self) -> str:
        return "ThreadBackend()"


THREADS = ThreadBackend()
