"""`BaseStore`: the public methods of every memory store, written once over a few storage steps.

A store subclass keeps rows (`Row`: joined namespace, key, JSON text, times)
and implements six steps: save or delete one row, load one, list the rows under
a prefix (newest first, optionally one page), the vectors under a prefix, the
namespaces, and the sweep of expired rows. Checking arguments, JSON, the
semantic index, filters and ranking happen here, the same for every store.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import time
from collections.abc import Callable, Mapping, Sequence
from types import TracebackType
from typing import Any, Self

from actorgraph._model.errors import ConfigError
from actorgraph.store._items import (
    Item,
    Row,
    SearchItem,
    check_key,
    check_limits,
    check_namespace,
    check_prefix,
    encode_value,
    expiry,
    join,
    paged,
    split,
    to_found,
    to_item,
)
from actorgraph.store._search import (
    Index,
    check_filter,
    equalities,
    matches,
    namespace_matches,
    shallower,
)

__all__ = ["SWEEP_EVERY", "BaseStore", "Equalities", "Vectors", "in_prefix", "newest_first"]

Equalities = Mapping[str, str | float]
"""Top-level fields a filter wants equal to a string or a number."""

Vectors = list[tuple[str, list[float]]]
"""The embedded (field, vector) pairs of one value."""

SWEEP_EVERY = 60.0
"""Seconds between the sweeps of expired values that puts make by themselves."""


class BaseStore:
    """A cross-thread memory store: JSON values filed under namespaces and keys, shared by every thread.

    Runs of different threads (and vertices of one run) read and write it through
    `ctx.store`. Every method has an async twin (`aput`, `aget`, `adelete`,
    `asearch`, `alist_namespaces`) that runs it on a worker thread.

    Subclasses: `MemoryStore`, `SqliteStore`, `PostgresStore`.
    """

    def __init__(
        self, *, index: Mapping[str, Any] | None = None, clock: Callable[[], float] | None = None
    ) -> None:
        self._index_config = index
        self._index = Index.of(index)
        self._clock = clock or time.time
        self._swept = float("-inf")

    # -- what a store implements -----------------------------------------------------------------

    def _save(self, row: Row, expires: float | None, vectors: Vectors) -> None:
        """Store `row` (created and updated now), keeping the created_at of a live row it replaces."""
        raise NotImplementedError

    def _remove(self, namespace: str, key: str) -> None:
        """Delete the row under (namespace, key), if any."""
        raise NotImplementedError

    def _load(self, namespace: str, key: str, now: float) -> Row | None:
        """The live row under (namespace, key)."""
        raise NotImplementedError

    def _rows(
        self, prefix: str, now: float, page: tuple[int, int] | None, equal: Equalities | None = None
    ) -> list[Row]:
        """The live rows under `prefix` ("" for all), newest update first, then by namespace and key.

        `equal` (field -> string or number) may narrow them to the rows whose field equals it:
        a hint from the filter, which still decides (a store may return more rows).
        """
        raise NotImplementedError

    def _vectors(self, prefix: str) -> dict[tuple[str, str], list[list[float]]]:
        """The vectors of the rows under `prefix`, by (namespace, key) (expired ones may be among them)."""
        raise NotImplementedError

    def _namespaces(self, now: float) -> list[str]:
        """The distinct namespaces of live rows."""
        raise NotImplementedError

    def _sweep(self, now: float) -> int:
        """Delete the rows expired at `now`; how many."""
        raise NotImplementedError

    def close(self) -> None:
        """Release the store's connection; calling it again does nothing."""

    # -- the methods -------------------------------------------------------------------------------

    def put(
        self,
        namespace: tuple[str, ...],
        key: str,
        value: Mapping[str, Any] | None,
        *,
        ttl: float | dt.timedelta | None = None,
    ) -> None:
        """Store `value` under `key` in `namespace`, replacing what was there (its `created_at` is kept).

        With a semantic index, the index's fields of the value are embedded now
        (by calling the embedding function), so `search(query=...)` can rank it.

        Args:
            namespace: a non-empty tuple of non-empty labels without ".", e.g. `("users", "alice")`.
            key: the key within the namespace (a non-empty string).
            value: a dict of plain JSON (strings, finite numbers, booleans, None, lists, dicts
                with string keys); None deletes the key, like `delete`.
            ttl: seconds (or a `datetime.timedelta`) after which the value expires: it is
                never returned again and is swept from the database. None keeps it.

        Raises:
            ConfigError: a bad namespace, key, value (not JSON: the message names the key) or
                ttl, or an embedding that does not match the index's `dims`.
            StoreError: the database cannot be written.
        """
        ns, key = join(check_namespace(namespace)), check_key(key)
        now = self._clock()
        if value is None:
            self._remove(ns, key)
            return
        text, expires = encode_value(key, value), expiry(ttl, now)
        vectors: Vectors = []
        if self._index is not None:
            texts = self._index.texts(value)
            vectors = list(
                zip([f for f, _ in texts], self._index.vectors([t for _, t in texts]), strict=True)
            )
        self._save(Row(ns, key, text, now, now), expires, vectors)
        if now - self._swept >= SWEEP_EVERY:
            self.sweep()

    def get(self, namespace: tuple[str, ...], key: str) -> Item | None:
        """The value under `key` in `namespace`, or None when there is none (or it expired).

        Raises:
            ConfigError: a bad namespace or key.
            StoreError: the database cannot be read.
        """
        row = self._load(join(check_namespace(namespace)), check_key(key), self._clock())
        return None if row is None else to_item(row)

    def delete(self, namespace: tuple[str, ...], key: str) -> None:
        """Delete the value under `key` in `namespace` (nothing happens when there is none).

        Raises:
            ConfigError: a bad namespace or key.
            StoreError: the database cannot be written.
        """
        self._remove(join(check_namespace(namespace)), check_key(key))

    def search(
        self,
        namespace_prefix: tuple[str, ...],
        *,
        query: str | None = None,
        filter: Mapping[str, Any] | None = None,  # noqa: A002 - LangGraph's name for it
        limit: int = 10,
        offset: int = 0,
    ) -> list[SearchItem]:
        """The values in the namespaces that start with `namespace_prefix`, one page of them.

        Without `query` they come newest update first. With `query` (a store made
        with `index=`) they are ranked by the cosine similarity of their embedded
        fields to the query's embedding, best first, `score` set; values that have
        no embedded field follow, with `score` None.

        Args:
            namespace_prefix: the first labels of the namespaces to search; `()` searches all.
            query: a text to rank by meaning (needs a store made with `index=`).
            filter: conditions on the values' top-level fields, all of which must hold:
                `{"kind": "note"}` (equal), or `{"rank": {"$gte": 2, "$lt": 5}}` with the
                operators `$eq $ne $gt $gte $lt $lte`. A value without the field meets only `$ne`.
            limit: the most values returned (at least 1).
            offset: how many values of the order to skip (the pages before).

        Raises:
            ConfigError: a bad prefix, filter, limit or offset, or a query on a store without index.
            StoreError: the database cannot be read.
        """
        prefix = join(check_prefix(namespace_prefix))
        check_limits(limit, offset)
        if filter is not None:
            check_filter(filter)
        if query is not None and (self._index is None or not isinstance(query, str)):
            raise ConfigError(
                "search(query=...) ranks by meaning, which needs a store made with "
                'index={"embed": fn, "dims": n} and a string query; search without query= to list by time'
            )
        now = self._clock()
        if query is None and not filter:
            return [to_found(row) for row in self._rows(prefix, now, (limit, offset))]
        rows = self._rows(prefix, now, None, equalities(filter) if filter else None)
        if filter:
            rows = [row for row in rows if matches(row.content(), filter)]
        if query is None or self._index is None:
            return [to_found(row) for row in paged(rows, limit, offset)]
        ranked = self._ranked(rows, self._index, query, self._vectors(prefix))
        return [to_found(row, score) for row, score in paged(ranked, limit, offset)]

    @staticmethod
    def _ranked(
        rows: list[Row], index: Index, query: str, vectors: dict[tuple[str, str], list[list[float]]]
    ) -> list[tuple[Row, float | None]]:
        """`rows` best match first (those without vectors last, in their order), with their scores."""
        wanted = index.vectors([query])[0]
        scored = [(row, index.best(wanted, vectors.get((row.namespace, row.key), []))) for row in rows]
        hits = sorted((pair for pair in scored if pair[1] is not None), key=lambda pair: -(pair[1] or 0.0))
        return hits + [pair for pair in scored if pair[1] is None]

    def list_namespaces(
        self,
        *,
        prefix: tuple[str, ...] | None = None,
        suffix: tuple[str, ...] | None = None,
        max_depth: int | None = None,
        limit: int = 100,
        offset: int = 0,
    ) -> list[tuple[str, ...]]:
        """The namespaces that hold values, sorted, one page of them.

        Args:
            prefix: keep those that start with these labels ("*" matches any one label).
            suffix: keep those that end with these labels ("*" matches any one label).
            max_depth: cut each namespace to its first `max_depth` labels (duplicates merge).
            limit: the most namespaces returned.
            offset: how many to skip.

        Raises:
            ConfigError: a bad prefix, suffix, max_depth, limit or offset.
            StoreError: the database cannot be read.
        """
        wanted = [
            check_prefix(p, what) if p is not None else None
            for p, what in ((prefix, "prefix"), (suffix, "suffix"))
        ]
        if max_depth is not None and (type(max_depth) is not int or max_depth < 1):
            raise ConfigError(
                f"max_depth={max_depth!r} is not allowed: give a positive int, or None for full namespaces"
            )
        check_limits(limit, offset)
        found = (split(ns) for ns in self._namespaces(self._clock()))
        kept = (ns for ns in found if namespace_matches(ns, wanted[0], wanted[1]))
        return paged(shallower(kept, max_depth), limit, offset)

    def sweep(self) -> int:
        """Delete every expired value from the database now; how many were deleted.

        Puts sweep by themselves at most once a minute; reads never return an
        expired value whether or not it was swept.
        """
        now = self._clock()
        self._swept = now
        return self._sweep(now)

    # -- async twins -----------------------------------------------------------------------------

    async def aput(
        self,
        namespace: tuple[str, ...],
        key: str,
        value: Mapping[str, Any] | None,
        *,
        ttl: float | dt.timedelta | None = None,
    ) -> None:
        """`put` on a worker thread."""
        await asyncio.to_thread(self.put, namespace, key, value, ttl=ttl)

    async def aget(self, namespace: tuple[str, ...], key: str) -> Item | None:
        """`get` on a worker thread."""
        return await asyncio.to_thread(self.get, namespace, key)

    async def adelete(self, namespace: tuple[str, ...], key: str) -> None:
        """`delete` on a worker thread."""
        await asyncio.to_thread(self.delete, namespace, key)

    async def asearch(self, namespace_prefix: tuple[str, ...], **options: Any) -> list[SearchItem]:
        """`search` on a worker thread (same keyword options: query, filter, limit, offset)."""
        return await asyncio.to_thread(lambda: self.search(namespace_prefix, **options))

    async def alist_namespaces(self, **options: Any) -> list[tuple[str, ...]]:
        """`list_namespaces` on a worker thread (same keyword options)."""
        return await asyncio.to_thread(lambda: self.list_namespaces(**options))

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


def in_prefix(namespace: str, prefix: str) -> bool:
    """Whether a joined namespace is `prefix` or lies under it (the SQL stores compare the same way)."""
    return not prefix or namespace == prefix or namespace.startswith(prefix + ".")


def newest_first(rows: Sequence[Row]) -> list[Row]:
    """`rows` in search order: newest update first, then by namespace and key."""
    return sorted(rows, key=lambda r: (-r.updated_at, r.namespace, r.key))
