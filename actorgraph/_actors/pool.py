"""A vertex's bounded pool of actors, shared by every run of a compiled graph, and the actors.

Actors start on demand, up to the vertex's `concurrency`, and are reused across
runs (starting one costs far more than a task). Orders beyond the bound wait in
the pool's queue; an actor that finishes takes the next one itself, so queued
work costs no extra message hop.

A vertex actor only moves messages: it takes an `Order`, runs the attempt with
the pure task runner, and tells the coordinator the `VertexResult`. Anything
that escapes the task runner (a `BaseException` such as an injected
`SystemExit`) kills that actor only: the task is reported as
`VertexActorDiedError` and the pool replaces the actor.

Two details keep a superstep at one round trip between the coordinator and a
vertex: inboxes are C `SimpleQueue`s (pykka's `ActorInbox` protocol), and an
actor asks its pool for its next order *before* it reports, so the coordinator
it wakes does not wait for this thread to let go of the GIL.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import pykka

from actorgraph._actors.attempt_spans import attempt_span
from actorgraph._actors.bounded import BoundedPool, Joinable, Worker
from actorgraph._actors.cancel import Cancellation
from actorgraph._actors.dispatcher import Dispatcher, PooledActor
from actorgraph._actors.live import LiveTurn, adopt, eligible, release_all
from actorgraph._actors.messages import Done, Order
from actorgraph._actors.threaded import ThreadActor
from actorgraph._actors.timer import Timer
from actorgraph._engine.task import run_attempt
from actorgraph._model.errors import RunCancelledError, SerializationError, VertexActorDiedError
from actorgraph._model.records import ErrorInfo, VertexResult
from actorgraph._model.spec import GraphSpec, VertexSpec
from actorgraph.events import TaskStarted

if TYPE_CHECKING:
    import asyncio

__all__ = [
    "PooledVertexActor",
    "VertexActor",
    "VertexPool",
    "cancel_soon",
    "done_of",
    "failed_result",
    "report",
]


class VertexPool(BoundedPool):
    """The actors of one vertex: a slot is a live actor that is not idle."""

    def __init__(
        self,
        spec: GraphSpec,
        vertex: VertexSpec,
        timer: Callable[[], Timer],
        dispatcher: Dispatcher | None = None,
    ) -> None:
        """An empty pool (actors start with the first orders); with `dispatcher`, its actors are pooled."""
        super().__init__(spec, vertex, timer)
        self.dispatcher = dispatcher
        self._claimed = False  # holds a claim on the dispatcher (from its first actor to stop())
        self._running: dict[int, _VertexWork] = {}  # token -> actor, for vertices with a timeout
        self._idle: list[_VertexWork] = []
        self._live: set[_VertexWork] = set()
        self._all: list[_VertexWork] = []

    def _used(self) -> int:
        return len(self._live) - len(self._idle)

    def _is_running(self, token: int) -> bool:
        return token in self._running

    def submit(self, order: Order) -> None:
        """Run `order` on an idle actor, a new one, or when one frees up (or hand it to its live vertex)."""
        if order.task.resumes and adopt(self, order):
            return
        with self._lock:
            if not self._admit(order):
                return
            actor = self._idle.pop() if self._idle else self._start()
        try:
            actor.actor_ref.tell(order)
        except pykka.ActorDeadError:
            self.retire(actor)
            self.submit(order)

    def next_order(self, actor: _VertexWork) -> Order | None:
        """The next queued order for `actor`, or None (the actor is then idle)."""
        with self._lock:
            if actor.abandoned or self._closed or actor not in self._live:
                return None
            if self._queue:
                return self._queue.popleft()
            self._idle.append(actor)
            return None

    def retire(self, actor: _VertexWork) -> None:
        """Forget a stopped or dead actor; start a replacement if work is waiting."""
        with self._lock:
            self._forget(actor)

    def watch(self, order: Order, actor: _VertexWork) -> None:
        """`actor` starts `order` under the vertex's timeout: arm the timer."""
        with self._lock:
            self._running[order.token] = actor
        actor.timer_handle = self._arm(order)

    def unwatch(self, order: Order, actor: _VertexWork) -> None:
        """`actor` finished `order` in time (or not): disarm the timer."""
        with self._lock:
            self._running.pop(order.token, None)
        self.timer().cancel(actor.timer_handle)

    def leave(self, order: Order, actor: _VertexWork) -> None:
        """`actor`'s vertex waits for an answer: it leaves the pool's count, free of `order`'s timeout.

        It stops once its vertex returns; a replacement takes any queued work.
        """
        if self.vertex.timeout is not None:
            self.unwatch(order, actor)
        with self._lock:
            actor.abandoned = True
            self._forget(actor)

    def rejoin(self, order: Order, actor: _VertexWork) -> None:
        """`actor`'s waiting vertex goes on as `order`'s attempt, under the vertex's timeout."""
        if self.vertex.timeout is not None:
            self.watch(order, actor)

    def abandon(self, token: int) -> bool:
        """Give up on the actor running `token` (it overran its timeout).

        The actor finishes (or not) on its own; its late answer is discarded and
        it stops itself. A replacement takes any queued work.

        Returns:
            True when an actor was still running that order.
        """
        with self._lock:
            actor = self._running.pop(token, None)
            if actor is None:
                return False
            actor.abandoned = True
            self._forget(actor)
        return True

    def stop(self) -> Sequence[Worker]:
        """Stop every actor without waiting; return the workers whose threads the caller waits for.

        Abandoned actors (stuck past a timeout) are returned too: their threads
        end when the stuck call returns. Pooled actors have no thread: the
        dispatcher's schedulers are returned when this was its last pool.
        """
        with self._lock:
            if self._closed:
                return []
            self._close()  # before the seats are freed: a vertex asking from now on finds it closed
            actors = list(self._all)
            self._idle.clear()
            self._live.clear()
        release_all(self)  # vertices waiting for answers unwind now
        for actor in actors:
            with contextlib.suppress(pykka.ActorDeadError):
                actor.actor_ref.stop(block=False)
        if self.dispatcher is not None and self._claimed:  # the actors stop, then (if last) the schedulers
            self._claimed = False
            return [*actors, *self.dispatcher.release()]
        return actors

    def _start(self) -> _VertexWork:
        self._all[:] = [a for a in self._all if a.busy or a.actor_ref.is_alive()]
        if self.dispatcher is not None and not self._claimed:  # a graph never run holds no claim
            self.dispatcher.acquire()
            self._claimed = True
        (VertexActor if self.dispatcher is None else PooledVertexActor).start(self, self._all)
        actor = self._all[-1]
        self._live.add(actor)
        return actor

    def _forget(self, actor: _VertexWork) -> None:
        self._live.discard(actor)
        if actor in self._idle:
            self._idle.remove(actor)
        order = self._next_queued()
        if order is not None:
            fresh = self._idle.pop() if self._idle else self._start()
            fresh.actor_ref.tell(order)


