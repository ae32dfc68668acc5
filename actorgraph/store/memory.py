"""A memory store that lives in the process: for tests, notebooks and one-process services."""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable, Mapping
from typing import Any, NoReturn

from actorgraph._model.errors import StoreError
from actorgraph.store._base import BaseStore, Vectors, in_prefix, newest_first
from actorgraph.store._items import Row

__all__ = ["MemoryStore"]


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
        self._rows_by_key: dict[tuple[str, str], tuple[Row, float | None, list[list[float]]]] = {}

    def __reduce__(self) -> NoReturn:
        raise StoreError(
            "a MemoryStore cannot be pickled: its values live in this process only, so a copy in "
            "another process (a Ray worker, a child process) would not see them. Use "
            "SqliteStore(path) or PostgresStore(dsn) to share a store between processes."
        )

    def _save(self, row: Row, expires: float | None, vectors: Vectors) -> None:
        where = (row.namespace, row.key)
        with self._lock:
            old = self._live(where, row.updated_at)
            if old is not None:
                row = dataclasses.replace(row, created_at=old.created_at)
            self._rows_by_key[where] = (row, expires, [v for _, v in vectors])

    def _remove(self, namespace: str, key: str) -> None:
        with self._lock:
            self._rows_by_key.pop((namespace, key), None)

    def _live(self, where: tuple[str, str], now: float) -> Row | None:
        found = self._rows_by_key.get(where)
        if found is None or (found[1] is not None and found[1] <= now):
            return None
        return found[0]

    def _load(self, namespace: str, key: str, now: float) -> Row | None:
        with self._lock:
            return self._live((namespace, key), now)

    def _rows(self, prefix: str, now: float, page: tuple[int, int] | None) -> list[Row]:
        with self._lock:
            rows = [
                r
                for where in self._rows_by_key
                if (r := self._live(where, now)) and in_prefix(where[0], prefix)
            ]
        ordered = newest_first(rows)
        return ordered if page is None else ordered[page[1] : page[1] + page[0]]

    def _vectors(self, prefix: str) -> dict[tuple[str, str], list[list[float]]]:
        with self._lock:
            return {
                where: found[2] for where, found in self._rows_by_key.items() if in_prefix(where[0], prefix)
            }

    def _namespaces(self, now: float) -> list[str]:
        with self._lock:
            return sorted({where[0] for where in self._rows_by_key if self._live(where, now)})

    def _sweep(self, now: float) -> int:
        with self._lock:
            expired = [where for where in self._rows_by_key if self._live(where, now) is None]
            for where in expired:
                del self._rows_by_key[where]
        return len(expired)
