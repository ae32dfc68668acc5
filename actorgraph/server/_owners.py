"""Who owns what: the filters auth handlers return, checked once, then applied in the store's own query.

An `@auth.on` handler (LangGraph's custom auth) returns a filter on the
metadata of the resources it guards, the way LangGraph's server reads one:

```python
{"owner": "alice"}                                  # equal
{"owner": {"$eq": "alice"}}                         # the same, spelled out
{"teams": {"$contains": "red"}}                     # an array that holds "red"
{"teams": {"$contains": ["red", "blue"]}}           # an array that holds both
{"$or": [{"owner": "alice"}, {"public": True}]}     # any of them ($and: all of them)
```

Keys are top-level metadata keys; several keys must all hold; values are
strings, numbers, booleans or null (JSON's: `true` is not `1`, `1` is `1.0`);
`$or` and `$and` nest at most two levels. Anything else is refused as a
`FilterError` naming what is wrong, before any row is read.

A `Filter` is applied where the rows are: `Filter.sql` is a condition on a
JSON text column (SQLite's `json_each`, PostgreSQL's `jsonb`) with its
parameters, so a search, a count or a page never reads another owner's row,
and a read by id is the same query with the filter (another owner's row is a
missing row). `Filter.matches` is the same test in Python, for what is not a
row (the system assistants).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import orjson

from actorgraph._model.errors import ConfigError

__all__ = ["Filter", "FilterError", "filter_of"]

Scalar = str | int | float | bool | None

_DEPTH: Final = 2  # levels of $or / $and, as LangGraph's server allows
_PARTS: Final = 100  # conditions in one filter
_KEY: Final = 256  # characters of a metadata key
_TEXT: Final = 4096  # characters of a value
_EXACT: Final = 2**53  # numbers compared exactly by every engine


class FilterError(ConfigError):
    """An auth handler returned a filter the server cannot apply (what is wrong is in the message)."""


@dataclass(frozen=True, slots=True)
class _Equal:
    key: str
    value: Scalar


@dataclass(frozen=True, slots=True)
class _Holds:
    key: str
    values: tuple[Scalar, ...]


@dataclass(frozen=True, slots=True)
class Filter:
    """A checked filter: all of `parts` hold (`any_of`: at least one of them)."""

    parts: tuple[_Equal | _Holds | Filter, ...]
    any_of: bool = False

    def matches(self, metadata: Any) -> bool:
        """Whether `metadata` (a dict) meets the filter, as the SQL of `sql` decides for a row."""
        if not isinstance(metadata, Mapping):
            return False
        found = (_meets(part, metadata) for part in self.parts)
        return any(found) if self.any_of else all(found)

    def equalities(self) -> dict[str, Scalar]:
        """The filter as equalities on top-level fields, the form a memory store's search takes.

        Raises:
            FilterError: it holds `$contains` or `$or`, which a store search cannot take.
        """
        if self.any_of:
            raise FilterError("a filter on store items holds equalities only, not $or")
        found: dict[str, Scalar] = {}
        for part in self.parts:
            more = part.equalities() if isinstance(part, Filter) else {part.key: _equal(part)}
            for key, value in more.items():
                if key in found and not _same(found[key], value):
                    raise FilterError(f"the filter on store items wants {key!r:.80} equal to two values")
                found[key] = value
        return found

    def sql(self, dialect: str, column: str) -> tuple[str, list[Any]]:
        """The filter as an SQL condition on the JSON text `column` (trusted text), and its parameters.

        Args:
            dialect: "SQLite" or "PostgreSQL" (a `Dialect.name`).
            column: the column holding the metadata, qualified with its table.
        """
        if not self.parts:
            return ("1 = 0" if self.any_of else "1 = 1"), []
        pieces, args = [], list[Any]()
        for part in self.parts:
            text, more = (
                part.sql(dialect, column) if isinstance(part, Filter) else _sql(part, dialect, column)
            )
            pieces.append(f"({text})")
            args.extend(more)
        return (" OR " if self.any_of else " AND ").join(pieces), args


def _meets(part: _Equal | _Holds | Filter, metadata: Mapping[str, Any]) -> bool:
    if isinstance(part, Filter):
        return part.matches(metadata)
    if part.key not in metadata:
        return False
    found = metadata[part.key]
    if isinstance(part, _Equal):
        return _same(found, part.value)
    return isinstance(found, list) and all(any(_same(item, v) for item in found) for v in part.values)


def _equal(part: _Equal | _Holds) -> Scalar:
    if isinstance(part, _Holds):
        raise FilterError("a filter on store items holds equalities only, not $contains")
    return part.value


def _kind(value: Any) -> str:
    if value is None or isinstance(value, bool):
        return repr(value)
    return "number" if isinstance(value, (int, float)) else type(value).__name__


def _same(found: Any, wanted: Scalar) -> bool:
    """JSON's equality: `true` is not `1`, `1` is `1.0`, a string is a string."""
    return _kind(found) == _kind(wanted) and found == wanted


# -- SQL ---------------------------------------------------------------------------------------------

