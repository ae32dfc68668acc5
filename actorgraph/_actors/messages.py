"""The messages actors exchange: small immutable records, matched by type."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pykka

from actorgraph._actors.cancel import Cancellation
from actorgraph._engine.task import TaskEnv
from actorgraph._model.records import ErrorInfo, Task, VertexResult

__all__ = ["CancelRun", "Done", "Order", "StartRun", "TimedOut"]


@dataclass(frozen=True, slots=True)
class Order:
    """Coordinator -> vertex actor: run one attempt of a task.

    Attributes:
        run_id: the run the task belongs to.
        reply_to: the coordinator to tell the outcome.
        task: the task with its recorded inputs.
        attempt: 1-based attempt number.
        token: identifies this dispatch; late answers to old tokens are discarded.
        env: the run's surroundings.
        cancel: set when the run is cancelled (the order is then dropped, an async vertex cancelled).
        failure: run the vertex's `on_error` handler for this error instead.
        child: for a subgraph task, how its subgraph's run starts (a `ChildCall`).
    """

    run_id: str
    reply_to: pykka.ActorRef[Any]
    task: Task
    attempt: int
    token: int
    env: TaskEnv
    cancel: Cancellation
    failure: ErrorInfo | None = None
    child: Any = None


@dataclass(frozen=True, slots=True)
class Done:
    """Vertex actor -> coordinator: an attempt's outcome."""

    run_id: str
    token: int
    result: VertexResult
    blobs: Mapping[str, bytes] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class StartRun:
    """Facade -> coordinator: build a run from its launch and start it."""

    launch: Any


@dataclass(frozen=True, slots=True)
class CancelRun:
    """Facade -> coordinator: stop a run between supersteps."""

    run_id: str


@dataclass(frozen=True, slots=True)
class TimedOut:
    """Timer -> coordinator: the attempt with `token` overran its vertex's timeout."""

    run_id: str
    token: int
