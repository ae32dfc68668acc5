"""Records: the small immutable values that every other layer passes around.

Nothing here runs user code, starts a thread or does I/O.
"""

from __future__ import annotations

import traceback as _traceback
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Literal, TypeAlias

from actorgraph._model.commands import PARENT, UNSET, Command, Handoff, Send
from actorgraph._model.errors import RecordedError

__all__ = [
    "END",
    "NS",
    "PARENT",
    "START",
    "UNSET",
    "Command",
    "ErrorInfo",
    "Handoff",
    "Interrupt",
    "Message",
    "Node",
    "Position",
    "Send",
    "SuperstepState",
    "Task",
    "VertexResult",
    "task_order",
]

START: Final = "__start__"
"""The pseudo-vertex a run's input comes from: `add_edge(START, "first")`."""

END: Final = "__end__"
"""The pseudo-vertex a finished branch goes to: `add_edge("last", END)`."""

NS: Final = "|"
"""Separates a thread from the namespace of a subgraph's run (`thread|research@2~1a2b3c4d`)."""

Merge: TypeAlias = Callable[[Any, Sequence[Any]], Any]
"""The merge signature: `merge(base, states) -> state` (see `actorgraph.merge`)."""

Status: TypeAlias = Literal["ok", "error", "interrupt"]
RunStatus: TypeAlias = Literal["done", "interrupted", "error", "running"]


def task_order(task_id: str) -> tuple[str, int]:
    """The sort key of a task id, the planning order: vertex name, then `Send` index (plain task first)."""
    vertex, _, index = task_id.partition(":")
    return (vertex, int(index) if index.isdigit() else -1)


@dataclass(frozen=True, slots=True, eq=False)
class Node:
    """One version of a state in a run's lineage graph.

    A vertex's output is a child of its input; a `Send` state is a child of the
    sender's output; a merged input is a child of the states it merged. Merges
    use the lowest common ancestor of their inputs as the base.

    Attributes:
        id: unique within the thread (also across forks).
        state: the state value (never mutated once recorded).
        parents: the versions this one was derived from.
        depth: 1 + the largest parent depth (0 for a root); parents are always shallower.
    """

    id: str
    state: Any
    parents: tuple[Node, ...] = ()
    depth: int = 0

    def __repr__(self) -> str:
        return f"Node({self.id!r})"

    def __eq__(self, other: object) -> bool:
        """Versions are equal when they are the same version of the thread (ids are unique in it)."""
        return self is other or (isinstance(other, Node) and self.id == other.id)

    def __hash__(self) -> int:
        return hash(self.id)

    @staticmethod
    def child(node_id: str, state: Any, *parents: Node) -> Node:
        """Create a version derived from `parents`."""
        depth = 1 + max(p.depth for p in parents) if parents else 0
        return Node(node_id, state, parents, depth)


@dataclass(frozen=True, slots=True)
class Message:
    """One state travelling to a vertex (or to END), with its lineage.

    Attributes:
        target: the receiving vertex, or END.
        node: the lineage version carrying the state.
        sender: the task id that sent it (START for the run's input).
        send: True when it came from a `Send` (it then runs as its own task).
        step: the superstep in which it was sent (0 for the input).
        join: the join edge it is buffered for, or "" for a plain delivery.
    """

    target: str
    node: Node
    sender: str
    send: bool = False
    step: int = 0
    join: str = ""

    @property
    def state(self) -> Any:
        """The state this message carries."""
        return self.node.state


@dataclass(frozen=True, slots=True)
class Position:
    """Where a run stands after a committed superstep.

    Attributes:
        step: the last committed superstep (0: only the input is recorded).
        inbox: messages delivered for the next superstep, in delivery order.
        joins: join id -> messages buffered until every source has delivered.
        finished: messages delivered to END, in delivery order.
        values: vertex -> its private value.
    """

    step: int
    inbox: tuple[Message, ...] = ()
    joins: Mapping[str, tuple[Message, ...]] = field(default_factory=dict)
    finished: tuple[Message, ...] = ()
    values: Mapping[str, Any] = field(default_factory=dict)

    @property
    def done(self) -> bool:
        """True when nothing is in flight: the run has ended."""
        return not self.inbox

    def next_vertices(self) -> tuple[str, ...]:
        """The vertices that run in the next superstep, by name."""
        return tuple(sorted({m.target for m in self.inbox}))

    def messages(self) -> list[Message]:
        """Every live message: inboxes, join buffers and END deliveries."""
        out = list(self.inbox)
        for buffered in self.joins.values():
            out.extend(buffered)
        out.extend(self.finished)
        return out


@dataclass(frozen=True, slots=True)
class Interrupt:
    """A pause requested by a vertex (or a breakpoint), waiting for an answer.

    Attributes:
        id: deterministic from thread, step, task and order in the task.
        vertex: the vertex that paused.
        value: what the vertex asked (shown to the person answering).
        task_id: the task that paused.
        kind: "interrupt" (the vertex called `interrupt()`), "before" or "after"
            (an `interrupt_before` / `interrupt_after` breakpoint).
    """

    id: str
    vertex: str
    value: Any
    task_id: str = ""
    kind: str = "interrupt"


