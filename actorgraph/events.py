"""The records of what happens in a run, for listeners and `stream(mode="events")`.

Subscribe with `Graph.compile(listeners=[fn])` (every run) or
`invoke(..., listeners=[fn])` (one run). A listener is called from the
coordinator's and the vertices' threads, so it must be thread-safe and quick;
give it a `kinds` attribute (a set of event classes) to receive only those.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeAlias

from actorgraph._model.records import ErrorInfo, Interrupt, Task, VertexResult

__all__ = [
    "CheckpointSaved",
    "Custom",
    "Event",
    "Interrupted",
    "JoinWaiting",
    "Listener",
    "MessageChunk",
    "RetryScheduled",
    "RunFinished",
    "RunStarted",
    "SuperstepCommitted",
    "SuperstepStarted",
    "TaskFinished",
    "TaskScheduled",
    "TaskStarted",
]

Listener: TypeAlias = Callable[["Event"], None]
"""A callable that receives events (from the coordinator's and the vertices' threads)."""


@dataclass(frozen=True, slots=True)
class Event:
    """What every event carries.

    Attributes:
        run_id: the invoke's id.
        thread_id: the thread, or None.
        step: the superstep it belongs to.
        namespace: "" for the run itself; for a run of a subgraph inside it, the
            subgraph's namespace (`research@2~1a2b3c4d`, nested ones joined by `|`).
    """

    run_id: str
    thread_id: str | None
    step: int
    namespace: str = field(default="", kw_only=True)


@dataclass(frozen=True, slots=True)
class RunStarted(Event):
    """A run started (or resumed) from superstep `step`."""


@dataclass(frozen=True, slots=True)
class SuperstepStarted(Event):
    """A superstep was planned.

    Attributes:
        tasks: its task ids, in task order.
    """

    tasks: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class TaskScheduled(Event):
    """A task is about to run its first attempt: what it is given, and what sent it.

    Built only when a listener takes it (the stream modes `tasks` and `debug` do):
    its input is the merge of the task's messages. A task whose outcome was
    recorded before (a resumed run keeps it) or that waits at an
    `interrupt_before` breakpoint is not scheduled.

    Attributes:
        task_id: the task.
        vertex: its vertex.
        input: the state the vertex is given (None when its messages do not
            merge: the task then fails with the conflict).
        triggers: the tasks whose messages it runs with, in delivery order
            (`START` for the run's input).
    """

    task_id: str
    vertex: str
    input: Any
    triggers: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class TaskStarted(Event):
    """A vertex actor started an attempt of a task.

    Attributes:
        task_id: the task.
        vertex: its vertex.
        attempt: 1 for the first attempt.
    """

    task_id: str
    vertex: str
    attempt: int


@dataclass(frozen=True, slots=True)
class TaskFinished(Event):
    """An attempt of a task ended.

    Attributes:
        result: its outcome.
        final: False when a retry follows (the result is then an error).
        cached: True when the outcome was reused from the node cache (`CachePolicy`)
            and the vertex's function was not called.
    """

    result: VertexResult
    final: bool = True
    cached: bool = False


@dataclass(frozen=True, slots=True)
class RetryScheduled(Event):
    """A failed attempt will be tried again.

    Attributes:
        task_id: the task.
        vertex: its vertex.
        attempt: the attempt that failed.
        delay: seconds before the next attempt.
        error: why the attempt failed.
    """

    task_id: str
    vertex: str
    attempt: int
    delay: float
    error: ErrorInfo


@dataclass(frozen=True, slots=True)
class SuperstepCommitted(Event):
    """A superstep committed (step 0: the input was recorded).

    Attributes:
        state: the run's state after it.
        checkpoint_id: the checkpoint written, if any.
    """

    state: Any
    checkpoint_id: str | None = None


@dataclass(frozen=True, slots=True)
class CheckpointSaved(Event):
    """A checkpoint of the run was stored; `step` is its last committed superstep.

    A resumed run's first is the checkpoint it continues from (stored before
    it started). Built only when a listener takes it (the stream modes
    `checkpoints` and `debug` do); a run without a checkpointer stores none.

    Attributes:
        checkpoint_id: the checkpoint (`get_state(thread_id, checkpoint_id)` reads it).
        parent_id: the checkpoint before it in the thread, or None.
        source: `"input"`, `"loop"`, `"update"` or `"fork"`.
        state: the thread's state at it (`Snapshot.state`).
        next: the vertices of the superstep after it (`Snapshot.next`).
        tasks: that superstep's tasks, in task order.
        results: the outcomes stored with it for those tasks, by task id (a
            superstep that paused, or that a resumed run continues).
        subgraphs: for each subgraph task, the namespace its subgraph's run is
            stored under, relative to this run's own.
    """

    checkpoint_id: str
    parent_id: str | None
    source: str
    state: Any
    next: tuple[str, ...]
    tasks: tuple[Task, ...] = ()
    results: Mapping[str, VertexResult] = field(default_factory=dict)
    subgraphs: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Interrupted(Event):
    """The run paused for a person.

    Attributes:
        interrupts: what it waits for.
        state: the run's state as it paused (`RunResult.state`, before the output schema).
    """

    interrupts: tuple[Interrupt, ...]
    state: Any = None


@dataclass(frozen=True, slots=True)
class JoinWaiting(Event):
    """A run ended with a join that never fired; its states count toward the result.

    Attributes:
        join: the join's id.
        target: the vertex that would have run.
        missing: the sources that never delivered.
    """

    join: str
    target: str
    missing: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class RunFinished(Event):
    """A run ended: `done`, `interrupted`, `error` or `cancelled`.

    Attributes:
        status: how it ended.
        state: its state (final when done), or None on error.
        error: what went wrong, for `error`.
    """

    status: str
    state: Any = None
    error: ErrorInfo | None = None


@dataclass(frozen=True, slots=True)
class Custom(Event):
    """A payload a vertex sent with `ctx.emit(payload)`.

    Attributes:
        task_id: the task that sent it.
        vertex: its vertex.
        payload: what it sent.
    """

    task_id: str
    vertex: str
    payload: Any


@dataclass(frozen=True, slots=True)
class MessageChunk(Event):
    """A piece of a message a vertex made (`ctx.stream_message`, or the agent's model streaming).

    Attributes:
        task_id: the task that made it.
        vertex: its vertex.
        chunk: a message dict (`{"role": "assistant", "content": piece, "id": ...}`,
            the pieces of one message sharing its id), or a langchain-core chunk.
    """

    task_id: str
    vertex: str
    chunk: Any

    def metadata(self) -> dict[str, Any]:
        """What `stream(mode="messages")` pairs the chunk with: where it was made."""
        return {
            "vertex": self.vertex,
            "step": self.step,
            "task_id": self.task_id,
            "thread_id": self.thread_id,
            "namespace": self.namespace,
        }
