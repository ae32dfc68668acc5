"""The vertex actor: runs attempts of one vertex's tasks and reports their outcomes.

A vertex actor only moves messages: it takes an `Order`, runs the attempt with
the pure task runner, tells the coordinator the `VertexResult`, and asks its
pool for more work. Anything that escapes the task runner (a `BaseException`
such as an injected `SystemExit`) kills this actor only: the task is reported
as `VertexActorDiedError` and the pool replaces the actor.
"""

from __future__ import annotations

import contextlib
import contextvars
import threading
from collections.abc import Awaitable, Mapping
from typing import TYPE_CHECKING, Any

import pykka

from actorgraph._cancel import Cancellation
from actorgraph._errors import RunCancelledError, SerializationError, VertexActorDiedError
from actorgraph._events import TaskStarted
from actorgraph._messages import Done, Order
from actorgraph._task import run_attempt
from actorgraph._types import ErrorInfo, VertexResult

if TYPE_CHECKING:
    import asyncio

    from actorgraph._pool import VertexPool

__all__ = ["VertexActor"]


class VertexActor(pykka.ThreadingActor):
    """One worker of a vertex's pool: an inbox and a thread."""

    use_daemon_thread = True  # a forgotten close() must not keep the interpreter alive

    def __init__(self, pool: VertexPool, born: list[VertexActor]) -> None:
        super().__init__()
        born.append(self)  # the pool keeps the object (pykka's ref only holds a weakref)
        self.pool = pool
        self.abandoned = False
        self.thread: threading.Thread | None = None
        self._current: Order | None = None
        self._runner: asyncio.Runner | None = None

    def on_start(self) -> None:
        """Remember the thread, so `close()` can wait for it to end."""
        self.thread = threading.current_thread()

    @property
    def busy(self) -> bool:
        """True while the actor runs a task (read from other threads, for `close()`)."""
        return self._current is not None and self.thread is not None and self.thread.is_alive()

    def on_receive(self, message: Any) -> None:
        """Run the order, then every order the pool has queued for this vertex."""
        order: Order | None = message if isinstance(message, Order) else None
        while order is not None:
            self._current = order
            try:
                self._run(order)
            except BaseException as exc:  # noqa: BLE001 - contain it: pykka would stop every actor
                self._die(order, exc)
                return
            self._current = None
            order = self.pool.next_order(self)
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
                self.pool.resubmit(envelope.message)
            else:
                others.append(envelope)
        for envelope in others:  # pykka's teardown answers them (a stop request waits for its reply)
            self.actor_inbox.put(envelope)

    def _run(self, order: Order) -> None:
        pool = self.pool
        if order.cancel.is_set() or not pool.clock.sleep(order.delay, order.cancel):
            result = _outcome(order, RunCancelledError("the run was cancelled"), retryable=False)
            _report(order, Done(order.run_id, order.token, result))
            return
        if order.env.listen is not None:
            task = order.task
            order.env.listen(
                TaskStarted(order.run_id, order.env.thread_id, task.step, task.id, task.vertex, order.attempt)
            )
        timeout = pool.vertex.timeout
        handle = None
        if timeout is not None:
            pool.running[order.token] = self
            handle = pool.timer().call_later(timeout, lambda: pool.timed_out(order))
        try:
            result = run_attempt(
                pool.spec,
                order.task,
                order.attempt,
                order.env,
                failure=order.failure,
                run_async=self._run_async,
            )
        finally:
            if handle is not None:
                pool.running.pop(order.token, None)
                pool.timer().cancel(handle)
        blobs: Mapping[str, bytes] = {}
        encode = order.env.encode
        if encode is not None and result.status == "ok":
            try:
                blobs = encode(order.env.node_id(order.task), result)
            except SerializationError as exc:  # unstorable: fail the task before anything is written
                result = _outcome(order, exc, retryable=False)
        _report(order, Done(order.run_id, order.token, result, blobs))

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
            _report(order, Done(order.run_id, order.token, _outcome(order, died)))
        finally:
            self.pool.retire(self)
            self.stop()


def _report(order: Order, done: Done) -> None:
    """Tell the run's coordinator; drop the report if it is gone (the graph was closed)."""
    try:  # noqa: SIM105 - contextlib.suppress costs a context manager on every task
        order.reply_to.tell(done)
    except pykka.ActorDeadError:
        pass


def _cancel_soon(loop: asyncio.AbstractEventLoop, task: asyncio.Future[Any]) -> None:
    """Cancel `task` from another thread (the loop may have closed meanwhile)."""
    with contextlib.suppress(RuntimeError):
        loop.call_soon_threadsafe(task.cancel)


async def _awaited(awaitable: Awaitable[Any], cancel: Cancellation) -> Any:
    """Await a vertex's coroutine as a task that the run's cancellation cancels."""
    import asyncio  # noqa: PLC0415 - only async vertices get here

    task = asyncio.ensure_future(awaitable)
    loop = asyncio.get_running_loop()
    forget = cancel.on_set(lambda: _cancel_soon(loop, task))
    try:
        return await task
    except asyncio.CancelledError:
        if not cancel.is_set():
            raise
        msg = "the run was cancelled while this async vertex was running; its coroutine was cancelled"
        raise RunCancelledError(msg) from None
    finally:
        forget()


def _outcome(order: Order, exc: BaseException, *, retryable: bool = True) -> VertexResult:
    task = order.task
    return VertexResult(
        task.id,
        task.vertex,
        "error",
        error=ErrorInfo.from_exception(exc, retryable=retryable),
        attempts=order.attempt,
        inputs=task.inputs,
        value=task.value,
        resumes=task.resumes,
    )
