"""Merging several states into one without losing an update.

A merge is any callable `merge(base, states) -> state`. The engine calls it when
a vertex receives several states in one superstep (fan-in, join) and at the end
of a run, with `base` = the lowest common ancestor of the states in the run's
lineage (`{}` when they share none). Every branch's *change* relative to the base
is therefore known, which is what lets parallel `+5` and `+3` on `10` give `18`.

- `three_way` is the default: per key, a change made by one branch is taken; the
  same change made by several is taken once; different changes raise
  `MergeConflictError`.
- `by_key({"log": append, "n": add}, default=...)` gives some keys a reducer.

A branch changed a key when its value is not the base's: not the same object,
nor equal with the same types, key order and signs all the way down (`==` alone
would let `[1.0, 2.0]` pass for an unchanged `[1, 2]`, and lose it).

Reducers: `replace` (last change in task order wins), `append` (every item any
branch appended, once), `add` (sum of the branches' increments; sequences are
appended), `union` (set additions and removals of every branch), `merge_dicts`
(per sub-key changes, last wins), or any binary function `f(a, b)`, folded over
the values of the branches that changed the key, in task order (right for max,
min, or). `operator.add` is read as `add`, so LangGraph's `Annotated[list,
operator.add]` habit does not duplicate the base.
"""

from __future__ import annotations

import operator
from collections.abc import Mapping, Sequence
from typing import Any, Final

from actorgraph._engine.fields import fields, rebuild
from actorgraph._model.errors import ConfigError, InvalidUpdateError, MergeConflictError
from actorgraph._model.records import Merge
from actorgraph._model.sameness import unchanged

__all__ = [
    "MISSING",
    "Merge",
    "Reducer",
    "add",
    "append",
    "apply_rule",
    "by_key",
    "has_keys",
    "merge_dicts",
    "replace",
    "three_way",
    "union",
    "works_by_key",
]


STATE_KEY: Final = "<state>"


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"

    def __bool__(self) -> bool:
        return False


MISSING: Final[Any] = _Missing()
"""Stands for an absent key (a key a branch deleted, or the base never had)."""


class Reducer:
    """A change-aware reducer: combines the branches' changes to one key, and applies updates.

    Subclasses implement `merge(base, values)`, where `base` is the key's value
    in the merge base (or `MISSING`) and `values` are the values (or `MISSING`
    for a deletion) of the branches that changed it, in task order. A reducer is
    also a plain binary function, `reducer(old, new)`: its *apply rule*, how an
    update's value for the key lands on the state's (`append`: `old + new`).
    `normalize(value)` is the form a value takes where the key has no old value
    (a run's first input, a key the state lacks); `checks_updates = False` lets
    an update give the key a value of another type than the key's (one message
    for a list of them), the state the reducer makes being checked instead.
    """

    name = "reducer"
    checks_updates = True

    def normalize(self, value: Any) -> Any:
        """The form `value` takes in a state where the key had no value (default: `value` itself)."""
        return value

    def merge(self, base: Any, values: Sequence[Any]) -> Any:
        """Combine the changed values of one key relative to `base`."""
        raise NotImplementedError

    def __call__(self, a: Any, b: Any) -> Any:
        """Apply `b` on top of `a` (the apply rule of an update)."""
        return self.merge(MISSING, [a, b])

    def __repr__(self) -> str:
        return self.name


class _Replace(Reducer):
    name = "replace"

    def merge(self, base: Any, values: Sequence[Any]) -> Any:  # noqa: ARG002 - the Reducer interface
        return values[-1]

    def __call__(self, a: Any, b: Any) -> Any:  # noqa: ARG002 - the Reducer interface
        return b


def _additions(value: Sequence[Any], base: Sequence[Any]) -> list[Any]:
    """The items `value` holds beyond `base` (an append-only view of a change)."""
    n = len(base)
    if len(value) >= n and unchanged(list(value[:n]), list(base)):
        return list(value[n:])
    prefix = 0
    for mine, theirs in zip(value, base, strict=False):
        if not unchanged(mine, theirs):
            break
        prefix += 1
    rest = list(value[prefix:])
    for item in base[prefix:]:
        for i, candidate in enumerate(rest):
            if unchanged(candidate, item):
                del rest[i]
                break
    return rest


def _as_sequence(value: Any, what: str) -> Sequence[Any]:
    if isinstance(value, (list, tuple, str, bytes)):
        return value
    msg = f"the {what} reducer needs a list, tuple or string, got {type(value).__name__}"
    raise InvalidUpdateError(msg)


