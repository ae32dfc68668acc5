"""The records a memory store returns, and the checks every store makes on what it is given.

A namespace is stored as its labels joined by "." (so a label may not hold a
"."), a value as JSON text; both checks happen here, before any store sees the
call, so the three stores refuse the same inputs with the same messages.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from actorgraph._model.errors import ConfigError, StoreError

__all__ = [
    "MAX_KEY",
    "MOST",
    "Item",
    "Row",
    "SearchItem",
    "check_key",
    "check_limits",
    "check_namespace",
    "check_prefix",
    "damaged",
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

MOST = 2**63 - 1
"""The largest limit or offset: the largest integer SQLite and PostgreSQL hold (a signed 64-bit one)."""

MAX_KEY = 1024
"""The longest key, and the longest namespace once joined (characters); a database index must hold them."""

_SHOWN = 80  # characters of a damaged row's namespace or key quoted in an error
_JSON_KINDS = {
    list: "array",
    str: "string",
    int: "number",
    float: "number",
    bool: "boolean",
    type(None): "null",
}
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
        return self.parsed if self.parsed is not None else decode_value(self.value, self)


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


def _when(row: Row, name: str, seconds: object) -> dt.datetime:
    try:
        return dt.datetime.fromtimestamp(seconds, dt.UTC)  # type: ignore[arg-type]
    except (TypeError, ValueError, OverflowError, OSError):
        raise damaged(row, f"has {name} {seconds!r}, which is no time") from None


def _read(row: Row) -> tuple[tuple[str, ...], dict[str, Any], dt.datetime, dt.datetime]:
    """A stored row's namespace, value and times, each checked: the database may have been changed."""
    for name, part in (("namespace", row.namespace), ("key", row.key)):
        if type(part) is not str:
            raise damaged(row, f"has a {name} of type {type(part).__name__}, not text")
    value = decode_value(row.value, row)
    return (
        split(row.namespace),
        value,
        _when(row, "created_at", row.created_at),
        _when(row, "updated_at", row.updated_at),
    )


def to_item(row: Row) -> Item:
    """The `Item` of a stored row.

    Raises:
        StoreError: the row was changed outside actorgraph (the message names it).
    """
    namespace, value, created, updated = _read(row)
    return Item(namespace, row.key, value, created, updated)


def to_found(row: Row, score: float | None = None) -> SearchItem:
    """The `SearchItem` of a stored row.

    Raises:
        StoreError: the row was changed outside actorgraph (the message names it).
    """
    namespace, value, created, updated = _read(row)
    return SearchItem(namespace, row.key, value, created, updated, score)


def damaged(row: Row | None, wrong: str) -> StoreError:
    """The error for a stored row changed outside actorgraph: which row, what is wrong, what to do."""
    if row is None:
        where = "a stored value"
    elif type(row.namespace) is str:
        where = f"the stored value {split(row.namespace)!r} {_quoted(row.key)}"
    else:
        where = f"the stored value at namespace {_quoted(row.namespace)}, key {_quoted(row.key)}"
    return StoreError(
        f"{where} {wrong}; the database was changed outside actorgraph: repair or delete that row "
        "(or restore the database from a backup)"
    )


def _quoted(part: object) -> str:
    shown = repr(part)
    return shown if len(shown) <= _SHOWN else shown[: _SHOWN - 3] + "..."


def split(namespace: object) -> tuple[str, ...]:
    """The labels of a joined namespace.

    Raises:
        StoreError: the stored namespace is not text (the database was changed outside actorgraph).
    """
    if type(namespace) is not str:
        raise StoreError(
            f"the stored namespace {_quoted(namespace)} is not text; the database was changed outside "
            "actorgraph: repair or delete its rows (or restore the database from a backup)"
        )
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
    """`limit` (at least 1, at most `most`) and `offset` (at least 0) are ints a database holds."""
    for name, number, low in (("limit", limit, 1), ("offset", offset, 0)):
        high = most if most and name == "limit" else MOST
        if type(number) is not int or not low <= number <= high:
            raise ConfigError(
                f"{name}={number!r} is not allowed: give an int of at least {low} and at most {high}"
            )


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
    found = _key_not_text(value)
    if found is not None:
        path, name = found
        as_text = next(iter(_decode(_encode({name: None}))))
        raise ConfigError(
            f"the value put under key {key!r} has the {type(name).__name__} key {name!r} at {path}; a "
            f"store keeps dicts with string keys only (JSON would read it back as {as_text!r}, and "
            "drop a key it then equals): make the key a string"
        )
    return text


def _key_not_text(value: Mapping[str, Any]) -> tuple[str, object] | None:
    """The path to a key of `value` (JSON text already) that is not a string, and the key; or None.

    JSON turns the keys 1, 1.0, True and None into text silently, so they are looked
    for here, by a walk without recursion (the value may nest as deeply as JSON takes).
    """
    stack: list[tuple[Any, str]] = [(value, "")]
    while stack:
        node, path = stack.pop()
        if isinstance(node, Mapping):
            for name, item in node.items():
                if not isinstance(name, str):
                    return f"{path}[{name!r}]", name
                if isinstance(item, Mapping | list | tuple):
                    stack.append((item, f"{path}[{name!r}]"))
        else:
            stack.extend(
                (item, f"{path}[{at}]")
                for at, item in enumerate(node)
                if isinstance(item, Mapping | list | tuple)
            )
    return None


def decode_value(text: object, row: Row | None = None) -> dict[str, Any]:
    """The dict stored as `text` (in `row`, which an error names).

    Raises:
        StoreError: `text` is not the JSON text of an object (the database was changed outside actorgraph).
    """
    if type(text) is not str:
        raise damaged(row, f"holds {type(text).__name__} where its JSON text should be")
    try:
        value = _decode(text)
    except ValueError as exc:
        raise damaged(row, f"is not valid JSON ({exc})") from None
    except RecursionError:
        raise damaged(row, "nests too deeply to be read") from None
    if not isinstance(value, dict):
        raise damaged(row, f"is not a JSON object but a JSON {_JSON_KINDS.get(type(value), 'value')}")
    return value


def expiry(ttl: object, now: float) -> float | None:
    """The wall-clock second a value put now with `ttl` expires (None: never).

    Raises:
        ConfigError: `ttl` is not a positive, finite number of seconds or a timedelta.
    """
    if ttl is None:
        return None
    seconds = ttl.total_seconds() if isinstance(ttl, dt.timedelta) else ttl
    number = float("nan")
    if not isinstance(seconds, bool) and isinstance(seconds, int | float):
        with contextlib.suppress(OverflowError):  # an int past every float: no clock reaches it
            number = float(seconds)
    if not math.isfinite(number) or number <= 0:
        raise ConfigError(
            f"ttl={ttl!r} is not allowed: give a positive, finite number of seconds, a timedelta, or None"
        )
    return now + number


def paged(values: Sequence[Any], limit: int, offset: int) -> list[Any]:
    """One page of `values`."""
    return list(values[offset : offset + limit])
