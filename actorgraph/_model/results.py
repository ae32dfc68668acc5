"""What a caller reads back: a run's result (`RunResult`) and a thread at a checkpoint (`Snapshot`)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Generic, TypeVar

from actorgraph._model.records import ErrorInfo, Interrupt, RunStatus, SuperstepState

__all__ = ["INTERRUPT_KEY", "RunResult", "Snapshot"]

INTERRUPT_KEY: Final = "__interrupt__"
"""Where LangGraph's results and stream items hold the questions of a paused run."""

_ABSENT: Final = object()

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

    def __getitem__(self, key: str) -> Any:
        """LangGraph's reading of an invoke's result: `result["messages"]` is `result.state["messages"]`.

        `result["__interrupt__"]` is the list of the questions a paused run asks
        (`interrupt()` calls; a breakpoint asks none), as in LangGraph's result.
        A state that is not a mapping (a dataclass, a pydantic model) is read by attribute.

        Raises:
            KeyError: the state has no such key.
        """
        if key == INTERRUPT_KEY and self.questions:
            return list(self.questions)
        return _readable(self.state)[key]

    def __contains__(self, key: object) -> bool:
        """Whether `result[key]` reads something."""
        return self.get(key, _ABSENT) is not _ABSENT  # type: ignore[arg-type]

    def get(self, key: str, default: Any = None) -> Any:
        """`result[key]`, or `default` when the state has no such key."""
        try:
            return self[key]
        except KeyError:
            return default

    @property
    def questions(self) -> tuple[Interrupt, ...]:
        """The pending interrupts that ask a question (`interrupt()` calls), not breakpoints."""
        return tuple(i for i in self.interrupts if i.kind == "interrupt")


def _readable(state: Any) -> Mapping[str, Any]:
    """A state as a mapping: itself, a dataclass's fields or a pydantic model's ({} for others)."""
    if isinstance(state, Mapping):
        return state
    if dataclasses.is_dataclass(state):
        return {f.name: getattr(state, f.name) for f in dataclasses.fields(state)}
    names = getattr(type(state), "model_fields", None)  # a pydantic model
    return {name: getattr(state, name) for name in names} if isinstance(names, Mapping) else {}


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