class _Append(Reducer):
    name = "append"

    def merge(self, base: Any, values: Sequence[Any]) -> Any:
        present = [v for v in values if v is not MISSING]
        if not present:
            return MISSING
        start = _as_sequence(base, self.name) if base is not MISSING else present[0][:0]
        out = list(start)
        for value in present:
            out.extend(_additions(_as_sequence(value, self.name), start))
        if isinstance(start, tuple):
            return tuple(out)
        if isinstance(start, (str, bytes)):
            return start[:0].join(out)
        return out

    def __call__(self, a: Any, b: Any) -> Any:
        return a + b


class _Add(Reducer):
    name = "add"

    def merge(self, base: Any, values: Sequence[Any]) -> Any:
        present = [v for v in values if v is not MISSING]
        if not present:
            return MISSING
        if isinstance(present[0], (list, tuple, str, bytes)):
            return append.merge(base, present)
        if base is MISSING:
            total = present[0]
            for value in present[1:]:
                total = total + value
            return total
        total = base
        for value in present:
            total = total + (value - base)
        return total

    def __call__(self, a: Any, b: Any) -> Any:
        return a + b


class _Union(Reducer):
    name = "union"

    def merge(self, base: Any, values: Sequence[Any]) -> Any:
        present = [v for v in values if v is not MISSING]
        if not present:
            return MISSING
        start = base if base is not MISSING else type(present[0])()
        if isinstance(start, (list, tuple)):
            return self._ordered(start, present)
        if not isinstance(start, (set, frozenset)):
            msg = f"the union reducer needs sets or lists, got {type(start).__name__}"
            raise InvalidUpdateError(msg)
        added: set[Any] = set()
        removed: set[Any] = set()
        for value in present:
            added |= set(value) - start
            removed |= start - set(value)
        return type(start)((set(start) | added) - removed)

    @staticmethod
    def _ordered(start: Sequence[Any], present: Sequence[Any]) -> Any:
        base_items = list(start)
        removed = [x for x in base_items if any(x not in v for v in present)]
        out = [x for x in base_items if x not in removed]
        for value in present:
            out.extend(x for x in value if x not in out and x not in base_items)
        return type(start)(out) if isinstance(start, tuple) else out

    def __call__(self, a: Any, b: Any) -> Any:
        if isinstance(a, (set, frozenset)):
            return a | b
        return list(a) + [x for x in b if x not in a]


class _MergeDicts(Reducer):
    name = "merge_dicts"

    def merge(self, base: Any, values: Sequence[Any]) -> Any:
        present = [v for v in values if v is not MISSING]
        if not present:
            return MISSING
        start: Mapping[Any, Any] = base if isinstance(base, Mapping) else {}
        out = dict(start)
        for value in present:
            if not isinstance(value, Mapping):
                msg = f"the merge_dicts reducer needs dicts, got {type(value).__name__}"
                raise InvalidUpdateError(msg)
            out.update({k: v for k, v in value.items() if k not in start or not unchanged(v, start[k])})
            for key in start:
                if key not in value:
                    out.pop(key, None)
        return out

    def __call__(self, a: Any, b: Any) -> Any:
        return {**a, **b}


replace: Final[Reducer] = _Replace()
"""Last change in task order wins (a deletion is a change)."""
append: Final[Reducer] = _Append()
"""Keeps every item any branch appended, each exactly once, in task order."""
add: Final[Reducer] = _Add()
"""Sums the branches' increments: parallel `+5` and `+3` on `10` give `18`."""
union: Final[Reducer] = _Union()
"""Set union of every branch's additions, minus every branch's removals."""
merge_dicts: Final[Reducer] = _MergeDicts()
"""Applies every branch's sub-key changes (additions, updates, deletions); last wins."""

_ALIASES: Final[dict[Any, Reducer]] = {operator.add: add, operator.iadd: add}


# -- reading states ------------------------------------------------------------------


def has_keys(state: Any) -> bool:
    """Whether a key-by-key merge can read `state`: a mapping, a dataclass instance or a pydantic model."""
    return fields(state) is not None


def works_by_key(merge: Merge) -> bool:
    """Whether `merge` merges states key by key (`three_way`, and every `by_key(...)` merge)."""
    return merge is three_way or getattr(merge, "reducers", None) is not None


