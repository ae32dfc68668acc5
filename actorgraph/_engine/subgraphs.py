"""A subgraph task: the name and the input of its subgraph's run, and what its outcome is in the parent.

A subgraph vertex's task runs its subgraph as a run of its own (see
`_children.py`). Pure: these functions turn the task and the run's outcome
into records; the actors call them.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from actorgraph._engine.boundary import subgraph_input
from actorgraph._engine.copies import copy_state
from actorgraph._engine.rewind import line_hash
from actorgraph._engine.task import Attempt, TaskEnv, input_node, succeeded
from actorgraph._model.errors import (
    ActorGraphError,
    InvalidUpdateError,
    MergeConflictError,
    RecursionLimitError,
    RoutingError,
    VertexError,
)
from actorgraph._model.records import END, START, Command, ErrorInfo, Handoff, Interrupt, Task, VertexResult
from actorgraph._model.spec import GraphSpec

__all__ = [
    "child_failed",
    "child_finished",
    "child_input",
    "child_paused",
    "namespace_of",
    "questions_dropped",
    "run_name",
    "stateful_clash",
    "vertex_of",
]

_NEVER_RETRIED = (MergeConflictError, RoutingError, InvalidUpdateError, RecursionLimitError)


def namespace_of(task: Task, origin: str) -> str:
    """The name of a subgraph task's run: the task, its superstep, and the line of history.

    The same task of the same superstep gets the same name in every process and
    every resumption, so a parent killed mid-subgraph finds its subgraph's run
    again; a fork or a new input begins a new line (`origin`), so it runs afresh.
    """
    return f"{task.id}@{task.step}~{line_hash(origin)}"


def run_name(spec: GraphSpec, task: Task, origin: str, *, recorded: bool) -> tuple[str, str | None]:
    """The name of a subgraph task's run, and the owner that run records (a stateful subgraph's).

    A stateful subgraph (`compile(checkpointer=True)`) in a recorded run keeps
    one run per thread, named by its vertex alone, so each task of the vertex, in
    every run of the parent, continues it; its owner (the task's own name, from
    `namespace_of`) tells a new call, which starts a new line from the state kept,
    from a resumed one. Any other subgraph task's run is named by `namespace_of`.
    """
    name = namespace_of(task, origin)
    child = spec.vertices[task.vertex].child
    if recorded and child is not None and child.stateful:
        return task.vertex, name
    return name, None


def vertex_of(name: str) -> str:
    """The subgraph vertex a run's name belongs to (`research@2~1a2b3c4d`, `work:3@1~...`, `agent`)."""
    return name.partition("@")[0].split(":")[0]


def stateful_clash(spec: GraphSpec, task: Task, tasks: Iterable[Task]) -> RoutingError | None:
    """The error of a stateful subgraph vertex's task when its superstep has other tasks of it.

    A stateful subgraph keeps one state per thread, so two runs of it at once
    would both continue it (LangGraph refuses the same: `MULTIPLE_SUBGRAPHS`).
    """
    child = spec.vertices[task.vertex].child
    if child is None or not child.stateful:
        return None
    same = sorted(t.id for t in tasks if t.vertex == task.vertex)
    if len(same) < 2:  # noqa: PLR2004 - the task itself and one more
        return None
    return RoutingError(
        f"stateful subgraph vertex {task.vertex!r} got {len(same)} tasks in superstep {task.step} "
        f"({', '.join(same)}): a subgraph compiled with checkpointer=True keeps one state per "
        "thread, so it runs once per superstep; send it one task (all the items in one state), or "
        "compile the subgraph with checkpointer=None for a fresh run per task"
    )


