"""Calling a vertex function, wherever it runs: the one piece of a task that may leave the driver.

Pure: `call_vertex` gives the function its private state and `ctx`, runs an
async function's coroutine, and describes what happened as a `Called` value
(what it returned, the exception it raised, or the interrupt it paused for).
Everything else of a task (merging its inputs, interpreting and routing what it
returned) stays with the run, in `_task`. The thread backend calls this on a
vertex actor's thread; the Ray backend in a partition process, from a `Call`.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from actorgraph._engine.context import (
    Context,
    InterruptSignal,
    NestedPause,
    TaskScope,
    current_nest,
    current_scope,
)
from actorgraph._engine.live import Continuation
from actorgraph._engine.nesting import NestFrame
from actorgraph._model.errors import ConfigError, InvalidUpdateError, RoutingError
from actorgraph._model.records import ErrorInfo, Interrupt

__all__ = [
    "Call",
    "Called",
    "Code",
    "VertexCode",
    "call_in_frame",
    "call_vertex",
    "call_vertex_async",
    "is_async",
]


class Code(Protocol):
    """What calling a vertex needs of it (a `VertexSpec` or a `VertexCode`)."""

    @property
    def name(self) -> str: ...
    @property
    def fn(self) -> Callable[..., Any]: ...
    @property
    def takes_ctx(self) -> bool: ...
    @property
    def on_error(self) -> Callable[..., Any] | None: ...


@dataclass(frozen=True, slots=True)
class VertexCode:
    """A vertex's functions, and nothing else of its graph: what travels to another process."""

    name: str
    fn: Callable[..., Any]
    takes_ctx: bool
    on_error: Callable[..., Any] | None

    @staticmethod
    def of(vertex: Code) -> VertexCode:
        """The code of `vertex`."""
        return VertexCode(vertex.name, vertex.fn, vertex.takes_ctx, vertex.on_error)


@dataclass(frozen=True, slots=True)
class Call:
    """One attempt of one task, as another process needs it (the state travels beside it).

    Attributes:
        vertex: the vertex's name.
        task_id: the task's id.
        step: the superstep.
        attempt: 1 for the first attempt.
        thread_id: the run's thread, or None.
        context: the run's `context=` object.
        value: the vertex's private value before the task.
        resumes: the answers to the task's interrupts so far.
        failure: when given, call the vertex's `on_error` handler for it.
        line: the line of the thread's history the run continues (names its questions).
        store: the graph's `compile(store=...)` object (`ctx.store`), or None; it
            travels with the call (a SQL store reconnects in the other process).
        remaining_steps: how many more supersteps the run may start after this one, or None.
        messages: someone listens to `stream(mode="messages")` (`Context.streams_messages`).
    """

    vertex: str
    task_id: str
    step: int
    attempt: int
    thread_id: str | None
    context: Any
    value: Any
    resumes: tuple[Any, ...]
    failure: ErrorInfo | None = None
    line: str | None = None
    store: Any = None
    remaining_steps: int | None = None
    messages: bool = False

    def context_for(self, emit: Callable[[Any], None] | None) -> Context[Any]:
        """The `ctx` the vertex is given."""
        return Context(
            step=self.step,
            attempt=self.attempt,
            vertex=self.vertex,
            task_id=self.task_id,
            thread_id=self.thread_id,
            context=self.context,
            value=self.value,
            emit=emit,
            store=self.store,
            remaining_steps=self.remaining_steps,
            streams_messages=self.messages,
        )


@dataclass(slots=True)
class Called:
    """What one call of a vertex did.

    Attributes:
        returned: what the function returned (when it neither raised nor paused).
        error: the exception it raised (`retryable` False for the engine's own
            `RoutingError` and `InvalidUpdateError`).
        pending: the interrupt it paused for.
        value: the vertex's private value after the call (`ctx.value`).
        emitted: the payloads it gave `ctx.emit`, when they were kept for later
            (a call in another process) rather than sent as they came.
        nested: the questions of the graphs it invoked, when they paused it
            (`pending` is then the first).
    """

    returned: Any = None
    error: ErrorInfo | None = None
    pending: Interrupt | None = None
    value: Any = None
    emitted: list[Any] = field(default_factory=list)
    nested: tuple[Interrupt, ...] = ()


