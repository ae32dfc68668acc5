"""Updates: a mapping of some keys, applied to a state through the graph's reducers.

One notion serves every place a state is changed by parts: the new input of a
thread whose last run is done, `update_state`, `Command(update=...)`, and the
vertices that return only what they change (`returns="update"`). Each key of
the update lands on the state by its reducer's apply rule (`append`: `old +
new`, `add`: `old + new`, `union`, `merge_dicts`, `replace`, a custom
`f(old, new)`); a key without a reducer is replaced. `Command(update=[(key,
value), ...])` gives the writes as a list instead, so that one task can write a
key several times: each write lands in order through the key's reducer (a key
without one takes one write). Pure: no I/O, no threads.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from actorgraph._engine.fields import fields, rebuild
from actorgraph._model.errors import InvalidUpdateError
from actorgraph.merge import Merge, apply_rule, has_keys

__all__ = ["apply_update", "normalized", "writes_of"]


def apply_update(state: Any, update: Any, merge: Merge, *, who: str) -> Any:
    """`state` with `update` applied through `merge`'s reducers; `state` itself is not changed.

    Args:
        state: a mapping, dataclass instance or pydantic model.
        update: a mapping of some keys to their new values (or to what the
            key's reducer adds to the old value), or a list of `(key, value)`
            writes, applied in order.
        merge: the graph's merge (its `by_key` reducers give the apply rules).
        who: what made the update, for error messages ("vertex 'x'", "update_state").

    Raises:
        InvalidUpdateError: the update is neither a mapping nor a list of
            `(key, value)` pairs, the state has no keys, a key does not fit the
            state's type, a key without a reducer is written twice, or a reducer
            cannot apply a value.
    """
    writes = writes_of(update, who)
    if not has_keys(state):
        msg = (
            f"{who}: cannot apply an update to a state of type {type(state).__name__}, which has no "
            "keys; give the whole new state instead"
        )
        raise InvalidUpdateError(msg)
    new = dict(fields(state) or {})
    written: set[str] = set()
    for key, value in writes:
        rule = apply_rule(merge, key)
        if rule is None:
            _refuse_rewrite(key, written, writes, who)
            new[key] = value
            continue
        if key not in new:  # nothing to apply it to: the value as the reducer would hold it
            new[key] = _normal(rule, value)
            continue
        try:
            new[key] = rule(new[key], value)
        except Exception as exc:
            name = getattr(rule, "__name__", repr(rule))
            msg = (
                f"{who}: the {name} reducer of key {key!r} cannot apply a {type(value).__name__} to "
                f"the state's {type(new[key]).__name__} ({type(exc).__name__}: {exc})"
            )
            raise InvalidUpdateError(msg) from exc
    return _rebuilt(state, new, who)


def writes_of(update: Any, who: str) -> list[tuple[str, Any]]:
    """An update's writes, in order: a mapping's items, or the `(key, value)` pairs of a list.

    Raises:
        InvalidUpdateError: neither a mapping nor a list, or an item of the list
            that is not a `(key, value)` pair with a string key (naming it).
    """
    if isinstance(update, Mapping):
        return list(update.items())
    if not isinstance(update, (list, tuple)):
        msg = (
            f"{who}: an update is a mapping of keys to values, or a list of (key, value) pairs "
            f"(Command(update=[('key', value), ...])), got {type(update).__name__}"
        )
        raise InvalidUpdateError(msg)
    for index, item in enumerate(update):
        if not isinstance(item, (tuple, list)) or len(item) != 2 or not isinstance(item[0], str):  # noqa: PLR2004 - a pair
            msg = (
                f"{who}: item {index} of the update list is {item!r}, not a (key, value) pair with a "
                "string key; write Command(update=[('key', value), ...])"
            )
            raise InvalidUpdateError(msg)
    return [(key, value) for key, value in update]


def _refuse_rewrite(key: str, written: set[str], writes: list[tuple[str, Any]], who: str) -> None:
    """A key without a reducer takes one write per update: a second has nothing to combine it with."""
    if key in written:
        count = sum(1 for k, _ in writes if k == key)
        msg = (
            f"{who}: the update writes key {key!r} {count} times, but the key has no reducer to "
            "combine the writes; declare one (Annotated[list, append] in the schema, or "
            "merge=by_key({...})), or write the key once"
        )
        raise InvalidUpdateError(msg)
    written.add(key)


def normalized(state: Any, merge: Merge) -> Any:
    """`state` (a run's new input) with each key whose reducer has a `normalize` hook in its normal form.

    `add_messages` converts the input's messages (strings, pairs, ...) and
    gives them ids; other reducers keep values as they are.
    """
    values = fields(state)
    if not values:
        return state
    changed = {}
    for key, value in values.items():
        rule = apply_rule(merge, key)
        if rule is not None and (normal := _normal(rule, value)) is not value:
            changed[key] = normal
    return rebuild(state, {**values, **changed}) if changed else state


def _normal(rule: Any, value: Any) -> Any:
    hook = getattr(rule, "normalize", None)
    return value if hook is None else hook(value)


def _rebuilt(state: Any, values: dict[str, Any], who: str) -> Any:
    if not isinstance(state, Mapping):
        known = set(fields(state) or {})
        unknown = sorted(set(values) - known)
        if unknown:
            msg = (
                f"{who}: the update sets {unknown}, which {type(state).__name__} has no field for "
                f"(its fields: {sorted(known)})"
            )
            raise InvalidUpdateError(msg)
    return rebuild(state, values)
