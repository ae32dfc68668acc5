"""A memory store that lives in the process: for tests, notebooks and one-process services."""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable, Mapping
from typing import Any, NoReturn

from actorgraph._model.errors import StoreError
from actorgraph.store._base import BaseStore, Equalities, Vectors, in_prefix, newest_first
from actorgraph.store._items import Row, decode_value

__all__ = ["MemoryStore"]

_Entry = tuple[Row, float | None, list[list[float]]]
"""A stored row, the second it expires (None: never), and its vectors."""


class MemoryStore(BaseStore):
    """Keeps values in a dict of this process, guarded by a lock; safe to use from many threads.

    Values are kept as JSON text, so what `get` returns is a copy that changing
    cannot change the store. Everything is lost when the process ends; a
    `MemoryStore` cannot be pickled (use `SqliteStore` or `PostgresStore` to
    share values between processes, the Ray backend's workers included).

    Args:
        index: a semantic index `{"embed": fn, "dims": n, "fields": [...]}`: `fn(texts)`
            returns one vector of `n` numbers per text; `fields` names the value's fields
            to embed (dotted paths; by default the whole value as JSON text).
        clock: the wall clock (seconds since the epoch) that stamps and expires values;
            by default `time.time` (tests give a fake one).

    Raises:
        ConfigError: `index` is malformed.
    """

    def __init__(
        self, *, index: Mapping[str, Any] | None = None, clock: Callable[[], float] | None = None
    ) -> None:
        super().__init__(index=index, clock=clock)
        self._lock = threading.Lock()
        # namespace -> key -> (row, expiry, vectors): a search visits only the namespaces under its prefix
        self._spaces: dict[str, dict[str, _Entry]] = {}

    def __reduce__(self) -> NoReturn:
        raise StoreError(
            "a MemoryStore cannot be pickled: its values live in this process only, so a copy in "
            "another process (a Ray worker, a child process) would not see them. Use "
            "SqliteStore(path) or PostgresStore(dsn) to share a store between processes."
        )

    def _save(self, row: Row, expires: float | None, vectors: Vectors) -> None:
        row = dataclasses.replace(row, parsed=decode_value(row.value))  # a private copy, for filters
        with self._lock:
            space = self._spaces.setdefault(row.namespace, {})
            old = _live(space.get(row.key), row.updated_at)
            if old is not None:
                row = dataclasses.replace(row, created_at=old.created_at)
            space[row.key] = (row, expires, [v for _, v in vectors])

    def _remove(self, namespace: str, key: str) -> None:
        with self._lock:
            space = self._spaces.get(namespace, {})
            space.pop(key, None)
            if not space:
                self._spaces.pop(namespace, None)

    def _entries(self, prefix: str) -> list[_Entry]:
        return [e for ns, space in self._spaces.items() if in_prefix(ns, prefix) for e in space.values()]

    def _load(self, namespace: str, key: str, now: float) -> Row | None:
        with self._lock:
            return _live(self._spaces.get(namespace, {}).get(key), now)

    def _rows(
        self, prefix: str, now: float, page: tuple[int, int] | None, _equal: Equalities | None = None
    ) -> list[Row]:
        with self._lock:
            rows = [row for entry in self._entries(prefix) if (row := _live(entry, now)) is not None]
        ordered = newest_first(rows)
        return ordered if page is None else ordered[page[1] : page[1] + page[0]]

    def _vectors(self, prefix: str) -> dict[tuple[str, str], list[list[float]]]:
        with self._lock:
            return {(row.namespace, row.key): vectors for row, _, vectors in self._entries(prefix)}

    def _namespaces(self, now: float) -> list[str]:
        with self._lock:
            spaces = self._spaces.items()
            return sorted(ns for ns, space in spaces if any(_live(e, now) for e in space.values()))

    def _sweep(self, now: float) -> int:
        count = 0
        with self._lock:
            for namespace in list(self._spaces):
                space = self._spaces[namespace]
                for key in [key for key, entry in space.items() if _live(entry, now) is None]:
                    del space[key]
                    count += 1
                if not space:
                    del self._spaces[namespace]
        return count


def _live(entry: _Entry | None, now: float) -> Row | None:
    """The entry's row, unless there is none or it expired at `now`."""
    if entry is None or (entry[1] is not None and entry[1] <= now):
        return None
    return entry[0]
