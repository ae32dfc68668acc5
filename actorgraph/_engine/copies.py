"""Isolation: every task gets its own copy of its input state.

Vertices share nothing: a state handed to one vertex is a private copy, so no
other vertex's code (nor a retry of the same task) can see it mutated. Plain
values are copied by a fast structural walk; anything else goes through
`copy.deepcopy`, which keeps shared references and cycles intact.
"""

from __future__ import annotations

import copy
from typing import Any, Final

__all__ = ["copy_state"]

_ATOMIC: Final = frozenset(
    {int, float, str, bool, type(None), bytes, complex, frozenset, range, type(Ellipsis)}
)


def copy_state(value: Any) -> Any:
    """A private copy of `value` that shares no mutable part with it.

    Args:
        value: a state (any deep-copyable object).

    Returns:
        The copy; immutable scalars are returned as they are.
    """
    try:
        return _copy(value)
    except RecursionError:  # a cycle through plain containers
        return copy.deepcopy(value)


def _copy(value: Any) -> Any:
    kind = type(value)
    if kind in _ATOMIC:
        return value
    if kind is dict:
        return {k: v if type(v) in _ATOMIC else _copy(v) for k, v in value.items()}
    if kind is list:
        return [v if type(v) in _ATOMIC else _copy(v) for v in value]
    if kind is tuple:
        if all(type(v) in _ATOMIC for v in value):
            return value
        return tuple(_copy(v) for v in value)
    if kind is set:
        return set(value)
    return copy.deepcopy(value)