@dataclass(frozen=True, slots=True)
class ErrorInfo:
    """A task's failure, as a value that survives a trip through a checkpoint.

    Attributes:
        type: the exception's qualified type name (`module.Class`).
        message: `str(exception)`.
        traceback: the formatted traceback text.
        exception: the exception object itself, when the error happened in this process.
        retryable: False for errors the engine never retries (routing, merge conflicts).
    """

    type: str
    message: str
    traceback: str = ""
    exception: BaseException | None = field(default=None, compare=False, repr=False)
    retryable: bool = True

    def as_exception(self) -> BaseException:
        """The exception itself, or a `RecordedError` standing in for it (after a checkpoint)."""
        if self.exception is not None:
            return self.exception
        return RecordedError(self.type, self.message, self.traceback)

    @staticmethod
    def from_exception(exc: BaseException, *, retryable: bool = True) -> ErrorInfo:
        """Capture an exception with its traceback."""
        kind = type(exc)
        text = "".join(_traceback.format_exception(kind, exc, exc.__traceback__))
        module = "actorgraph" if kind.__module__ == "actorgraph._model.errors" else kind.__module__
        return ErrorInfo(f"{module}.{kind.__qualname__}", str(exc), text, exc, retryable)


@dataclass(frozen=True, slots=True)
class VertexResult:
    """One task's outcome in one superstep: `ok`, `error` or `interrupt`.

    Attributes:
        task_id: the vertex name, plus `:index` for a `Send` task.
        vertex: the vertex that ran.
        status: `"ok"`, `"error"` or `"interrupt"`.
        state: the new state (`ok`), else None.
        outbox: the messages the task sends when the superstep commits (`ok`).
        error: what went wrong (`error`).
        interrupt: the pending interrupt (`interrupt`).
        attempts: how many attempts were made in the invoke that produced this result.
        inputs: the messages the task was given.
        value: the vertex's private value after the task.
        resumes: the answers to this task's interrupts received so far, in order.
        started_at: wall-clock seconds when the last attempt (the one this outcome is of) started.
        finished_at: wall-clock seconds when the last attempt ended.
        nested: for a subgraph task paused in its subgraph: every interrupt the
            subgraph waits for, named by path (`research/ask`).
        handoff: for a task of a subgraph that returned `Command(graph=PARENT)`.
        handler: True when the vertex's `on_error` handler produced this outcome
            (`error` then keeps the failure it handled).
        cached: True when the outcome was reused from the node cache (`CachePolicy`):
            the vertex's function was not called.
        answers: interrupt id -> answer the task was given for the graphs its function
            invoked (kept, so that a retry after a failure gives them again).
        node: the new state's lineage version (the engine's bookkeeping).
    """

    task_id: str
    vertex: str
    status: Status
    state: Any = None
    outbox: tuple[Message, ...] = ()
    error: ErrorInfo | None = None
    interrupt: Interrupt | None = None
    attempts: int = 1
    inputs: tuple[Message, ...] = ()
    value: Any = None
    resumes: tuple[Any, ...] = ()
    started_at: float = 0.0
    finished_at: float = 0.0
    handler: bool = False
    nested: tuple[Interrupt, ...] = ()
    handoff: Handoff | None = None
    cached: bool = False
    answers: Mapping[str, Any] | None = None
    node: Node | None = field(default=None, repr=False, compare=False)

    @property
    def ok(self) -> bool:
        """True when the task finished with a new state."""
        return self.status == "ok"

    @staticmethod
    def failure(
        task: Task, attempt: int, error: ErrorInfo, started_at: float = 0.0, finished_at: float = 0.0
    ) -> VertexResult:
        """The `error` outcome of attempt `attempt` of `task` (its inputs, value and answers kept)."""
        return VertexResult(
            task.id,
            task.vertex,
            "error",
            error=error,
            attempts=attempt,
            inputs=task.inputs,
            value=task.value,
            resumes=task.resumes,
            answers=task.answers,
            started_at=started_at,
            finished_at=finished_at,
        )


@dataclass(frozen=True, slots=True)
class SuperstepState:
    """The `VertexResult` of every task of one superstep, in task order.

    Attributes:
        step: the superstep number.
        results: task id -> `VertexResult`, in planning order.
    """

    step: int
    results: Mapping[str, VertexResult] = field(default_factory=dict)

    @property
    def failed(self) -> tuple[VertexResult, ...]:
        """The tasks that ended in `error`."""
        return tuple(r for r in self.results.values() if r.status == "error")

    @property
    def interrupted(self) -> tuple[VertexResult, ...]:
        """The tasks that ended in `interrupt`."""
        return tuple(r for r in self.results.values() if r.status == "interrupt")

    @property
    def questions(self) -> tuple[Interrupt, ...]:
        """Every question the superstep's interrupted tasks ask (all of a subgraph task's), in task order."""
        return tuple(
            q for r in self.interrupted for q in (r.nested or ((r.interrupt,) if r.interrupt else ()))
        )


@dataclass(frozen=True, slots=True)
class Task:
    """One unit of work planned for a superstep: a vertex with its inbox.

    Attributes:
        id: deterministic task id (vertex name, plus `:index` for a `Send`).
        vertex: the vertex to run.
        step: the superstep.
        inputs: the messages it receives (several are merged into one state).
        value: the vertex's private value before the task.
        resumes: answers to the task's earlier interrupts, in order.
        answers: interrupt id -> answer, for the questions of the graphs (and
            `@task`s) the vertex's function invoked and that paused it (see `NestedPause`).
    """

    id: str
    vertex: str
    step: int
    inputs: tuple[Message, ...]
    value: Any = None
    resumes: tuple[Any, ...] = ()
    answers: Mapping[str, Any] | None = None