def _key_order(base: Mapping[str, Any], branches: Sequence[Mapping[str, Any]]) -> list[str]:
    seen = dict.fromkeys(base)
    for branch in branches:
        for key in branch:
            if key not in seen:
                seen[key] = None
    return list(seen)


def _combine(key: str, old: Any, changed: list[tuple[int, Any]], reducer: Any) -> Any:
    values = [v for _, v in changed]
    if reducer is None:
        first = values[0]
        if all(unchanged(v, first) for v in values[1:]):
            return first
        raise MergeConflictError(key, branches=[i for i, _ in changed], values=values)
    reducer = _ALIASES.get(reducer, reducer)
    if isinstance(reducer, Reducer):
        return reducer.merge(old, values)
    present = [v for v in values if v is not MISSING]
    if not present:
        return MISSING
    total = present[0]
    for value in present[1:]:
        total = reducer(total, value)
    return total


def _merge_states(base: Any, states: Sequence[Any], reducers: Mapping[str, Any], default: Any) -> Any:
    if not states:
        return base
    if len(states) == 1:
        return states[0]
    branches = [fields(s) for s in states]
    if any(b is None for b in branches):
        return _merge_whole(base, states, reducers.get(STATE_KEY, default))
    base_fields = fields(base)
    if base_fields is None:
        base_fields = {}
    keyed: list[Mapping[str, Any]] = branches  # type: ignore[assignment]
    merged: dict[str, Any] = {}
    for key in _key_order(base_fields, keyed):
        old = base_fields.get(key, MISSING)
        changed = [
            (i, value)
            for i, branch in enumerate(keyed)
            if not unchanged(value := branch.get(key, MISSING), old)
        ]
        value = _combine(key, old, changed, reducers.get(key, default)) if changed else old
        if value is not MISSING:
            merged[key] = value
    return rebuild(states[-1], merged)


def _merge_whole(base: Any, states: Sequence[Any], reducer: Any) -> Any:
    changed = [(i, s) for i, s in enumerate(states) if not unchanged(s, base)]
    if not changed:
        return states[-1]
    return _combine(STATE_KEY, base, changed, reducer)


def three_way(base: Any, states: Sequence[Any]) -> Any:
    """The default merge: per key, take each branch's change; refuse divergent changes.

    Args:
        base: the states' lowest common ancestor (`{}` if none).
        states: the states to merge, in task order.

    Returns:
        A state holding every branch's changes.

    Raises:
        MergeConflictError: two branches changed one key to different values.
    """
    return _merge_states(base, states, {}, None)


def by_key(reducers: Mapping[str, Any], default: Any = None) -> Merge:
    """Build a merge that combines some keys with reducers.

    Args:
        reducers: key -> reducer (`replace`, `append`, `add`, `union`,
            `merge_dicts`, a `Reducer`, or any binary function).
        default: the reducer for other keys; None keeps the three-way rule
            (divergent changes raise `MergeConflictError`).

    Returns:
        A merge function `merge(base, states)`.
    """
    table = dict(reducers)
    for key, reducer in table.items():
        if not callable(reducer):
            msg = f"by_key: the reducer for {key!r} is not callable: {reducer!r}"
            raise ConfigError(msg)
    if default is not None and not callable(default):
        msg = f"by_key: default must be a reducer or None, got {default!r}"
        raise ConfigError(msg)
    table = {key: _ALIASES.get(reducer, reducer) for key, reducer in table.items()}  # operator.add is add

    def merge(base: Any, states: Sequence[Any]) -> Any:
        return _merge_states(base, states, table, default)

    merge.__name__ = merge.__qualname__ = f"by_key({_describe(table)})"
    merge.reducers = table  # type: ignore[attr-defined]
    merge.default = default  # type: ignore[attr-defined]
    return merge


def apply_rule(merge: Merge, key: str) -> Any:
    """How an update's value for `key` lands on a state under `merge`: `rule(old, new)`, or None to replace.

    `by_key` merges apply each key's reducer (its binary form: `append` is
    `old + new`, `add` sums, `union` unites, `merge_dicts` updates, a custom
    `f(old, new)` is called); every other key, and every key of another merge,
    is replaced.
    """
    reducers = getattr(merge, "reducers", None)
    if reducers is None:
        return None
    rule = reducers.get(key, getattr(merge, "default", None))
    return _ALIASES.get(rule, rule)


def _describe(table: Mapping[str, Any]) -> str:
    return ", ".join(f"{k}={getattr(v, '__name__', repr(v))}" for k, v in table.items())
