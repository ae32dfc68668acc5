"""Updates: a mapping of some keys, applied to a state through the graph's reducers.

One notion serves every place a state is changed by parts: the new input of a
thread whose last run is done, `update_state`, `Command(update=...)`, and the
vertices that return only what they change (`returns="update"`). Each key of
the update lands on the state by its reducer's apply rule (`append`: `old +
new`, `add`: `old + new`, `union`, `merge_dicts`, `replace`, a custom
`f(old, new)`); a key without a reducer is replaced. Pure: no I/O, no threads.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from actorgraph._engine.fields import fields, rebuild
from actorgraph._model.errors import InvalidUpdateError
from actorgraph.merge import Merge, apply_rule, has_keys

__all__ = ["apply_update", "normalized"]


def apply_update(state: Any, update: Any, merge: Merge, *, who: str) -> Any:
    """`state` with `update` applied through `merge`'s reducers; `state` itself is not changed.

    Args:
        state: a mapping, dataclass instance or pydantic model.
        update: a mapping of some keys to their new values (or to what the
            key's reducer adds to the old value).
        merge: the graph's merge (its `by_key` reducers give the apply rules).
        who: what made the update, for error messages ("vertex 'x'", "update_state").

    Raises:
        InvalidUpdateError: the update is not a mapping, the state has no keys,
            a key does not fit the state's type, or a reducer cannot apply a value.
    """
    if not isinstance(update, Mapping):
        msg = f"{who}: an update is a mapping of keys to values, got {type(update).__name__}"
        raise InvalidUpdateError(msg)
    if not has_keys(state):
        msg = (
            f"{who}: cannot apply an update to a state of type {type(state).__name__}, which has no "
            "keys; give the whole new state instead"
        )
        raise InvalidUpdateError(msg)
    old = dict(fields(state) or {})
    new = dict(old)
    for key, value in update.items():
        rule = apply_rule(merge, key)
        if rule is None:
            new[key] = value
            continue
        if key not in old:  # nothing to apply it to: the value as the reducer would hold it
            new[key] = _normal(rule, value)
            continue
        try:
            new[key] = rule(old[key], value)
        except Exception as exc:
            name = getattr(rule, "__name__", repr(rule))
            msg = (
                f"{who}: the {name} reducer of key {key!r} cannot apply a {type(value).__name__} to "
                f"the state's {type(old[key]).__name__} ({type(exc).__name__}: {exc})"
            )
            raise InvalidUpdateError(msg) from exc
    return _rebuilt(state, new, who)


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
