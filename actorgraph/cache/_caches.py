"""The two node caches: `MemoryCache` (this process) and `SqliteCache` (a file that processes share)."""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

from actorgraph._model.errors import ActorGraphError
from actorgraph.cache._base import Cache, Damaged

__all__ = ["MemoryCache", "SqliteCache"]


class MemoryCache(Cache):
    """A node cache in this process: shared by every thread and every compiled graph given it.

    Entries are stored as bytes (a hit gets its own copy of the state).

    Args:
        serializer: how entries are stored (default `MsgpackSerializer()`: give it
            `allowed=` for dataclass or pydantic states).
        clock: the wall clock TTLs are measured with (default `time.time`).
    """

    def __init__(self, *, serializer: Any = None, clock: Callable[[], float] | None = None) -> None:
        super().__init__(serializer, clock)
        self._lock = threading.Lock()
        self._entries: dict[tuple[str, str], tuple[bytes, float | None]] = {}

    def __len__(self) -> int:
        """The number of entries kept (expired ones included until they are swept)."""
        with self._lock:
            return len(self._entries)

    def _load(self, namespace: str, key: str, now: float) -> bytes | None:
        with self._lock:
            found = self._entries.get((namespace, key))
        if found is None or (found[1] is not None and found[1] <= now):
            return None
        return found[0]

    def _save(self, namespace: str, key: str, data: bytes, expires: float | None) -> None:
        with self._lock:
            self._entries[namespace, key] = (data, expires)

    def _forget(self, namespaces: list[str] | None) -> None:
        with self._lock:
            if namespaces is None:
                self._entries.clear()
                return
            wanted = set(namespaces)
            for where in [w for w in self._entries if w[0] in wanted]:
                del self._entries[where]

    def _sweep(self, now: float) -> None:
        with self._lock:
            for where in [w for w, (_, exp) in self._entries.items() if exp is not None and exp <= now]:
                del self._entries[where]


_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS actorgraph_cache (namespace TEXT NOT NULL, key TEXT NOT NULL, "
    "expires_at REAL, value BLOB NOT NULL, PRIMARY KEY (namespace, key))"
)
_CHUNK = 500  # namespaces per `IN (...)`, well below SQLite's limit on variables


class SqliteCache(Cache, contextlib.AbstractContextManager["SqliteCache"]):
    """A node cache in a SQLite file: shared by the threads of this process and by other processes.

    The file is put in WAL mode; one connection, guarded by a lock, serves this
    process, and SQLite's locks (with the busy `timeout`) order the writes of
    several processes. Use it as a context manager or call `close()`.

    Args:
        path: the database file (created with its table on first use).
        serializer: how entries are stored (default `MsgpackSerializer()`).
        clock: the wall clock TTLs are measured with (default `time.time`); every
            process sharing the file must use the same clock.
        timeout: seconds to wait for another process's lock before failing.

    Raises:
        ActorGraphError: the file cannot be opened as a SQLite database.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        serializer: Any = None,
        clock: Callable[[], float] | None = None,
        timeout: float = 30.0,
    ) -> None:
        import sqlite3  # noqa: PLC0415 - only a SQLite cache needs it

        from actorgraph.checkpoint.sqlite import wal_connect  # noqa: PLC0415 - the same: sqlite3

        super().__init__(serializer, clock)
        self.path = Path(path)
        self._errors: type[Exception] = sqlite3.Error
        self._lock = threading.Lock()
        try:
            conn = wal_connect(self.path, timeout)
            conn.execute(_SCHEMA)
        except sqlite3.Error as exc:
            msg = (
                f"SqliteCache could not open {str(self.path)!r} ({exc}); check that the file is a "
                "SQLite database and that it and its directory are writable"
            )
            raise ActorGraphError(msg) from exc
        self._conn: Any = conn

    def close(self) -> None:
        """Close the connection (idempotent); the cache cannot be used afterwards."""
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def _run(self, what: str, sql: str, args: Sequence[Any] = ()) -> list[Any]:
        with self._lock:
            if self._conn is None:
                msg = f"SqliteCache {str(self.path)!r} is closed; open a new one to use the cache"
                raise ActorGraphError(msg)
            try:
                return list(self._conn.execute(sql, args).fetchall())
            except self._errors as exc:
                msg = (
                    f"SqliteCache {str(self.path)!r} failed {what} ({exc}); retry, or check the file "
                    "and the disk (another process may hold its lock longer than the timeout)"
                )
                raise ActorGraphError(msg) from exc

    def _describe(self) -> str:
        return f"SqliteCache {str(self.path)!r}"

    def _load(self, namespace: str, key: str, now: float) -> bytes | None:
        rows = self._run(
            "reading an entry",
            "SELECT value, typeof(expires_at) FROM actorgraph_cache WHERE namespace = ? AND key = ? "
            "AND (expires_at IS NULL OR expires_at > ?)",
            (namespace, key, now),
        )
        if not rows:
            return None
        value, expiry = rows[0]
        if type(value) is not bytes:  # SQLite keeps what it is given: a text or a number too
            raise Damaged(f"its stored value is {type(value).__name__}, not the bytes of an entry")
        if expiry not in ("null", "real", "integer"):  # a text is later than every number: never expired
            raise Damaged(f"its expiry time is stored as {expiry}, not as a number")
        return value

    def _save(self, namespace: str, key: str, data: bytes, expires: float | None) -> None:
        self._run(
            "writing an entry",
            "INSERT INTO actorgraph_cache VALUES (?, ?, ?, ?) ON CONFLICT (namespace, key) "
            "DO UPDATE SET expires_at = excluded.expires_at, value = excluded.value",
            (namespace, key, expires, data),
        )

    def _forget(self, namespaces: list[str] | None) -> None:
        if namespaces is None:
            self._run("clearing", "DELETE FROM actorgraph_cache")
            return
        for start in range(0, len(namespaces), _CHUNK):
            chunk = namespaces[start : start + _CHUNK]
            marks = ", ".join("?" * len(chunk))
            self._run("clearing", f"DELETE FROM actorgraph_cache WHERE namespace IN ({marks})", chunk)  # noqa: S608 - only marks

    def _sweep(self, now: float) -> None:
        self._run("removing expired entries", "DELETE FROM actorgraph_cache WHERE expires_at <= ?", (now,))
