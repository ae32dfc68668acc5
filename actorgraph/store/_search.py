"""What `search` and `list_namespaces` decide in Python, the same for every store.

Filters on a value's fields, the semantic index (which texts of a value are
embedded, the embedding checked against its size), cosine similarity, and the
namespace conditions of `list_namespaces`.
"""

from __future__ import annotations

import json
import math
import operator
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from actorgraph._model.errors import ConfigError
from actorgraph.store._items import encodable

__all__ = [
    "Index",
    "check_filter",
    "cosine",
    "equalities",
    "matches",
    "namespace_matches",
    "shallower",
]

Vector = list[float]

_OPERATORS: dict[str, Callable[[Any, Any], bool]] = {
    "$eq": operator.eq,
    "$ne": operator.ne,
    "$gt": operator.gt,
    "$gte": operator.ge,
    "$lt": operator.lt,
    "$lte": operator.le,
}
_WHOLE = "$"  # the field path meaning the whole value
_ABSENT = object()  # what `_at` finds where a value has no such field


def _is_operators(condition: object) -> bool:
    return (
        isinstance(condition, Mapping) and bool(condition) and all(str(k).startswith("$") for k in condition)
    )


def check_filter(conditions: object) -> Mapping[str, Any]:
    """`conditions` if it is a dict of field -> value or field -> {operator: value}; else `ConfigError`."""
    if not isinstance(conditions, Mapping):
        raise ConfigError(
            f'filter must be a dict such as {{"kind": "note"}}, not {type(conditions).__name__}'
        )
    for field, condition in conditions.items():
        if not isinstance(field, str):
            raise ConfigError(f"filter field {field!r} is not a string; name a top-level field of the values")
        if _is_operators(condition):
            unknown = sorted(set(condition) - set(_OPERATORS))
            if unknown:
                raise ConfigError(
                    f"filter on {field!r} uses the operator(s) {', '.join(unknown)}; the known ones are "
                    f"{', '.join(_OPERATORS)}"
                )
    return conditions


def _holds(op: str, found: Any, wanted: Any) -> bool:
    try:
        return bool(_OPERATORS[op](found, wanted))
    except TypeError:  # an order between a string and a number: the value does not match
        return False


def matches(value: Mapping[str, Any], conditions: Mapping[str, Any]) -> bool:
    """Whether `value` meets every condition (a missing field meets only `$ne`)."""
    for field, condition in conditions.items():
        present = field in value
        found = value.get(field)
        wanted = condition if _is_operators(condition) else {"$eq": condition}
        for op, operand in wanted.items():
            if not present and op != "$ne":
                return False
            if present and not _holds(op, found, operand):
                return False
    return True


_EXACT = 2**53  # the integers a double holds exactly: SQLite reads JSON numbers as int64 or double


def equalities(conditions: Mapping[str, Any]) -> dict[str, str | float]:
    """The conditions of a checked filter that want a field equal to a string or a number."""
    found: dict[str, str | float] = {}
    for field, condition in conditions.items():
        if not encodable(field):  # not a parameter every database takes: Python alone decides
            continue
        wanted = condition.get("$eq") if _is_operators(condition) else condition
        text = isinstance(wanted, str) and encodable(wanted)
        if text or (isinstance(wanted, int | float) and abs(wanted) <= _EXACT):
            found[field] = wanted
    return found


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    """The cosine similarity of two vectors of one length (0.0 when either is all zeros)."""
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return dot / norm if norm else 0.0


def _at(value: Any, path: str) -> Any:
    """The part of `value` at a dotted path ("a.b", "items.0"), or `_ABSENT` when it has none."""
    if path == _WHOLE:
        return value
    for part in path.split("."):
        if isinstance(value, Mapping) and part in value:
            value = value[part]
        elif isinstance(value, list) and part.lstrip("-").isdigit() and -len(value) <= int(part) < len(value):
            value = value[int(part)]
        else:
            return _ABSENT
    return value