class _VertexWork(pykka.Actor):
    """What a vertex actor does, whichever thread runs it: take orders, run attempts, report."""

    def _join(self, pool: VertexPool, born: list[_VertexWork]) -> None:
        born.append(self)  # the pool keeps the object (pykka's ref only holds a weakref)
        self.pool = pool
        self.abandoned = False
        self.thread: Joinable | None = None
        self.timer_handle: object = None
        self._current: Order | None = None
        self._runner: asyncio.Runner | None = None

    @property
    def busy(self) -> bool:
        """True while the actor runs a task (read from other threads, for `close()`)."""
        return self._current is not None and (self.thread is None or self.thread.is_alive())

    def on_receive(self, message: Any) -> None:
        """Run the order, then every order the pool has queued for this vertex."""
        order: Order | None = message if isinstance(message, Order) else None
        while order is not None:
            self._current = order
            try:
                reply = self._run(order)
            except BaseException as exc:  # noqa: BLE001 - contain it: pykka would stop every actor
                self._die(order, exc)
                return
            self._current = None
            following = self.pool.next_order(self)  # before reporting: see the module docstring
            if reply is not None:  # None: a live vertex's wait ended; its outcome was reported
                report(*reply)
            order = following
        if self.abandoned:
            self.stop()

    def on_stop(self) -> None:
        """Hand orders that never started back to the pool; leave it; close its event loop."""
        self.pool.retire(self)
        if self._runner is not None:
            self._runner.close()
        others = []
        while not self.actor_inbox.empty():
            envelope = self.actor_inbox.get()
            if isinstance(envelope.message, Order):
                self.pool.submit(envelope.message)
            else:
                others.append(envelope)
        for envelope in others:  # pykka's teardown answers them (a stop request waits for its reply)
            self.actor_inbox.put(envelope)

    def _run(self, order: Order) -> tuple[Order, Done] | None:
        """Run `order`'s attempt; the order to tell and what (a live vertex's may be another run's)."""
        if order.cancel.is_set():
            cancelled = RunCancelledError("the run was cancelled")
            return order, Done(order.run_id, order.token, failed_result(order, cancelled))
        task = order.task
        if order.env.listen is not None:
            order.env.listen(
                TaskStarted(order.run_id, order.env.thread_id, task.step, task.id, task.vertex, order.attempt)
            )
        pool = self.pool
        timed = pool.vertex.timeout is not None
        turn = LiveTurn(self, order, _tell) if eligible(order) else None
        if timed:
            pool.watch(order, self)
        span = attempt_span(order)  # current while the vertex runs (nothing when the run is not traced)
        try:
            result = run_attempt(
                pool.spec,
                task,
                order.attempt,
                order.env,
                failure=order.failure,
                run_async=self._run_async,
                turn=turn,
            )
            span.outcome(result)
        finally:
            span.close()
            if timed:
                pool.unwatch(order if turn is None else turn.order, self)
        if turn is None:
            return order, done_of(order, result)
        return None if turn.released else (turn.order, done_of(turn.order, result))

    def _run_async(self, awaitable: Awaitable[Any]) -> Any:
        """Run an async vertex's coroutine on this actor's own event loop; cancel it with the run."""
        if self._runner is None:
            import asyncio  # noqa: PLC0415 - asyncio pulls in ssl (4 MiB): only async paths import it

            self._runner = asyncio.Runner()
        cancel = self._current.cancel if self._current is not None else Cancellation()
        # the runner would reuse the context it was created in: hand it this task's
        return self._runner.run(_awaited(awaitable, cancel), context=contextvars.copy_context())

    def _die(self, order: Order, exc: BaseException) -> None:
        died = VertexActorDiedError(
            f"the actor running vertex {order.task.vertex!r} died: {type(exc).__name__}: {exc}"
        )
        died.__cause__ = exc
        try:
            report(order, Done(order.run_id, order.token, failed_result(order, died, retryable=True)))
        finally:
            self.pool.retire(self)
            self.stop()


