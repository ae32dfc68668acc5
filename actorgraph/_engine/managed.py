"""Managed values in the states vertices and routers are given, and out of what they return. Pure.

A TypedDict state key annotated `RemainingSteps` (or `IsLastStep`) is filled in
the vertex's input and its routers' state with the task's value, and dropped
from what the vertex returns, so it never travels or is stored (`_model/managed.py`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from actorgraph._model.managed import managed_value
from actorgraph._model.records import Command
from actorgraph._model.spec import GraphSpec

__all__ = ["managed_view", "without_managed"]


def managed_view(spec: GraphSpec, state: Any, remaining: int | None) -> Any:
    """`state` with the graph's managed keys filled for a task followed by at most `remaining` supersteps."""
    managed = spec.schema.managed if spec.schema is not None else None
    if not managed or remaining is None or not isinstance(state, Mapping):
        return state
    return {**state, **{key: managed_value(kind, remaining) for key, kind in managed.items()}}


def without_managed(spec: GraphSpec, returned: Any) -> Any:
    """What a vertex returned, without the managed keys it was given (in a state, an update, a `Command`)."""
    managed = spec.schema.managed if spec.schema is not None else None
    if not managed:
        return returned
    if isinstance(returned, Command) and isinstance(returned.update, Mapping):
        return dataclasses.replace(returned, update=_dropped(returned.update, managed))
    return _dropped(returned, managed) if isinstance(returned, Mapping) else returned


def _dropped(values: Mapping[str, Any], managed: Mapping[str, str]) -> Any:
    if not any(key in values for key in managed):
        return values
    return {key: value for key, value in values.items() if key not in managed}