def call_vertex(  # noqa: PLR0913 - the function, what it is given, and how to run it
    code: Code,
    state: Any,
    ctx: Context[Any],
    *,
    resumes: tuple[Any, ...],
    failure: ErrorInfo | None,
    run_async: Callable[[Awaitable[Any]], Any],
    line: str | None = None,
    live: Callable[[Interrupt, TaskScope], Any] | None = None,
) -> Called:
    """Call `code`'s function (or its `on_error` handler for `failure`) on `state`.

    Args:
        code: the vertex's functions.
        state: the task's private copy of its input state.
        ctx: the vertex's `ctx` (its `value` may be changed by the call).
        resumes: the answers to the task's interrupts so far.
        failure: when given, call the `on_error` handler for it instead.
        run_async: runs an async function's coroutine to its end.
        line: the line of the thread's history the run continues (names its questions).
        live: how `interrupt()` waits for its answer in this thread (`_engine/live.py`), or None.

    Returns:
        What happened; no exception raised by the vertex leaves this function.
    """
    scope = _scope(ctx, resumes, line)
    scope.live = live
    token = current_scope.set(scope)
    try:
        returned = _call(code, state, ctx, failure)
        if type(returned) is not dict and inspect.isawaitable(returned):  # an async vertex
            returned = run_async(returned)
        return _returned(scope, returned, ctx)
    except InterruptSignal as signal:
        return Called(pending=signal.pending, value=ctx.value)
    except NestedPause as pause:
        return Called(pending=pause.interrupts[0], value=ctx.value, nested=pause.interrupts)
    except Exception as exc:  # noqa: BLE001 - any vertex exception is its task's error
        return _raised(exc, ctx)
    finally:
        current_scope.reset(token)


def call_in_frame(  # noqa: PLR0913 - call_vertex's, and the frame it runs in
    code: Code,
    state: Any,
    ctx: Context[Any],
    *,
    resumes: tuple[Any, ...],
    failure: ErrorInfo | None,
    run_async: Callable[[Awaitable[Any]], Any],
    line: str | None,
    frame: NestFrame | None,
    going: Continuation | None,
) -> Called:
    """`call_vertex` with the attempt's `frame` current (graphs it invokes nest), `going` its live path.

    Returns once every graph the function invoked has stopped (`NestFrame.settle`).
    """
    token = current_nest.set(frame) if frame is not None else None
    try:
        live = going.ask if going is not None else None
        return call_vertex(
            code, state, ctx, resumes=resumes, failure=failure, run_async=run_async, line=line, live=live
        )
    finally:
        if token is not None:
            current_nest.reset(token)
        if frame is not None:
            frame.settle()


async def call_vertex_async(  # noqa: PLR0913 - the function, and what it is given
    code: Code,
    state: Any,
    ctx: Context[Any],
    *,
    resumes: tuple[Any, ...],
    failure: ErrorInfo | None,
    line: str | None = None,
) -> Called:
    """`call_vertex` on an event loop: the vertex's coroutine is awaited, holding no thread while it waits.

    Run it as a task of its own (`asyncio` gives each task a copy of the context,
    so the interrupt scope set here is the task's). Cancelling the task cancels
    the vertex's coroutine: `CancelledError` is not caught.

    Returns:
        What happened; no exception raised by the vertex leaves this coroutine.
    """
    scope = _scope(ctx, resumes, line)
    token = current_scope.set(scope)
    try:
        returned = _call(code, state, ctx, failure)
        if type(returned) is not dict and inspect.isawaitable(returned):
            returned = await returned
        return _returned(scope, returned, ctx)
    except InterruptSignal as signal:
        return Called(pending=signal.pending, value=ctx.value)
    except NestedPause as pause:
        return Called(pending=pause.interrupts[0], value=ctx.value, nested=pause.interrupts)
    except Exception as exc:  # noqa: BLE001 - any vertex exception is its task's error
        return _raised(exc, ctx)
    finally:
        current_scope.reset(token)


def is_async(fn: Any) -> bool:
    """Whether calling `fn` gives a coroutine: an `async def` function, method or callable object."""
    call = type(fn).__call__ if not inspect.isroutine(fn) and callable(fn) else None
    return inspect.iscoroutinefunction(fn) or (call is not None and inspect.iscoroutinefunction(call))


def _scope(ctx: Context[Any], resumes: tuple[Any, ...], line: str | None) -> TaskScope:
    return TaskScope(
        thread_id=ctx.thread_id,
        line=line,
        step=ctx.step,
        task_id=ctx.task_id,
        vertex=ctx.vertex,
        resumes=resumes,
        writer=ctx.emit,
    )


def _returned(scope: TaskScope, returned: Any, ctx: Context[Any]) -> Called:
    if scope.pending is not None:  # the vertex swallowed its own interrupt
        return Called(pending=scope.pending, value=ctx.value)
    return Called(returned, value=ctx.value)


def _raised(exc: Exception, ctx: Context[Any]) -> Called:
    retryable = not isinstance(exc, (RoutingError, InvalidUpdateError, ConfigError))  # mistakes: no retry
    return Called(error=ErrorInfo.from_exception(exc, retryable=retryable), value=ctx.value)


def _call(code: Code, state: Any, ctx: Context[Any], failure: ErrorInfo | None) -> Any:
    if failure is None:
        return code.fn(state, ctx) if code.takes_ctx else code.fn(state)
    handler = code.on_error
    if handler is None:  # pragma: no cover - the coordinator only asks when there is one
        msg = f"vertex {code.name!r} has no on_error handler"
        raise InvalidUpdateError(msg)
    return handler(state, failure.as_exception())
