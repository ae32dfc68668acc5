"""Reading a state's keys and building a state of the same kind from new values.

States are mappings, dataclass instances, pydantic models, or anything else
(a value without keys, merged and replaced as a whole).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

__all__ = ["fields", "rebuild"]


def fields(state: Any) -> Mapping[str, Any] | None:
    """A state's keys and values, or None when the state has no keys."""
    if isinstance(state, Mapping):
        return state
    if dataclasses.is_dataclass(state) and not isinstance(state, type):
        return {f.name: getattr(state, f.name) for f in dataclasses.fields(state)}
    dump = getattr(state, "model_dump", None)
    if callable(dump) and hasattr(state, "model_copy"):
        return {name: getattr(state, name) for name in type(state).model_fields}
    return None


def rebuild(template: Any, values: dict[str, Any]) -> Any:
    """A state of `template`'s kind holding `values` (a plain dict when the kind cannot be rebuilt)."""
    if isinstance(template, Mapping):
        if type(template) is dict:
            return values
        factory: Any = type(template)
        try:
            return factory(values)
        except TypeError:
            return values
    if dataclasses.is_dataclass(template) and not isinstance(template, type):
        return dataclasses.replace(template, **values)
    return template.model_copy(update=values)