def questions_dropped(pending: Iterable[VertexResult], as_vertex: str | None) -> InvalidUpdateError | None:
    """Why a subgraph's run may not be updated as `as_vertex`: it would drop a question its parent waits on.

    The parent's task records the subgraph's questions and runs it again only once
    they are answered, so an update that drops one (made as the vertex that asked,
    as START or as END) would leave the parent waiting for nothing.
    """
    if as_vertex is None:
        return None
    for result in pending:
        if result.status != "interrupt" or as_vertex not in (result.vertex, START, END):
            continue
        for asked in (result.interrupt, *result.nested):
            if asked is not None and asked.kind == "interrupt":
                return InvalidUpdateError(
                    f"update_state(namespace=..., as_vertex={as_vertex!r}) would drop the question that "
                    f"vertex {asked.vertex!r} of the subgraph's run asks ({asked.value!r}), which its parent "
                    "waits on; answer it through the parent with Command(resume=...), after an update "
                    "without as_vertex if the state needs correcting"
                )
    return None


def child_input(spec: GraphSpec, task: Task, env: TaskEnv, refused: Exception | None = None) -> Any:
    """The subgraph's input: a private copy of the task's input state, through the vertex's `input`.

    Without `input`, a subgraph with an input schema sees the keys of that schema only.

    Raises:
        MergeConflictError: the task's inputs could not be merged.
        Exception: `refused`, why the task may not run its subgraph (see `stateful_clash`).
    """
    if refused is not None:
        raise refused
    child = spec.vertices[task.vertex].child
    state = copy_state(input_node(spec, task, env.node_id(task)).state)
    if child is None:
        return state
    return child.input(state) if child.input is not None else subgraph_input(child.spec, state)


def child_finished(spec: GraphSpec, at: Attempt, final: Any, handoff: Handoff | None) -> VertexResult:
    """The task's outcome when its subgraph's run ended: its final state (through `output`) or a handoff."""
    task, env = at.task, at.env
    child = spec.vertices[task.vertex].child
    try:
        node_in = input_node(spec, task, env.node_id(task))
        if handoff is not None:
            returned: Any = Command(update=handoff.update, goto=handoff.goto)
        else:
            returned = child.output(final) if child is not None and child.output is not None else final
        return succeeded(spec, at, node_in, returned, ctx=None, node_id=env.node_id(task))
    except Exception as exc:  # noqa: BLE001 - a failing output mapper or router is the task's error
        return at.failed(exc, retryable=not isinstance(exc, _NEVER_RETRIED))


def child_paused(at: Attempt, interrupts: tuple[Interrupt, ...]) -> VertexResult:
    """The task's outcome when its subgraph's run paused: its interrupts, named by path (`research/ask`)."""
    task = at.task
    nested = tuple(Interrupt(i.id, f"{task.vertex}/{i.vertex}", i.value, task.id, i.kind) for i in interrupts)
    return at.result("interrupt", interrupt=nested[0] if nested else None, nested=nested)


def child_failed(at: Attempt, exc: BaseException) -> VertexResult:
    """The task's outcome when its subgraph's run failed: the error, its vertex named by path."""
    task, attempt, env = at.task, at.number, at.env
    if isinstance(exc, VertexError):
        pathed = VertexError(
            f"{task.vertex}/{exc.vertex}",
            task_id=exc.task_id,
            step=exc.step,
            attempts=exc.attempts,
            error_type=exc.error_type,
            message=exc.error_message,
            others=exc.others,
            resumable=exc.resumable,
        )
        pathed.__cause__ = exc.__cause__
        return VertexResult.failure(task, attempt, ErrorInfo.from_exception(pathed), at.started, env.now())
    retryable = not isinstance(exc, _NEVER_RETRIED)
    exc.add_note(f"(in the run of subgraph vertex {task.vertex!r}, task {task.id!r})")
    if not isinstance(exc, ActorGraphError) and not isinstance(exc, Exception):
        exc = ActorGraphError(f"the run of subgraph {task.vertex!r} ended with {type(exc).__name__}: {exc}")
    return VertexResult.failure(
        task, attempt, ErrorInfo.from_exception(exc, retryable=retryable), at.started, env.now()
    )