_SQLITE_TYPES: Final = {"True": "'true'", "False": "'false'", "None": "'null'"}


def _sqlite_typed(value: Scalar, prefix: str) -> tuple[str, list[Any]]:
    """A condition on a `json_each` row (`prefix`: its alias and a dot) that it holds `value`."""
    kind = _kind(value)
    if kind in _SQLITE_TYPES:
        return f"{prefix}type = {_SQLITE_TYPES[kind]}", []
    if kind == "number":
        return f"{prefix}type IN ('integer', 'real') AND {prefix}atom = ?", [value]
    return f"{prefix}type = 'text' AND {prefix}atom = ?", [value]


def _sql(part: _Equal | _Holds, dialect: str, column: str) -> tuple[str, list[Any]]:
    if dialect == "PostgreSQL":
        found = f"(({column})::jsonb -> %s)"
        if isinstance(part, _Equal):
            return f"{found} = %s::jsonb", [part.key, orjson.dumps(part.value).decode()]
        held = orjson.dumps(list(part.values)).decode()
        return f"jsonb_typeof({found}) = 'array' AND {found} @> %s::jsonb", [part.key, part.key, held]
    if isinstance(part, _Equal):
        typed, args = _sqlite_typed(part.value, "m.")
        return f"EXISTS (SELECT 1 FROM json_each({column}) AS m WHERE m.key = ? AND {typed})", [  # noqa: S608 - fixed text
            part.key,
            *args,
        ]
    pieces, args = [], list[Any]()
    for value in part.values:
        typed, more = _sqlite_typed(value, "e.")
        pieces.append(
            f"EXISTS (SELECT 1 FROM json_each({column}) AS m, json_each(m.value) AS e"  # noqa: S608 - fixed text
            f" WHERE m.key = ? AND m.type = 'array' AND {typed})"
        )
        args.extend([part.key, *more])
    return " AND ".join(pieces) or "1 = 1", args


# -- reading a filter -----------------------------------------------------------------------------------


def filter_of(given: Any) -> Filter:
    """The filter an auth handler returned, checked.

    Raises:
        FilterError: it is not a filter the server can apply (the message says what is wrong).
    """
    counted = [0]
    return _filter(given, 0, counted)


def _filter(given: Any, depth: int, counted: list[int]) -> Filter:
    if not isinstance(given, Mapping):
        raise FilterError(f"a filter is a dict such as {{'owner': 'alice'}}, not {type(given).__name__}")
    parts: list[_Equal | _Holds | Filter] = []
    for key, condition in given.items():
        counted[0] += 1
        if counted[0] > _PARTS:
            raise FilterError(f"a filter holds at most {_PARTS} conditions")
        if key in ("$or", "$and"):
            parts.append(_group(key, condition, depth, counted))
        else:
            parts.append(_condition(_key(key), condition))
    return Filter(tuple(parts))


def _group(key: str, given: Any, depth: int, counted: list[int]) -> Filter:
    if depth >= _DEPTH:
        raise FilterError(f"$or and $and nest at most {_DEPTH} levels")
    if not isinstance(given, Sequence) or isinstance(given, (str, bytes)) or not given:
        raise FilterError(f"{key} takes a non-empty list of filters, not {given!r:.80}")
    return Filter(tuple(_filter(item, depth + 1, counted) for item in given), any_of=key == "$or")


def _key(key: Any) -> str:
    if not isinstance(key, str) or not 0 < len(key) <= _KEY or key.startswith("$"):
        raise FilterError(
            f"filter key {key!r:.80} is not a metadata key (a string of 1 to {_KEY} characters; "
            "the operators are $or and $and)"
        )
    return key


def _condition(key: str, given: Any) -> _Equal | _Holds:
    if not isinstance(given, Mapping):
        return _Equal(key, _scalar(key, given))
    if len(given) != 1 or next(iter(given)) not in ("$eq", "$contains"):
        raise FilterError(f"filter {key!r:.80}: give a value, {{'$eq': value}} or {{'$contains': value}}")
    operator, value = next(iter(given.items()))
    if operator == "$eq":
        return _Equal(key, _scalar(key, value))
    if isinstance(value, Sequence) and not isinstance(value, (str, bytes)):
        if not value:
            raise FilterError(f"filter {key!r:.80}: $contains takes a value or a non-empty list of values")
        return _Holds(key, tuple(_scalar(key, v) for v in value))
    return _Holds(key, (_scalar(key, value),))


def _scalar(key: str, value: Any) -> Scalar:
    fits = (
        value is None
        or isinstance(value, bool)
        or (isinstance(value, str) and len(value) <= _TEXT and "\x00" not in value)
        or (isinstance(value, int) and abs(value) <= _EXACT)
        or (isinstance(value, float) and math.isfinite(value) and abs(value) <= _EXACT)
    )
    if not fits:
        msg = (
            f"filter {key!r:.80}: {value!r:.80} cannot be compared; give a string (no NUL, at most "
            f"{_TEXT} characters), a number of at most 2**53, a boolean or None"
        )
        raise FilterError(msg)
    return value  # type: ignore[no-any-return]
