"""The records a memory store returns, and the checks every store makes on what it is given.

A namespace is stored as its labels joined by "." (so a label may not hold a
"."), a value as JSON text; both checks happen here, before any store sees the
call, so the three stores refuse the same inputs with the same messages.
"""

from __future__ import annotations

import datetime as dt
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from actorgraph._model.errors import ConfigError, StoreError

__all__ = [
    "MAX_KEY",
    "Item",
    "Row",
    "SearchItem",
    "check_key",
    "check_limits",
    "check_namespace",
    "check_prefix",
    "decode_value",
    "encodable",
    "encode_value",
    "expiry",
    "join",
    "paged",
    "split",
    "to_found",
    "to_item",
]

MAX_KEY = 1024
"""The longest key, and the longest namespace once joined (characters); a database index must hold them."""

_encode = json.JSONEncoder(ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode
_decode = json.JSONDecoder().decode


@dataclass(frozen=True, slots=True)
class Item:
    """One stored value, as `get` and `search` return it.

    Attributes:
        namespace: the labels the value is filed under, e.g. `("users", "alice", "memories")`.
        key: its key within the namespace.
        value: the stored dict (a fresh copy: changing it changes nothing stored).
        created_at: when the key was first put in the namespace (UTC, time-zone aware).
        updated_at: when it was last put (UTC, time-zone aware).
    """

    namespace: tuple[str, ...]
    key: str
    value: dict[str, Any]
    created_at: dt.datetime
    updated_at: dt.datetime


@dataclass(frozen=True, slots=True)
class SearchItem(Item):
    """An `Item` found by `search`, with its similarity to the query.

    Attributes:
        score: the cosine similarity of the best-matching embedded field to the
            query (-1 to 1, higher is closer); None when the search had no query
            or the item has no embedded field.
    """

    score: float | None = None


@dataclass(frozen=True, slots=True)
class Row:
    """A stored value as a store keeps it: joined namespace, JSON text, wall-clock seconds, parsed dict."""

    namespace: str
    key: str
    value: str
    created_at: float
    updated_at: float
    parsed: dict[str, Any] | None = field(default=None, compare=False, repr=False)

    def content(self) -> dict[str, Any]:
        """The stored dict, to compare and never to hand out (a store that keeps it parsed shares it)."""
        return self.parsed if self.parsed is not None else decode_value(self.value)


def encodable(text: str) -> bool:
    """Whether `text` is UTF-8 without NUL: text every database takes as a parameter.

    (A lone surrogate, a Python string of one half of a UTF-16 pair, is no UTF-8; PostgreSQL
    refuses a NUL in text.)
    """
    if "\x00" in text:
        return False
    try:
        text.encode()
    except UnicodeEncodeError:
        return False
    return True


def _when(seconds: float) -> dt.datetime:
    return dt.datetime.fromtimestamp(seconds, dt.UTC)


def to_item(row: Row) -> Item:
    """The `Item` of a stored row."""
    value = decode_value(row.value)
    return Item(split(row.namespace), row.key, value, _when(row.created_at), _when(row.updated_at))


def to_found(row: Row, score: float | None = None) -> SearchItem:
    """The `SearchItem` of a stored row."""
    value = decode_value(row.value)
    return SearchItem(
        split(row.namespace), row.key, value, _when(row.created_at), _when(row.updated_at), score
    )


def split(namespace: str) -> tuple[str, ...]:
    """The labels of a joined namespace."""
    return tuple(namespace.split("."))


def join(namespace: tuple[str, ...]) -> str:
    """The stored text of a checked namespace."""
    return ".".join(namespace)


def _labels(namespace: object, what: str, *, empty_ok: bool) -> tuple[str, ...]:
    if not isinstance(namespace, tuple):
        raise ConfigError(
            f"{what} must be a tuple of strings such as ('users', 'alice'), not {type(namespace).__name__}"
        )
    if not namespace and not empty_ok:
        raise ConfigError(f"{what} is empty; give at least one label, such as ('memories',)")
    for label in namespace:
        if not isinstance(label, str) or not label or "." in label or not encodable(label):
            raise ConfigError(
                f"{what} {namespace!r} has the label {label!r}; every label must be a non-empty "
                f'string without "." or NUL characters or lone surrogates (use more labels instead of dots)'
            )
    if len(join(namespace)) > MAX_KEY:
        raise ConfigError(
            f"{what} is {len(join(namespace))} characters long once joined; keep it under {MAX_KEY}"
        )
    return namespace


def check_namespace(namespace: object) -> tuple[str, ...]:
    """`namespace` if it is a non-empty tuple of non-empty strings without "."; else `ConfigError`."""
    return _labels(namespace, "the namespace", empty_ok=False)


def check_prefix(prefix: object, what: str = "namespace_prefix") -> tuple[str, ...]:
    """`prefix` if it is a tuple of labels (possibly empty, meaning every namespace)."""
    return _labels(prefix, what, empty_ok=True)


def check_key(key: object) -> str:
    """`key` if it is a non-empty string without NUL, at most `MAX_KEY` characters."""
    if not isinstance(key, str) or not key or not encodable(key) or len(key) > MAX_KEY:
        shown = repr(key) if len(repr(key)) < 80 else repr(key)[:77] + "..."  # noqa: PLR2004 - a short quote
        raise ConfigError(
            f"the key {shown} is not a usable key: give a non-empty string of at most {MAX_KEY} "
            "characters, without NUL characters or lone surrogates"
        )
    return key


def check_limits(limit: object, offset: object, *, most: int | None = None) -> None:
    """`limit` and `offset` are non-negative ints (`limit` at least 1 and at most `most`)."""
    for name, number, low in (("limit", limit, 1), ("offset", offset, 0)):
        if type(number) is not int or number < low or (name == "limit" and most and number > most):
            bound = f" and at most {most}" if most and name == "limit" else ""
            raise ConfigError(f"{name}={number!r} is not allowed: give an int of at least {low}{bound}")


def encode_value(key: str, value: object) -> str:
    """The JSON text of `value`, a dict; `ConfigError` naming `key` when it is not plain JSON."""
    if not isinstance(value, Mapping):
        raise ConfigError(
            f"the value put under key {key!r} is a {type(value).__name__}; a store keeps dicts "
            '(wrap it: {"value": ...}), or put None to delete the key'
        )
    try:
        text = _encode(dict(value))
        text.encode()  # a lone surrogate is no UTF-8, which no database stores
    except (TypeError, ValueError, RecursionError) as exc:
        raise ConfigError(
            f"the value put under key {key!r} cannot be stored as JSON ({exc}); keep to dicts with "
            "string keys, lists, strings, finite numbers, booleans and None (convert dates, sets "
            "and objects to one of these first)"
        ) from exc
    return text


def decode_value(text: str) -> dict[str, Any]:
    """The dict stored as `text`."""
    try:
        value = _decode(text)
    except ValueError as exc:
        raise StoreError(
            f"a stored value is not valid JSON ({exc}); the database was changed outside actorgraph"
        ) from exc
    if not isinstance(value, dict):
        raise StoreError("a stored value is not a JSON object; the database was changed outside actorgraph")
    return value


def expiry(ttl: object, now: float) -> float | None:
    """The wall-clock second a value put now with `ttl` expires (None: never)."""
    if ttl is None:
        return None
    seconds = ttl.total_seconds() if isinstance(ttl, dt.timedelta) else ttl
    if (
        isinstance(seconds, bool)
        or not isinstance(seconds, int | float)
        or not math.isfinite(seconds)
        or seconds <= 0
    ):
        raise ConfigError(
            f"ttl={ttl!r} is not allowed: give a positive number of seconds, a timedelta, or None"
        )
    return now + float(seconds)


def paged(values: Sequence[Any], limit: int, offset: int) -> list[Any]:
    """One page of `values`."""
    return list(values[offset : offset + limit])
