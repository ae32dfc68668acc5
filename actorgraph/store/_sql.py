"""The SQL of the database stores, written once for SQLite and PostgreSQL.

Both run the same standard SQL (`INSERT ... ON CONFLICT ... DO UPDATE`); the
checkpointers' `Dialect` supplies the placeholder and the column types. A
namespace is stored joined by ".", so "under a prefix" is a range of the
primary key (`namespace >= 'p.' AND namespace < 'p/'`), compared byte by byte
in both databases, never a `LIKE` pattern a label could disturb.

One connection per store object, opened on first use (so a store unpickled in
another process connects there) and guarded by a lock; the subclass opens it,
runs a call in a transaction, and words the errors.
"""

from __future__ import annotations

import contextlib
import json
import math
import threading
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from actorgraph._model.errors import StoreError
from actorgraph.checkpoint._dialect import Dialect
from actorgraph.store._base import BaseStore, Equalities, Vectors
from actorgraph.store._items import Row, damaged

__all__ = ["Conn", "SqlStore"]

_T = TypeVar("_T")

Conn = Any
"""A DB-API connection (`sqlite3.Connection` or `psycopg.Connection`)."""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS actorgraph_store (
    namespace {key} NOT NULL, key {key} NOT NULL, value {text} NOT NULL,
    created_at {real} NOT NULL, updated_at {real} NOT NULL, expires_at {real},
    PRIMARY KEY (namespace, key)
);
CREATE INDEX IF NOT EXISTS actorgraph_store_by_time ON actorgraph_store (updated_at DESC, namespace, key);
CREATE INDEX IF NOT EXISTS actorgraph_store_by_expiry ON actorgraph_store (expires_at);
CREATE TABLE IF NOT EXISTS actorgraph_store_vectors (
    namespace {key} NOT NULL, key {key} NOT NULL, field {text} NOT NULL, vector {text} NOT NULL,
    PRIMARY KEY (namespace, key, field)
)
"""
_COLUMNS = "namespace, key, value, created_at, updated_at"


class SqlStore(BaseStore):
    """A memory store on a SQL database; subclasses connect, run transactions and word errors.

    Subclasses set `dialect`, implement `_connect`, `_run_in_transaction`,
    `_failure`, `_arguments` (what the store is pickled as) and `_configure`
    (which calls `_setup`, and is all an unpickled copy runs).
    """

    dialect: Dialect

    def _setup(self, where: str, index: Mapping[str, Any] | None, clock: Callable[[], float] | None) -> None:
        super().__init__(index=index, clock=clock)
        self._where = where
        self._lock = threading.Lock()
        self._conn: Conn | None = None
        self._closed = False
        self._lock_wait = -1.0  # seconds a call waits for the one before it (-1: as long as it takes)
        m = self.dialect.mark
        self._live = f"(expires_at IS NULL OR expires_at > {m})"
        self._under = f"(namespace = {m} OR (namespace >= {m} AND namespace < {m}))"

    # -- what a database implements --------------------------------------------------------------

    def _connect(self) -> Conn:
        """A new connection to the database."""
        raise NotImplementedError

    def _run_in_transaction(self, conn: Conn, work: Callable[[Conn], _T]) -> _T:
        """`work(conn)` in one transaction."""
        raise NotImplementedError

    def _failure(self, op: str, exc: Exception) -> StoreError | None:
        """The error to raise for a database error during `op` (None: not a database error)."""
        raise NotImplementedError

    def _arguments(self) -> dict[str, Any]:
        """The constructor's arguments, which a pickled store is re-created from."""
        raise NotImplementedError

    def _configure(self, **arguments: Any) -> None:
        """Set the store up from its constructor's arguments, without connecting."""
        raise NotImplementedError

    _field_is = ""
    """A condition, given a field's path and a value, that holds for every row whose top-level
    field equals the value (and may hold for others: the filter decides in Python)."""

    def _field_path(self, field: str, wanted: str | float) -> str | None:
        """The path parameter `_field_is` takes for `field` (None: not narrowed in SQL)."""
        raise NotImplementedError

    # -- connection ------------------------------------------------------------------------------

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickle as the constructor's arguments; the copy connects on its first call."""
        return (_reopened, (type(self), self._arguments()))

    def _drop(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            with contextlib.suppress(Exception):  # a broken connection may fail to close: it is let go
                conn.close()

    def _call(self, op: str, work: Callable[[Conn], _T]) -> _T:
        if not self._lock.acquire(timeout=self._lock_wait):
            raise StoreError(
                f"{self.dialect.name} store {self._where}: {op} failed: the connection stayed busy with "
                f"another call for {self._lock_wait:g} s. What to do: check the database server and the "
                "network, then retry."
            )
        try:
            if self._closed:
                raise StoreError(
                    f"this {type(self).__name__} ({self._where}) is closed; create a new "
                    f"{type(self).__name__} with the same arguments to use the store again."
                )
            try:
                if self._conn is None:
                    self._conn = self._opened()
                return self._run_in_transaction(self._conn, work)
            except Exception as exc:
                failure = self._failure(op, exc)
                if failure is None:
                    raise
                raise failure from exc
        finally:
            self._lock.release()

    def _open_now(self, op: str) -> None:
        """Connect (and create the tables) now, so a constructor fails early; closed on failure."""
        try:
            self._call(op, lambda _conn: None)
        except BaseException:
            self.close()
            raise

    def _opened(self) -> Conn:
        conn = self._connect()
        try:
            self._run_in_transaction(conn, self._create_schema)
        except BaseException:
            with contextlib.suppress(Exception):
                conn.close()
            raise
        return conn

    def _create_schema(self, conn: Conn) -> None:
        if self.dialect.lock_schema:
            conn.execute(self.dialect.lock_schema)
        d = self.dialect
        for statement in _SCHEMA.format(key=d.key, text=d.text, real=d.real).split(";"):
            conn.execute(statement)

    def close(self) -> None:
        """Close the connection; calling it again does nothing, any other call then fails."""
        with self._lock:
            self._closed = True
            self._drop()

    # -- the storage steps -----------------------------------------------------------------------

    def _save(self, row: Row, expires: float | None, vectors: Vectors) -> None:
        m = self.dialect.mark
        at = (row.namespace, row.key)

        def work(conn: Conn) -> None:
            conn.execute(f"DELETE FROM actorgraph_store_vectors WHERE namespace = {m} AND key = {m}", at)
            conn.execute(
                f"INSERT INTO actorgraph_store VALUES ({m}, {m}, {m}, {m}, {m}, {m})"
                " ON CONFLICT (namespace, key) DO UPDATE SET value = excluded.value,"
                " updated_at = excluded.updated_at, expires_at = excluded.expires_at,"
                " created_at = CASE WHEN actorgraph_store.expires_at <= excluded.updated_at"
                " THEN excluded.created_at ELSE actorgraph_store.created_at END",
                (*at, row.value, row.created_at, row.updated_at, expires),
            )
            if vectors:
                cursor = conn.cursor()
                try:
                    cursor.executemany(
                        f"INSERT INTO actorgraph_store_vectors VALUES ({m}, {m}, {m}, {m})",
                        [(*at, field, json.dumps(vector)) for field, vector in vectors],
                    )
                finally:
                    cursor.close()

        self._call("putting a value", work)

    def _remove(self, namespace: str, key: str) -> None:
        m = self.dialect.mark

        def work(conn: Conn) -> None:
            for table in ("actorgraph_store_vectors", "actorgraph_store"):
                conn.execute(f"DELETE FROM {table} WHERE namespace = {m} AND key = {m}", (namespace, key))

        self._call("deleting a value", work)

    def _select(self, op: str, sql: str, args: tuple[Any, ...]) -> list[Any]:
        return self._call(op, lambda conn: conn.execute(sql, args).fetchall())

    def _prefix(self, prefix: str) -> tuple[str, tuple[Any, ...]]:
        if not prefix:
            return "", ()
        return f" AND {self._under}", (prefix, prefix + ".", prefix + "/")

    def _load(self, namespace: str, key: str, now: float) -> Row | None:
        m = self.dialect.mark
        sql = f"SELECT {_COLUMNS} FROM actorgraph_store WHERE namespace = {m} AND key = {m} AND {self._live}"
        found = self._select("getting a value", sql, (namespace, key, now))
        return Row(*found[0]) if found else None

    def _rows(
        self, prefix: str, now: float, page: tuple[int, int] | None, equal: Equalities | None = None
    ) -> list[Row]:
        m = self.dialect.mark
        under, args = self._prefix(prefix)
        for field, wanted in (equal or {}).items():
            if (path := self._field_path(field, wanted)) is not None:
                under, args = f"{under} AND {self._field_is}", (*args, path, wanted)
        order = "ORDER BY updated_at DESC, namespace, key"
        sql = f"SELECT {_COLUMNS} FROM actorgraph_store WHERE {self._live}{under} {order}"
        if page is not None:
            sql, args = f"{sql} LIMIT {m} OFFSET {m}", (*args, *page)
        return [Row(*r) for r in self._select("searching", sql, (now, *args))]

    def _vectors(self, prefix: str) -> dict[tuple[str, str], list[list[float]]]:
        under, args = self._prefix(prefix)
        sql = f"SELECT namespace, key, vector FROM actorgraph_store_vectors WHERE 1 = 1{under}"
        found: dict[tuple[str, str], list[list[float]]] = {}
        for namespace, key, vector in self._select("reading the embeddings", sql, args):
            found.setdefault((namespace, key), []).append(self._stored_vector(namespace, key, vector))
        return found

    def _stored_vector(self, namespace: Any, key: Any, text: Any) -> list[float]:
        """A stored embedding, checked: the database may have been changed, or the index since."""
        row = Row(namespace, key, "", 0.0, 0.0)
        try:
            vector = json.loads(text)
        except (TypeError, ValueError, RecursionError):
            raise damaged(row, "has an embedding that is not a JSON list of numbers") from None
        if type(vector) is not list or not all(type(x) in (int, float) and math.isfinite(x) for x in vector):
            raise damaged(row, "has an embedding that is not a list of finite numbers")
        if self._index is not None and len(vector) != self._index.dims:
            raise damaged(
                row,
                f"has an embedding of {len(vector)} numbers where the index's dims is {self._index.dims} "
                "(or the store was written with another index: put its values again)",
            )
        return vector

    def _namespaces(self, now: float) -> list[str]:
        sql = f"SELECT DISTINCT namespace FROM actorgraph_store WHERE {self._live} ORDER BY namespace"
        return [r[0] for r in self._select("listing namespaces", sql, (now,))]

    def _sweep(self, now: float) -> int:
        m = self.dialect.mark

        def work(conn: Conn) -> int:
            conn.execute(
                "DELETE FROM actorgraph_store_vectors WHERE EXISTS (SELECT 1 FROM actorgraph_store s"
                " WHERE s.namespace = actorgraph_store_vectors.namespace"
                " AND s.key = actorgraph_store_vectors.key"
                f" AND s.expires_at <= {m})",
                (now,),
            )
            count: int = conn.execute(
                f"DELETE FROM actorgraph_store WHERE expires_at <= {m}", (now,)
            ).rowcount
            return count

        return self._call("sweeping expired values", work)


def _reopened(cls: type[SqlStore], arguments: dict[str, Any]) -> SqlStore:
    """A store made from pickled constructor arguments, not connected until its first call."""
    store = cls.__new__(cls)
    store._configure(**arguments)  # noqa: SLF001 - the unpickling half of SqlStore.__reduce__
    return store
