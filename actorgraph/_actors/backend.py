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

from collections.abc import Callable, Sequence
from typing import Protocol

from actorgraph._actors.bounded import Worker
from actorgraph._actors.dispatcher import shared_dispatcher
from actorgraph._actors.messages import Order
from actorgraph._actors.pool import VertexPool
from actorgraph._actors.timer import Timer
from actorgraph._engine.call import is_async
from actorgraph._model.errors import ConfigError
from actorgraph._model.spec import GraphSpec, VertexSpec

__all__ = ["DEFAULT", "POOLED", "THREADS", "Backend", "Pool", "ThreadBackend", "Worker", "choose_backend"]


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
    """Every vertex actor is a thread of this process (the default), or shares the dispatcher's threads."""

    def __init__(self, *, pooled: bool = False) -> None:
        """With `pooled`, vertex actors own no thread: the process's dispatcher runs them."""
        self.pooled = pooled

    def check(self, spec: GraphSpec) -> None:
        """Every graph runs on threads."""

    def pool(self, spec: GraphSpec, vertex: VertexSpec, timer: Callable[[], Timer]) -> Pool:
        """A pool of vertex actors, started on demand; an async vertex's attempts go on an event loop."""
        if is_async(vertex.fn):
            from actorgraph._actors.async_pool import AsyncPool  # noqa: PLC0415 - asyncio only when used

            return AsyncPool(spec, vertex, timer)
        return VertexPool(spec, vertex, timer, shared_dispatcher() if self.pooled else None)

    def __repr__(self) -> str:
        return "ThreadBackend(pooled=True)" if self.pooled else "ThreadBackend()"


THREADS = ThreadBackend()
POOLED = ThreadBackend(pooled=True)
DEFAULT = POOLED  # compile() without backend= nor actors=
ACTORS = ("pooled", "threads")


def choose_backend(backend: Backend | None, actors: str | None) -> Backend:
    """The backend of `compile(backend=..., actors=...)`: `backend`, or the thread backend for `actors`.

    Raises:
        ConfigError: `actors` is not "pooled" or "threads", or is given with another backend.
    """
    if actors is not None and actors not in ACTORS:
        msg = f"actors must be one of {', '.join(map(repr, ACTORS))}, got {actors!r}"
        raise ConfigError(msg)
    if backend is None:
        return DEFAULT if actors is None else (POOLED if actors == "pooled" else THREADS)
    if actors is not None:
        msg = f"actors={actors!r} is for the thread backend; {backend!r} places its own vertex work"
        raise ConfigError(msg)
    return backend