@dataclass(frozen=True, slots=True)
class Index:
    """A store's semantic index: the embedding function, its size, the fields embedded."""

    embed: Callable[[list[str]], Any]
    dims: int
    fields: tuple[str, ...]

    @staticmethod
    def of(config: object) -> Index | None:
        """The index described by `{"embed": fn, "dims": n, "fields": [...]}` (None for None)."""
        if config is None:
            return None
        if not isinstance(config, Mapping) or not callable(config.get("embed")):
            raise ConfigError(
                'index must be a dict {"embed": fn, "dims": n, "fields": [...]}, where fn maps a list '
                "of texts to a list of vectors; give index=None for a store without semantic search"
            )
        unknown = sorted(set(config) - {"embed", "dims", "fields"})
        dims, fields = config.get("dims"), config.get("fields") or [_WHOLE]
        if unknown or type(dims) is not int or dims < 1:
            extra = f" and the unknown keys {', '.join(map(str, unknown))}" if unknown else ""
            raise ConfigError(
                f"index has dims={dims!r}{extra}; give only embed, dims and fields, with dims the "
                "length of the vectors the embedding function returns (a positive int)"
            )
        if isinstance(fields, str) or not all(isinstance(f, str) and f for f in fields):
            raise ConfigError(
                f'index fields={fields!r}: give a list of dotted field paths such as ["text", "meta.title"]'
            )
        return Index(config["embed"], dims, tuple(fields))

    def texts(self, value: Mapping[str, Any]) -> list[tuple[str, str]]:
        """The (field, text) pairs of `value` to embed: strings as they are, other values as JSON."""
        found = []
        for path in self.fields:
            part = _at(value, path)
            if part is _ABSENT:
                continue  # a value without the field is stored, not embedded for it
            text = part if isinstance(part, str) else json.dumps(part, ensure_ascii=False, sort_keys=True)
            found.append((path, text))
        return found

    def vectors(self, texts: list[str]) -> list[Vector]:
        """The embedding of each text, checked: one vector per text, `dims` finite numbers each."""
        if not texts:
            return []
        vectors = self.embed(texts)
        if not isinstance(vectors, Sequence) or len(vectors) != len(texts):
            count = len(vectors) if isinstance(vectors, Sequence) else type(vectors).__name__
            raise ConfigError(
                f"the index's embed function returned {count} vectors for {len(texts)} texts; "
                "return one per text"
            )
        return [self._checked(v) for v in vectors]

    def _checked(self, vector: Any) -> Vector:
        try:
            numbers = [float(x) for x in vector]
        except (TypeError, ValueError) as exc:
            raise ConfigError(
                f"the index's embed function returned a vector that is not a list of numbers ({exc})"
            ) from exc
        if len(numbers) != self.dims or not all(math.isfinite(x) for x in numbers):
            raise ConfigError(
                f"the index's embed function returned a vector of {len(numbers)} numbers (finite: "
                f"{all(math.isfinite(x) for x in numbers)}); index dims is {self.dims}: make them agree"
            )
        return numbers

    def best(self, query: Vector, vectors: Iterable[Vector]) -> float | None:
        """The highest similarity of `query` to any of an item's vectors (None when it has none)."""
        scores = [cosine(query, v) for v in vectors]
        return max(scores) if scores else None


def _labels_match(labels: Sequence[str], pattern: Sequence[str]) -> bool:
    return len(labels) >= len(pattern) and all(
        p in {"*", label} for p, label in zip(pattern, labels, strict=False)
    )


def namespace_matches(
    namespace: tuple[str, ...], prefix: Sequence[str] | None, suffix: Sequence[str] | None
) -> bool:
    """Whether `namespace` starts with `prefix` and ends with `suffix` ("*" matches any one label)."""
    if prefix and not _labels_match(namespace, prefix):
        return False
    return not suffix or _labels_match(namespace[::-1], list(suffix)[::-1])


def shallower(namespaces: Iterable[tuple[str, ...]], max_depth: int | None) -> list[tuple[str, ...]]:
    """The distinct namespaces cut to `max_depth` labels, sorted."""
    return sorted({ns if max_depth is None else ns[:max_depth] for ns in namespaces})
