"""A vertex's bounded pool of actors, shared by every run of a compiled graph.

Actors start on demand, up to the vertex's `concurrency`, and are reused across
runs (starting one costs far more than a task). Orders beyond the bound wait in
the pool's queue; a worker that finishes takes the next one itself, so queued
work costs no extra message hop.
"""

from __future__ import annotations

import contextlib
import threading
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING

import pykka

from actorgraph._errors import ActorGraphError
from actorgraph._messages import Order, TimedOut
from actorgraph._spec import GraphSpec, VertexSpec
from actorgraph._vertex import VertexActor

if TYPE_CHECKING:
    from actorgraph._clock import Clock
    from actorgraph._timer import Timer

__all__ = ["VertexPool"]


class VertexPool:
    """The actors of one vertex."""

    def __init__(self, spec: GraphSpec, vertex: VertexSpec, clock: Clock, timer: Callable[[], Timer]) -> None:
        self.spec = spec
        self.vertex = vertex
        self.clock = clock
        self.timer = timer
        self.running: dict[int, VertexActor] = {}  # token -> actor, for vertices with a timeout
        self._lock = threading.Lock()
        self._idle: list[VertexActor] = []
        self._live: set[VertexActor] = set()
        self._all: list[VertexActor] = []
        self._queue: deque[Order] = deque()
        self._closed = False

    @property
    def size(self) -> int:
        """How many actors are alive and not abandoned."""
        return len(self._live)

    def submit(self, order: Order) -> None:
        """Run `order` on an idle actor, a new one, or when one frees up."""
        with self._lock:
            if self._closed:
                msg = f"the pool of vertex {self.vertex.name!r} is closed"
                raise ActorGraphError(msg)
            if self._idle:
                actor = self._idle.pop()
            elif len(self._live) < self.vertex.concurrency:
                actor = self._start()
            else:
                self._queue.append(order)
                return
        try:
            actor.actor_ref.tell(order)
        except pykka.ActorDeadError:
            self.retire(actor)
            self.submit(order)

    resubmit = submit

    def next_order(self, actor: VertexActor) -> Order | None:
        """The next queued order for `actor`, or None (the actor is then idle)."""
        with self._lock:
            if actor.abandoned or self._closed or actor not in self._live:
                return None
            if self._queue:
                return self._queue.popleft()
            self._idle.append(actor)
            return None

    def retire(self, actor: VertexActor) -> None:
        """Forget a stopped or dead actor; start a replacement if work is waiting."""
        with self._lock:
            self._forget(actor)

    def abandon(self, token: int) -> bool:
        """Give up on the actor running `token` (it overran its timeout).

        The actor finishes (or not) on its own; its late answer is discarded and
        it stops itself. A replacement takes any queued work.

        Returns:
            True when an actor was still running that order.
        """
        actor = self.running.pop(token, None)
        if actor is None:
            return False
        with self._lock:
            actor.abandoned = True
            self._forget(actor)
        return True

    def timed_out(self, order: Order) -> None:
        """Timer callback: tell the coordinator that `order` overran."""
        if order.token in self.running:
            with contextlib.suppress(pykka.ActorDeadError):  # the graph was closed meanwhile
                order.reply_to.tell(TimedOut(order.run_id, order.token))

    def stop(self) -> list[VertexActor]:
        """Stop every actor without waiting; return them (the caller waits for their threads).

        Abandoned actors (stuck past a timeout) are returned too: their threads
        end when the stuck call returns.
        """
        with self._lock:
            self._closed = True
            self._queue.clear()
            actors = list(self._all)
            self._idle.clear()
            self._live.clear()
        for actor in actors:
            with contextlib.suppress(pykka.ActorDeadError):
                actor.actor_ref.stop(block=False)
        return actors

    def _start(self) -> VertexActor:
        self._all[:] = [a for a in self._all if a.thread is None or a.thread.is_alive()]
        VertexActor.start(self, self._all)
        actor = self._all[-1]
        self._live.add(actor)
        return actor

    def _forget(self, actor: VertexActor) -> None:
        self._live.discard(actor)
        if actor in self._idle:
            self._idle.remove(actor)
        if self._queue and not self._closed and len(self._live) < self.vertex.concurrency:
            order = self._queue.popleft()
            fresh = self._start()
            fresh.actor_ref.tell(order)
