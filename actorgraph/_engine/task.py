"""Running one attempt of one task, and turning whatever happened into a value.

Pure: merges the task's inputs, hands the vertex a private copy, calls it,
interprets its return value (a state, None, or a `Command`), routes the new
state, and returns a `VertexResult` whose status is `ok`, `error` or
`interrupt`. No exception and no interrupt signal leaves this module, except a
`BaseException` that is not the vertex's business (the actor handles those).
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from actorgraph._engine.caching import Lookup, lookup_for
from actorgraph._engine.call import Call, Called, call_in_frame, call_vertex_async
from actorgraph._engine.context import Context, current_nest
from actorgraph._engine.copies import copy_state
from actorgraph._engine.env import TaskEnv
from actorgraph._engine.lineage import distinct, merge_located
from actorgraph._engine.live import Continuation, Turn
from actorgraph._engine.managed import managed_view, without_managed
from actorgraph._engine.nesting import NestFrame
from actorgraph._engine.returned import interpret
from actorgraph._engine.routing import route
from actorgraph._model.errors import InvalidUpdateError, RoutingError
from actorgraph._model.records import (
    PARENT,
    Command,
    ErrorInfo,
    Handoff,
    Interrupt,
    Node,
    Send,
    Task,
    VertexResult,
)
from actorgraph._model.spec import GraphSpec

__all__ = [
    "Attempt",
    "Prepared",
    "TaskEnv",
    "cached",
    "finish",
    "input_node",
    "kept",
    "prepare",
    "run_attempt",
    "run_attempt_async",
    "succeeded",
]


def input_node(spec: GraphSpec, task: Task, node_id: str) -> Node:
    """The task's input version: its single input, or the merge of several.

    Raises:
        MergeConflictError: the merge refused the inputs; it names the vertices and step.
    """
    inputs = task.inputs
    if len(inputs) == 1:
        return inputs[0].node
    nodes = distinct(m.node for m in inputs)
    if len(nodes) == 1:
        return nodes[0]
    merged = merge_located([m.node for m in inputs], [m.sender for m in inputs], spec.merge, task.step)
    return Node.child(f"{node_id}<", merged, *nodes)


@dataclass(frozen=True, slots=True)
class Attempt:
    """Who is running: the task, the attempt number, when it started, its run."""

    task: Task
    number: int
    started: float
    env: TaskEnv

    def result(self, status: Any, **fields: Any) -> VertexResult:
        task = self.task
        fields.setdefault("value", task.value)
        return VertexResult(
            task.id,
            task.vertex,
            status,
            attempts=self.number,
            inputs=task.inputs,
            resumes=task.resumes,
            answers=task.answers,
            started_at=self.started,
            finished_at=self.env.now(),
            **fields,
        )

    def failed(self, exc: Exception, *, retryable: bool = True) -> VertexResult:
        error = ErrorInfo.from_exception(exc, retryable=retryable)
        return VertexResult.failure(self.task, self.number, error, self.started, self.env.now())

    def paused(self, pending: Interrupt) -> VertexResult:
        return self.result("interrupt", interrupt=pending)


def _run_coroutine(awaitable: Awaitable[Any]) -> Any:
    import asyncio  # noqa: PLC0415 - asyncio pulls in ssl (4 MiB): only async paths import it

    async def wait() -> Any:
        return await awaitable

    return asyncio.run(wait())


def run_attempt(  # noqa: PLR0913 - the task, and how to run it
    spec: GraphSpec,
    task: Task,
    attempt: int,
    env: TaskEnv,
    *,
    failure: ErrorInfo | None = None,
    run_async: Callable[[Awaitable[Any]], Any] = _run_coroutine,
    turn: Turn | None = None,
) -> VertexResult:
    """Run one attempt of `task` in this thread and describe its outcome.

    The three steps another backend splits across processes: `prepare` (here),
    `call_vertex` (wherever the vertex runs), `finish` (here).

    Args:
        spec: the graph.
        task: the task, with its recorded inputs.
        attempt: 1 for the first attempt.
        env: the run's surroundings.
        failure: when given, run the vertex's `on_error` handler for this error instead.
        run_async: runs an async vertex's coroutine (vertex actors pass their event loop's).
        turn: how the vertex waits in its actor for its answers (`_engine/live.py`), or None.

    Returns:
        The task's `VertexResult` (`attempts` is `attempt`).
    """
    ready = _ready(spec, task, attempt, env, failure)
    if isinstance(ready, VertexResult):
        return ready
    prepared, ctx, state = ready
    lookup, reused = cached(spec, prepared, ctx, state, failure)
    if reused is not None:
        return reused
    frame = NestFrame(env.nest, task) if env.nest is not None else None
    going = Continuation(turn, spec, prepared, ctx, frame=frame, prepare=prepare) if turn else None
    called = call_in_frame(
        spec.vertices[task.vertex],
        state,
        ctx,
        resumes=task.resumes,
        failure=failure,
        run_async=run_async,
        line=env.line,
        frame=frame,
        going=going,
    )
    if going is not None and going.asked:  # the outcome is the resumed run's attempt's, and never cached
        prepared, lookup = going.prepared, None
    return kept(prepared, lookup, called, finish(spec, prepared, called, ctx))


async def run_attempt_async(
    spec: GraphSpec, task: Task, attempt: int, env: TaskEnv, *, failure: ErrorInfo | None = None
) -> VertexResult:
    """`run_attempt` for an async vertex, as a task on an event loop: awaiting holds no thread.

    Cancelling it cancels the vertex's coroutine (`CancelledError` passes through).
    """
    ready = _ready(spec, task, attempt, env, failure)
    if isinstance(ready, VertexResult):
        return ready
    prepared, ctx, state = ready
    lookup, reused = cached(spec, prepared, ctx, state, failure)
    if reused is not None:
        return reused
    vertex = spec.vertices[task.vertex]
    frame = NestFrame(env.nest, task) if env.nest is not None else None
    if frame is not None:  # the coroutine runs in this task's own copy of the context
        current_nest.set(frame)
    try:
        called = await call_vertex_async(
            vertex, state, ctx, resumes=task.resumes, failure=failure, line=env.line
        )
    finally:
        if frame is not None:
            await frame.settled()
    return kept(prepared, lookup, called, finish(spec, prepared, called, ctx))


def _ready(
    spec: GraphSpec, task: Task, attempt: int, env: TaskEnv, failure: ErrorInfo | None
) -> tuple[Prepared, Context[Any], Any] | VertexResult:
    """The attempt prepared, its `ctx`, and the vertex's private copy of its input (or its failure)."""
    prepared = prepare(spec, task, attempt, env)
    if isinstance(prepared, VertexResult):
        return prepared
    emit = functools.partial(env.emit, task) if env.emit is not None else None
    ctx = prepared.call(failure).context_for(emit)
    return prepared, ctx, copy_state(prepared.given(spec))


