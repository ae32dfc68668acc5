"""Values for isolation tests: user objects, exact equality, and a vandal that changes every mutable part."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Box:
    """A mutable user object: copied by `copy.deepcopy`."""

    items: list[Any] = field(default_factory=list)


@dataclass(frozen=True)
class Frozen:
    """A frozen dataclass: not mutable through its own attributes, but its list is."""

    items: list[Any] = field(default_factory=list)


class Keyed:
    """Hashable by value and mutable: may sit in a set, a frozenset or among a dict's keys."""

    def __init__(self, n: int) -> None:
        self.n = n

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Keyed) and other.n == self.n

    def __hash__(self) -> int:
        return hash(self.n)


def same(a: Any, b: Any) -> bool:
    """Equal with the same types all the way down, keys in the same order, -0.0 apart from 0.0."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return (math.isnan(a) and math.isnan(b)) or (a == b and math.copysign(1, a) == math.copysign(1, b))
    if isinstance(a, complex):
        return same(a.real, b.real) and same(a.imag, b.imag)
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(map(same, a, b))
    if isinstance(a, (Box, Frozen)):
        return same(a.items, b.items)
    if isinstance(a, Keyed):
        return a.n == b.n
    return a == b  # str, bytes, int, bool, None, sets


def mutable_parts(value: Any, found: dict[int, Any] | None = None) -> dict[int, Any]:
    """Every mutable object reachable from `value` (keys and set items too), by id."""
    found = {} if found is None else found
    if isinstance(value, (dict, list, set, Box, Keyed)):
        if id(value) in found:
            return found
        found[id(value)] = value
    children: Any = ()
    if isinstance(value, dict):
        children = [*value.keys(), *value.values()]
    elif isinstance(value, (list, tuple, set, frozenset)):
        children = value
    elif isinstance(value, (Box, Frozen)):
        children = [value.items]
    for child in children:
        mutable_parts(child, found)
    return found


def vandalize(value: Any) -> None:
    """Change every mutable part reachable from `value`, in place."""
    for part in list(mutable_parts(value).values()):
        if isinstance(part, dict):
            part["vandal"] = 1
        elif isinstance(part, list):
            part.append("vandal")
        elif isinstance(part, set):
            part.add("vandal")
        elif isinstance(part, Box):
            part.items = ["vandal"]
        elif isinstance(part, Keyed):
            part.n = -99