class VertexActor(_VertexWork, ThreadActor):
    """One worker of a vertex's pool: an inbox and a thread."""

    def __init__(self, pool: VertexPool, born: list[_VertexWork]) -> None:
        ThreadActor.__init__(self)
        self._join(pool, born)


class PooledVertexActor(_VertexWork, PooledActor):
    """One worker of a vertex's pool without a thread of its own: the dispatcher's schedulers run it."""

    def __init__(self, pool: VertexPool, born: list[_VertexWork]) -> None:
        assert pool.dispatcher is not None  # noqa: S101 - only pooled pools make these
        PooledActor.__init__(self, pool.dispatcher)
        self._join(pool, born)
        self.thread = self.end

    def describe(self) -> str:
        """The vertex it runs."""
        return f"vertex {self.pool.vertex.name!r}"


def done_of(order: Order, result: VertexResult) -> Done:
    """The report of `order`'s outcome, with the states it made serialized for the checkpointer."""
    blobs: Mapping[str, bytes] = {}
    encode = order.env.encode
    if encode is not None and result.status == "ok":
        try:
            blobs = encode(order.env.node_id(order.task), result)
        except SerializationError as exc:  # unstorable: fail the task before anything is written
            result = failed_result(order, exc)
    return Done(order.run_id, order.token, result, blobs)


def _tell(order: Order, result: VertexResult) -> None:
    """Report `result` as `order`'s outcome (a live vertex's pause, before its thread waits)."""
    report(order, done_of(order, result))


def report(order: Order, done: Done) -> None:
    """Tell the run's coordinator; drop the report if it is gone (the graph was closed)."""
    try:  # noqa: SIM105 - contextlib.suppress costs a context manager on every task
        order.reply_to.tell(done)
    except pykka.ActorDeadError:
        pass


def failed_result(order: Order, exc: BaseException, *, retryable: bool = False) -> VertexResult:
    return VertexResult.failure(order.task, order.attempt, ErrorInfo.from_exception(exc, retryable=retryable))


def cancel_soon(loop: asyncio.AbstractEventLoop, task: asyncio.Future[Any]) -> None:
    """Cancel `task` from another thread (the loop may have closed meanwhile)."""
    with contextlib.suppress(RuntimeError):
        loop.call_soon_threadsafe(task.cancel)


async def _awaited(awaitable: Awaitable[Any], cancel: Cancellation) -> Any:
    """Await a vertex's coroutine as a task that the run's cancellation cancels."""
    import asyncio  # noqa: PLC0415 - only async vertices get here

    task = asyncio.ensure_future(awaitable)
    loop = asyncio.get_running_loop()
    forget = cancel.on_set(lambda: cancel_soon(loop, task))
    try:
        return await task
    except asyncio.CancelledError:
        if not cancel.is_set():
            raise
        msg = "the run was cancelled while this async vertex was running; its coroutine was cancelled"
        raise RunCancelledError(msg) from None
    finally:
        forget()