@dataclass(frozen=True, slots=True)
class Prepared:
    """A task ready to call: its attempt and its input version."""

    at: Attempt
    node_in: Node
    node_id: str

    def given(self, spec: GraphSpec) -> Any:
        """The state the vertex is given: its input (managed keys filled), or its `inputs` (not copied)."""
        flow = spec.vertices[self.at.task.vertex].flow
        state = self.node_in.state
        return managed_view(spec, state, self.remaining) if flow is None else flow.view(state)

    @property
    def remaining(self) -> int | None:
        """How many more supersteps the run may start after this task's (None: no limit known)."""
        stop = self.at.env.stop
        return None if stop is None else stop - self.at.task.step

    def call(self, failure: ErrorInfo | None) -> Call:
        """The call of the vertex, as another process needs it."""
        task, env = self.at.task, self.at.env
        return Call(
            task.vertex,
            task.id,
            task.step,
            self.at.number,
            env.thread_id,
            env.context,
            task.value,
            task.resumes,
            failure,
            env.line,
            env.store,
            self.remaining,
            env.messages,
        )


def prepare(spec: GraphSpec, task: Task, attempt: int, env: TaskEnv) -> Prepared | VertexResult:
    """Start an attempt: merge the task's inputs (a failed merge is the task's `error` outcome)."""
    at = Attempt(task, attempt, env.now(), env)
    node_id = env.node_id(task)
    try:
        return Prepared(at, input_node(spec, task, node_id), node_id)
    except Exception as exc:  # noqa: BLE001 - a conflict or a failing user merge is the task's error
        return at.failed(exc, retryable=False)


