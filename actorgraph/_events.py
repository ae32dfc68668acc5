"""Events: what happens in a run, as frozen records.

Every stream mode, listener and log line is built on these. A listener is any
callable taking an event; it may declare the event types it wants in a `kinds`
attribute, and events nobody wants are never built.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeAlias

from actorgraph._types import ErrorInfo, Interrupt, VertexResult

__all__ = [
    "Custom",
    "Event",
    "Interrupted",
    "JoinWaiting",
    "Listener",
    "RetryScheduled",
    "RunFinished",
    "RunStarted",
    "SuperstepCommitted",
    "SuperstepStarted",
    "TaskFinished",
    "TaskStarted",
    "log_entry",
    "log_fields",
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
    """

    run_id: str
    thread_id: str | None
    step: int


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
    """

    result: VertexResult
    final: bool = True


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
class Interrupted(Event):
    """The run paused for a person.

    Attributes:
        interrupts: what it waits for.
    """

    interrupts: tuple[Interrupt, ...]


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


_ROUTINE: dict[type[Event], tuple[int, str]] = {
    RunStarted: (logging.DEBUG, "run started"),
    SuperstepStarted: (logging.DEBUG, "superstep started"),
    TaskStarted: (logging.DEBUG, "task started"),
    RetryScheduled: (logging.INFO, "retry scheduled"),
    SuperstepCommitted: (logging.DEBUG, "superstep committed"),
    Interrupted: (logging.INFO, "interrupted"),
    JoinWaiting: (logging.WARNING, "join never fired"),
    Custom: (logging.DEBUG, "custom"),
}


def log_entry(event: Event) -> tuple[int, str]:
    """The stdlib level and the name an event is logged with (the one table of both).

    Cheap, so the caller can decide whether to build the event's fields.
    """
    if isinstance(event, TaskFinished):
        match event.result.status:
            case "error":
                return (logging.ERROR if event.final else logging.WARNING), "task failed"
            case "interrupt":
                return logging.INFO, "task finished"
        return logging.DEBUG, "task finished"
    if isinstance(event, RunFinished):
        return (logging.ERROR, "run failed") if event.error is not None else (logging.DEBUG, "run finished")
    return _ROUTINE.get(type(event), (logging.DEBUG, type(event).__name__))


def log_fields(event: Event) -> dict[str, Any]:
    """The structured fields of an event's log record."""
    fields: dict[str, Any] = {"run_id": event.run_id, "thread_id": event.thread_id, "step": event.step}
    match event:
        case TaskFinished(result=r):
            fields.update(vertex=r.vertex, task_id=r.task_id, attempt=r.attempts, status=r.status)
            if r.status == "error":
                fields["error"] = r.error.type if r.error else None
        case TaskStarted(task_id=task_id, vertex=vertex, attempt=attempt):
            fields.update(task_id=task_id, vertex=vertex, attempt=attempt)
        case RetryScheduled(task_id=task_id, vertex=vertex, attempt=attempt, delay=delay, error=error):
            fields.update(task_id=task_id, vertex=vertex, attempt=attempt, delay=delay, error=error.type)
        case JoinWaiting(join=join, target=target, missing=missing):
            fields.update(join=join, target=target, missing=list(missing))
        case Interrupted(interrupts=interrupts):
            fields["interrupts"] = [i.id for i in interrupts]
        case RunFinished(status=status, error=error):
            fields["status"] = status
            if error is not None:
                fields["error"] = error.type
        case Custom(vertex=vertex, task_id=task_id):
            fields.update(vertex=vertex, task_id=task_id)
    return fields
