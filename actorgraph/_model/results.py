"""What a caller reads back: a run's result (`RunResult`) and a thread at a checkpoint (`Snapshot`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from actorgraph._model.records import ErrorInfo, Interrupt, RunStatus, SuperstepState

__all__ = ["RunResult", "Snapshot"]

S = TypeVar("S")


@dataclass(frozen=True, slots=True)
class RunResult(Generic[S]):
    """What `invoke` returns.

    Attributes:
        state: the final state when done; the run's current state when paused.
        status: `"done"` or `"interrupted"` (spent retries raise `VertexError`).
        interrupts: the pending interrupts when interrupted.
        step: the last committed superstep.
        run_id: this invoke's id (in logs and events).
        thread_id: the thread, if any.
        checkpoint_id: the last checkpoint written, if any.
    """

    state: S
    status: RunStatus
    interrupts: tuple[Interrupt, ...] = ()
    step: int = 0
    run_id: str = ""
    thread_id: str | None = None
    checkpoint_id: str | None = None


@dataclass(frozen=True, slots=True)
class Snapshot(Generic[S]):
    """A thread's state at one checkpoint, as returned by `get_state`.

    Attributes:
        state: the run's state at that point (the merge of what is in flight).
        status: `"running"`, `"done"`, `"interrupted"` or `"error"`.
        step: the last committed superstep.
        next: the vertices that run in the next (or pending) superstep.
        superstep: the pending superstep's results (paused runs), else empty.
        interrupts: the pending interrupts.
        checkpoint_id: this checkpoint's id.
        parent_id: the previous checkpoint's id.
        created_at: wall-clock seconds.
        thread_id: the thread.
        source: `"input"`, `"loop"`, `"update"` or `"fork"`.
        error: the merge conflict that keeps the state from being computed (`state`
            is then None and `status` "error"); fix it with `update_state`.
        subgraphs: with `get_state(..., subgraphs=True)`, the snapshots of the
            runs of the next superstep's tasks (their subgraphs', the graphs they
            invoked), by namespace (each with its own `subgraphs`); else empty.
    """

    state: S
    status: RunStatus
    step: int
    next: tuple[str, ...]
    superstep: SuperstepState
    interrupts: tuple[Interrupt, ...]
    checkpoint_id: str
    parent_id: str | None
    created_at: float
    thread_id: str
    source: str = "loop"
    error: ErrorInfo | None = None
    subgraphs: Mapping[str, Snapshot[Any]] = field(default_factory=dict)