def cached(
    spec: GraphSpec, prepared: Prepared, ctx: Context[Any], state: Any, failure: ErrorInfo | None
) -> tuple[Lookup | None, VertexResult | None]:
    """The task's place in the node cache, and its outcome when it needs no call.

    That outcome is the one the cache kept (its `cached` set), or the error of
    a lookup that failed (a key function that raised, a state the key cannot
    serialize, a cache that cannot be read).
    """
    at = prepared.at
    try:
        lookup = lookup_for(spec, at.task, at.env.cache, state, handler=failure is not None)
        hit = lookup.hit() if lookup is not None else None
    except Exception as exc:  # noqa: BLE001 - a failed lookup is the task's error
        return None, at.failed(exc)
    if hit is None:
        return lookup, None
    result = finish(spec, prepared, hit, ctx)
    return None, dataclasses.replace(result, cached=True) if result.ok else result


def kept(prepared: Prepared, lookup: Lookup | None, called: Called, result: VertexResult) -> VertexResult:
    """`result`, once what the vertex did is kept in the node cache when `result` is `ok`.

    An outcome the cache cannot keep (a state its serializer refuses) is the task's error.
    """
    if lookup is None or not result.ok:
        return result
    try:
        lookup.keep(called)
    except Exception as exc:  # noqa: BLE001 - a cache that cannot keep the outcome fails the task, loudly
        return prepared.at.failed(exc)
    return result


def finish(spec: GraphSpec, prepared: Prepared, called: Called, ctx: Context[Any]) -> VertexResult:
    """The task's outcome from what its vertex did: paused, failed, or its new state routed.

    Args:
        spec: the graph.
        prepared: the attempt.
        called: what the vertex did.
        ctx: the `ctx` routers are given (its `value` is the vertex's after the call).
    """
    at = prepared.at
    if called.pending is not None:
        if called.nested:  # paused by graphs its function invoked
            return at.result("interrupt", interrupt=called.pending, nested=called.nested)
        return at.paused(called.pending)
    if called.error is not None:
        return VertexResult.failure(at.task, at.number, called.error, at.started, at.env.now())
    ctx.value = called.value
    try:
        return succeeded(spec, at, prepared.node_in, called.returned, ctx=ctx, node_id=prepared.node_id)
    except (RoutingError, InvalidUpdateError) as exc:
        return at.failed(exc, retryable=False)
    except Exception as exc:  # noqa: BLE001 - a failing reducer or schema check is the task's error
        return at.failed(exc)


def succeeded(  # noqa: PLR0913 - what the vertex was given, and what it returned
    spec: GraphSpec, at: Attempt, node_in: Node, returned: Any, *, ctx: Context[Any] | None, node_id: str
) -> VertexResult:
    """The `ok` outcome of what a vertex returned: the new version, routed.

    Raises:
        InvalidUpdateError: what it returned is not a state, an update or a `Command` that fits.
        RoutingError: a router or a goto failed.
    """
    task = at.task
    returned = without_managed(spec, returned)
    if isinstance(returned, Command) and returned.graph is not None:
        return _handed_off(at, node_in, returned)
    node_out, goto = interpret(spec, task, node_in, node_id, returned)
    outbox = route(
        spec, task.vertex, node_out, step=task.step, task_id=task.id, node_id=node_id, goto=goto, ctx=ctx
    )
    value = ctx.value if ctx is not None else task.value
    return at.result("ok", state=node_out.state, outbox=outbox, value=value, node=node_out)


def _handed_off(at: Attempt, node_in: Node, command: Command) -> VertexResult:
    """A subgraph task leaving for its parent graph: no message here, a `Handoff` for the parent."""
    who = f"vertex {at.task.vertex!r}"
    if command.graph != PARENT:
        msg = f"{who} returned Command(graph={command.graph!r}); the only graph to name is PARENT"
        raise InvalidUpdateError(msg)
    if not at.env.nested:
        msg = f"{who} returned Command(graph=PARENT), but its graph is not a subgraph: there is no parent"
        raise InvalidUpdateError(msg)
    goto = (command.goto,) if isinstance(command.goto, (str, Send)) else tuple(command.goto)
    if not all(isinstance(target, str) for target in goto):
        msg = f"{who} returned Command(graph=PARENT) with a Send; route to the parent's vertices by name"
        raise InvalidUpdateError(msg)
    handoff = Handoff(copy_state(command.update) if command.update is not None else None, goto)  # type: ignore[arg-type]
    return at.result("ok", state=node_in.state, handoff=handoff, node=node_in)
