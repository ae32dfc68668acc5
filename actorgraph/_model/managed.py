"""Managed values: state keys the engine fills for the vertex that reads them, never stored.

As LangGraph's: a TypedDict state key annotated `RemainingSteps` holds, in the
state a vertex (and its routers) are given, how many more supersteps the run
may start after this one before its recursion limit; `IsLastStep` is True in
the last one. They are not part of the state: a vertex's return value loses
them, the checkpoint never holds them, and an input or update that sets one is
refused.
"""

from __future__ import annotations

from typing import Annotated, Any, Final, TypeAlias

__all__ = ["IsLastStep", "Managed", "RemainingSteps", "managed_kind"]


class Managed:
    """The marker of a managed value in an annotation (`Annotated[int, Managed("remaining_steps")]`)."""

    __slots__ = ("kind",)

    def __init__(self, kind: str) -> None:
        """Mark a key as the managed value `kind`: "remaining_steps" or "is_last_step"."""
        self.kind = kind

    def __repr__(self) -> str:
        return f"Managed({self.kind!r})"


REMAINING_STEPS: Final = Managed("remaining_steps")
IS_LAST_STEP: Final = Managed("is_last_step")

RemainingSteps: TypeAlias = Annotated[int, REMAINING_STEPS]
"""A state key the engine fills: how many more supersteps the run may start after this one.

`remaining_steps: RemainingSteps` in a TypedDict state; a loop ends itself, with
its state, before `RecursionLimitError` (`if state["remaining_steps"] <= 2: return END`).
"""

IsLastStep: TypeAlias = Annotated[bool, IS_LAST_STEP]
"""A state key the engine fills: True in the last superstep the run's recursion limit allows."""


def managed_kind(hint: Any) -> str | None:
    """The managed value an annotation declares ("remaining_steps", "is_last_step"), or None."""
    for meta in getattr(hint, "__metadata__", ()):
        if isinstance(meta, Managed):
            return meta.kind
    return None


def managed_value(kind: str, remaining: int) -> Any:
    """What a managed key holds for a task that may be followed by `remaining` more supersteps."""
    return remaining == 0 if kind == "is_last_step" else remaining
