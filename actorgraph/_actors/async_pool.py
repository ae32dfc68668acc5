"""An async vertex's pool: its attempts are tasks on one event loop, so an awaiting attempt holds no thread.

A vertex whose function is `async def` does not need a thread per attempt: on
the thread backend its attempts run as asyncio tasks on the pool's own event
loop thread (started with the first attempt, stopped by `close()`). A thousand
runs awaiting a model's answer use one thread, not a thousand. The attempt is
the engine's (`run_attempt_async`: merge the inputs, call the vertex, interpret
and route what it returned), so its outcome is the same `VertexResult` a vertex
actor would report.

The bound is the vertex's `concurrency` (unbounded unless the user sets one for
an async vertex), shared with the thread pools through `BoundedPool`. What the
thread pools cannot do, this one does: a timeout or a cancelled run cancels the
vertex's coroutine. Code that blocks inside an async vertex (a `time.sleep`, a
synchronous client) blocks every attempt on the loop: that is asyncio's rule,
and the docs say so.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable
from typing import Any

from actorgraph._actors.attempt_spans import attempt_span
from actorgraph._actors.bounded import BoundedPool
from actorgraph._actors.messages import Done, Order
from actorgraph._actors.pool import cancel_soon, done_of, failed_result, report
from actorgraph._actors.timer import Timer
from actorgraph._engine.task import run_attempt_async
from actorgraph._model.errors import RunCancelledError, VertexActorDiedError
from actorgraph._model.spec import GraphSpec, VertexSpec
from actorgraph.events import TaskStarted

__all__ = ["AsyncPool", "EventLoop"]


class EventLoop:
    """An asyncio event loop on a thread of its own (a daemon: a forgotten close() cannot keep Python up)."""

    def __init__(self, name: str) -> None:
        """Start the thread and its loop."""
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self._run, name=name, daemon=True)
        self.running = 0  # attempts on the loop (read by close() to say who it waits for)
        self.thread.start()

    @property
    def busy(self) -> bool:
        """True while an attempt runs on the loop."""
        return self.running > 0 and self.thread.is_alive()

    def call(self, fn: Callable[..., None], *args: Any) -> None:
        """Call `fn(*args)` on the loop's thread, soon (does nothing once the loop is closed)."""
        with contextlib.suppress(RuntimeError):
            self.loop.call_soon_threadsafe(fn, *args)

    def stop(self) -> None:
        """Cancel what runs on the loop, let it finish, and end the thread (without waiting for it)."""
        self.call(self.loop.stop)

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        try:
            self.loop.run_forever()
            tasks = asyncio.all_tasks(self.loop)
            for task in tasks:
                task.cancel()
            self.loop.run_until_complete(asyncio.gather(*tasks, return_exceptions=True))
            self.loop.run_until_complete(self.loop.shutdown_asyncgens())
        finally:
            self.loop.close()


class AsyncPool(BoundedPool):
    """The attempts of one async vertex, as tasks on the pool's event loop: a slot is an attempt begun."""

    def __init__(self, spec: GraphSpec, vertex: VertexSpec, timer: Callable[[], Timer]) -> None:
        """An empty pool (its loop starts with the first attempt)."""
        super().__init__(spec, vertex, timer)
        self._tasks: dict[int, asyncio.Task[None] | None] = {}  # token -> task (None: not begun yet)
        self._events: EventLoop | None = None

    def _used(self) -> int:
        return len(self._tasks)

    def _is_running(self, token: int) -> bool:
        return token in self._tasks

    def submit(self, order: Order) -> None:
        """Begin `order` on the loop, or queue it while `concurrency` attempts run."""
        with self._lock:
            if not self._admit(order):
                return
            self._tasks[order.token] = None
            events = self._loop()
        events.call(self._begin, order)

    def abandon(self, token: int) -> bool:
        """Give up on attempt `token` (it overran its timeout): cancel its coroutine, free its slot."""
        with self._lock:
            if token not in self._tasks:
                return False
            task = self._tasks.pop(token)
            following = self._take_next()
        if task is not None and self._events is not None:
            cancel_soon(self._events.loop, task)
        self._begin_soon(following)
        return True

    def stop(self) -> list[EventLoop]:
        """Take no more work, cancel what runs, end the loop; return it (the caller waits for its thread)."""
        with self._lock:
            self._close()
            self._tasks.clear()
            events = self._events
        if events is None:
            return []
        events.stop()
        return [events]

    def _loop(self) -> EventLoop:
        """The pool's loop, started now if need be (with `_lock` held)."""
        if self._events is None:
            self._events = EventLoop(f"actorgraph-loop-{self.vertex.name}")
        return self._events

    def _take_next(self) -> Order | None:
        """The next queued order, its slot taken (with `_lock` held)."""
        order = self._next_queued()
        if order is not None:
            self._tasks[order.token] = None
        return order

    def _begin_soon(self, order: Order | None) -> None:
        if order is not None and self._events is not None:
            self._events.call(self._begin, order)

    def _begin(self, order: Order) -> None:
        """On the loop: start `order`'s attempt as a task, unless it was given up meanwhile."""
        events = self._events
        with self._lock:
            if order.token not in self._tasks or events is None:
                return
            task = events.loop.create_task(self._attempt(order, events))
            self._tasks[order.token] = task

    async def _attempt(self, order: Order, events: EventLoop) -> None:
        events.running += 1
        try:
            done = await self._outcome(order)
        finally:
            events.running -= 1
        if done is None:  # abandoned after a timeout, or the pool stopped: nobody waits for it
            return
        with self._lock:
            if self._tasks.pop(order.token, False) is False:  # abandoned while it finished
                return
            following = self._take_next()
        if following is not None:
            self._begin(following)
        report(order, done)

    async def _outcome(self, order: Order) -> Done | None:
        """Run the attempt under the run's cancellation and the vertex's timeout; None if given up."""
        if order.cancel.is_set():
            cancelled = RunCancelledError("the run was cancelled")
            return Done(order.run_id, order.token, failed_result(order, cancelled))
        task, env = order.task, order.env
        if env.listen is not None:
            started = TaskStarted(order.run_id, env.thread_id, task.step, task.id, task.vertex, order.attempt)
            env.listen(started)
        current = asyncio.current_task()
        assert current is not None  # noqa: S101 - this coroutine runs as a task
        loop = asyncio.get_running_loop()
        forget = order.cancel.on_set(lambda: cancel_soon(loop, current))
        handle = self._arm(order) if self.vertex.timeout is not None else None
        span = attempt_span(order)  # current in this coroutine while the vertex runs
        try:
            result = await run_attempt_async(self.spec, task, order.attempt, order.env, failure=order.failure)
            span.outcome(result)
        except asyncio.CancelledError:
            if not order.cancel.is_set():
                return None
            msg = "the run was cancelled while this async vertex was running; its coroutine was cancelled"
            result = failed_result(order, RunCancelledError(msg))
        except BaseException as exc:  # noqa: BLE001 - SystemExit or the like from the vertex: fail its task
            result = failed_result(order, _died(order, exc), retryable=True)
        finally:
            forget()
            if handle is not None:
                self.timer().cancel(handle)
            span.close()
        return done_of(order, result)


def _died(order: Order, exc: BaseException) -> VertexActorDiedError:
    died = VertexActorDiedError(
        f"the event loop running vertex {order.task.vertex!r} lost its attempt: {type(exc).__name__}: {exc}"
    )
    died.__cause__ = exc
    return died
