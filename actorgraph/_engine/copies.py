"""Isolation: every task gets its own copy of its input state.

Vertices share nothing: a state handed to one vertex is a private copy, so no
other vertex's code (nor a retry of the same task) can see it mutated. Plain
values are copied by a structural walk; anything else goes through
`copy.deepcopy`, which keeps shared references and cycles intact.

The walk is where isolation's time goes, so it does what it can in C: a list
or dict whose items are all immutable scalars is copied with `.copy()`, and a
list of flat dicts (rows, records, messages) with `map(dict.copy, ...)` once
one pass over the types of all their values finds only scalars. Immutable
values (scalars, and tuples and frozensets made only of them) are shared,
never copied; so are dict keys that are such values.
"""

from __future__ import annotations

import copy
import gc
from itertools import chain
from operator import is_
from typing import Any, Final

__all__ = ["copy_state"]

_ATOMIC: Final = frozenset({int, float, str, bool, type(None), bytes, complex, range, type(Ellipsis)})
_all_atomic: Final = _ATOMIC.issuperset  # a C loop over an iterable of types, stopping at the first miss
_all_dicts: Final = frozenset({dict}).issuperset
_values: Final = dict.values
_tracked: Final = gc.is_tracked


def copy_state(value: Any) -> Any:
    """A private copy of `value` that shares no mutable part with it.

    Args:
        value: a state (any deep-copyable object).

    Returns:
        The copy; immutable values (scalars, and tuples and frozensets of
        them) are returned as they are.
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
        if not _tracked(value) and _all_atomic(map(type, value.values())):
            return value.copy()  # untracked: its keys are immutable (see _flat_rows)
        return {
            k if type(k) in _ATOMIC else _copy(k): v if type(v) in _ATOMIC else _copy(v)
            for k, v in value.items()
        }
    if kind is list:
        return value.copy() if _all_atomic(map(type, value)) else _copy_list(value)
    if kind is tuple or kind is frozenset:
        if _all_atomic(map(type, value)):
            return value
        copied = list(map(_copy, value))
        return value if all(map(is_, copied, value)) else kind(copied)
    if kind is set:
        return set(value) if _all_atomic(map(type, value)) else set(map(_copy, value))
    return copy.deepcopy(value)


def _copy_list(items: list[Any]) -> list[Any]:
    if _flat_rows(items):
        return list(map(dict.copy, items))
    return [v if type(v) in _ATOMIC else _copy(v) for v in items]


def _flat_rows(items: list[Any]) -> bool:
    """Whether `items` are dicts whose values are all scalars, and whose keys are immutable.

    A dict the garbage collector does not track holds no key or value that
    may hold another object (CPython tracks a dict from the first such one
    on), so its keys, being hashable, are immutable; its values still need
    their types checked (a bytearray or an array is mutable and not tracked).
    """
    return (
        _all_dicts(map(type, items))
        and not any(map(_tracked, items))
        and _all_atomic(map(type, chain.from_iterable(map(_values, items))))
    )
