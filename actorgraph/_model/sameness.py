"""Whether a value is unchanged: the same object, or equal in every way a state can tell.

`==` cannot be trusted to say a value did not change: `[1, 2] == [1.0, 2.0]`,
`[True] == [1]`, `{"a": 1, "b": 2} == {"b": 2, "a": 1}`, `0.0 == -0.0` and
`Decimal("1.0") == Decimal("1.00")`, yet a state that holds one is not the state
that holds the other (a resumed run would read back the other types, key order
or sign). So a checkpoint that keeps a version's unchanged values by reference,
and a merge that takes only the branches that changed a key, ask `unchanged`:
identity first (the common unchanged value is the very object, and costs
nothing), then `==`, and only where `==` says equal, a walk that checks the types,
the order of keys and the signs `==` ignores. The walk rides on identity too: a
copy of a state shares its scalars with the original, so most items are the same
objects and are passed over at C speed.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import decimal
import math
from collections.abc import Callable
from itertools import chain
from operator import is_
from typing import Any, Final

__all__ = ["unchanged"]

_TRUSTED: Final = frozenset({str, bytes, int, bool, type(None), range, type(Ellipsis)})
"""Types whose equal values of the same type are indistinguishable."""
_all_dicts: Final = frozenset({dict}).issuperset
_values: Final = dict.values


def unchanged(old: Any, new: Any) -> bool:
    """Whether `new` is `old`, as far as any reader of a state can tell.

    The same object; or of the same type, equal by `==` (True, or a truthy
    scalar such as numpy's `True_`: an array's element-wise answer never counts)
    and, all the way down, of the same types, with keys in the same order and
    floats of the same sign. A value whose `==` raises is changed.
    """
    if old is new:
        return True
    kind = type(old)
    if kind is not type(new):
        return False
    try:
        equal = old == new
        if equal is not True and (equal is False or hasattr(equal, "__len__") or not equal):
            return False
        if kind in _TRUSTED:
            return True
        check = _CHECKS.get(kind)
        return check(old, new) if check is not None else _other(old, new)
    except Exception:  # noqa: BLE001 - a user type's == may raise anything (a cycle: RecursionError): changed
        return False


def _item(old: Any, new: Any) -> bool:
    """`unchanged` for items of containers already known equal pairwise (by position or key)."""
    if old is new:
        return True
    kind = type(old)
    if kind is not type(new):
        return False
    return kind in _TRUSTED or _alike(old, new)


def _alike(old: Any, new: Any) -> bool:
    """Whether two equal values of the same type are also alike: types, key order, signs."""
    kind = type(old)
    if kind in _TRUSTED:
        return True
    check = _CHECKS.get(kind)
    return check(old, new) if check is not None else _other(old, new)


def _other(old: Any, new: Any) -> bool:
    """`_alike` for types without a check of their own: subclasses, dataclasses, pydantic models."""
    if isinstance(old, (list, tuple)):
        return _items(old, new)
    if isinstance(old, dict):
        return _mapping(old, new)
    if dataclasses.is_dataclass(old):
        return all(
            _unchanged_field(getattr(old, f.name), getattr(new, f.name))
            for f in dataclasses.fields(old)
            if f.compare
        )
    fields = getattr(type(old), "model_fields", None)  # a pydantic model: == compares its field values
    if isinstance(fields, dict) and isinstance(getattr(old, "__dict__", None), dict):
        return _mapping(old.__dict__, new.__dict__)
    return True  # another type: its == is all there is to ask


def _unchanged_field(old: Any, new: Any) -> bool:
    return old is new or (type(old) is type(new) and _alike(old, new))


def _items(old: Any, new: Any) -> bool:
    """Equal sequences (or a dict's values): items alike, position by position."""
    if all(map(is_, old, new)):
        return True
    if _all_dicts(map(type, old)) and _all_dicts(map(type, new)) and _rows_shared(old, new):
        return True  # rows copied one by one (`dict.copy`): the same keys and values, at C speed
    return all(map(_item, old, new))


def _rows_shared(old: Any, new: Any) -> bool:
    """Whether two lists of equal dicts hold the very same keys and values, in the same order."""
    keys = all(map(is_, chain.from_iterable(old), chain.from_iterable(new)))
    return keys and all(
        map(is_, chain.from_iterable(map(_values, old)), chain.from_iterable(map(_values, new)))
    )


def _mapping(old: dict[Any, Any], new: dict[Any, Any]) -> bool:
    """Equal dicts: the same keys in the same order, and values alike."""
    if not all(map(is_, old, new)):  # keys not the same objects: each must be the same key, in order
        for a, b in zip(old, new, strict=True):
            if not (a is b or (type(a) is type(b) and a == b and _item(a, b))):
                return False
    return _items(old.values(), new.values())


def _sets(old: Any, new: Any) -> bool:
    """Equal sets: each item of `new` alike the item of `old` it equals."""
    mine = {item: item for item in old}
    return all(_item(mine[item], item) for item in new)


def _float(old: float, new: float) -> bool:
    return old != 0.0 or math.copysign(1.0, old) == math.copysign(1.0, new)


def _complex(old: complex, new: complex) -> bool:
    return _float(old.real, new.real) and _float(old.imag, new.imag)


def _decimal(old: decimal.Decimal, new: decimal.Decimal) -> bool:
    return old.as_tuple() == new.as_tuple()  # 1.0 and 1.00, 0 and -0 are equal, not alike


def _timed(old: Any, new: Any) -> bool:
    """Equal times of day or instants: also the same zone and fold (12:00 UTC is not 13:00 CET)."""
    return bool(old.tzinfo == new.tzinfo and old.utcoffset() == new.utcoffset() and old.fold == new.fold)


_CHECKS: Final[dict[type, Callable[[Any, Any], bool]]] = {
    float: _float,
    complex: _complex,
    decimal.Decimal: _decimal,
    dt.datetime: _timed,
    dt.time: _timed,
    set: _sets,
    frozenset: _sets,
    list: _items,
    tuple: _items,
    dict: _mapping,
}
