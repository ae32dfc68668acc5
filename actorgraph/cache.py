"""Node caches: where vertices with a `CachePolicy` keep their outcomes (`Graph.compile(cache=...)`).

- `MemoryCache()`: in this process, shared by every thread and every graph given it.
- `SqliteCache(path)`: a SQLite file (WAL mode), shared by every process that opens it.

A cache keeps what a vertex's function returned (a state, None or a `Command`,
its `Send`s included) and its private value, stored with a checkpoint
serializer: the safe `MsgpackSerializer` by default (no pickle; give it
`allowed=` for dataclass or pydantic states, as for a checkpointer). Keys are
digests of the vertex's input (`digest`): the same in every process, dict keys
in any order (with an `EncryptedSerializer`, a keyed digest, so a key tells
nothing about the state without the key). An entry past its TTL is never
returned; the clock is `time.time` unless `clock=` says otherwise.

Layer (docs/design.md): persistence, beside `checkpoint/`. Imports only
`actorgraph._model` (records, errors) and the checkpoint serializers, never the
engine, the builder or the actors. `import actorgraph` loads neither `sqlite3`
nor the serializers: they load with the first cache made.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

from actorgraph._model.errors import ActorGraphError
from actorgraph._model.policy import CachedOutcome
from actorgraph._model.records import Command, Send

__all__ = ["MemoryCache", "SqliteCache"]

_FORMAT = 1
_SWEEP_EVERY = 256  # puts between removals of expired entries


class _Cache:
    """What both caches share: digests, entries as plain data, and TTLs; a subclass keeps the bytes."""

    def __init__(self, serializer: Any, clock: Callable[[], float] | None) -> None:
        if serializer is None:
            from actorgraph.checkpoint.serde import MsgpackSerializer  # noqa: PLC0415 - on first use

            serializer = MsgpackSerializer()
        if not (
            callable(getattr(serializer, "dumps", None)) and callable(getattr(serializer, "loads", None))
        ):
            msg = (
                f"a node cache's serializer= must have dumps() and loads() (a checkpoint serializer "
                f"such as MsgpackSerializer(allowed=...)), got {type(serializer).__name__}"
            )
            raise ActorGraphError(msg)
        self.serializer = serializer
        self._clock: Callable[[], float] = clock or time.time
        self._puts = 0

    def digest(self, parts: Any) -> str:
        """A stable digest of `parts` (dicts and sets in any order): the same in every process.

        Raises:
            SerializationError: `parts` holds a value the serializer cannot store
                (give the vertex's `CachePolicy` a `key=` function, or allow the class).
        """
        address = getattr(self.serializer, "address", None)
        inner = getattr(self.serializer, "inner", None)
        encrypting = callable(address) and inner is not None
        plain: Callable[[Any], bytes] = inner.dumps if encrypting else self.serializer.dumps  # type: ignore[union-attr]
        data = plain(_canonical(parts, plain))
        if encrypting:  # a keyed digest: without the key, it tells nothing about the state
            return str(address(data))  # type: ignore[misc]
        import hashlib  # noqa: PLC0415 - it loads OpenSSL: only when a cache is used

        return hashlib.blake2b(data, digest_size=20).hexdigest()

    def get(self, namespace: str, key: str) -> CachedOutcome | None:
        """The outcome kept under `key` in `namespace`, or None (never kept, expired or cleared)."""
        data = self._load(namespace, key, self._clock())
        if data is None:
            return None
        entry = self.serializer.loads(data, aad=_aad(namespace, key))
        return CachedOutcome(_returned(entry["returned"]), entry["value"])

    def put(self, namespace: str, key: str, outcome: CachedOutcome, ttl: float | None) -> None:
        """Keep `outcome` under `key` in `namespace` for `ttl` seconds (None: until cleared).

        Raises:
            SerializationError: the outcome holds a value the serializer cannot store.
        """
        entry = {"format": _FORMAT, "returned": _plain_returned(outcome.returned), "value": outcome.value}
        data = self.serializer.dumps(entry, aad=_aad(namespace, key))
        now = self._clock()
        self._save(namespace, key, data, None if ttl is None else now + ttl)
        self._puts += 1
        if self._puts % _SWEEP_EVERY == 0:
            self._sweep(now)

    def clear(self, namespaces: Sequence[str] | None = None) -> None:
        """Forget every outcome of these namespaces (`graph/vertex`), or all of them with None."""
        self._forget(None if namespaces is None else list(namespaces))

    # -- what a cache implements ---------------------------------------------------------

    def _load(self, namespace: str, key: str, now: float) -> bytes | None:
        raise NotImplementedError

    def _save(self, namespace: str, key: str, data: bytes, expires: float | None) -> None:
        raise NotImplementedError

    def _forget(self, namespaces: list[str] | None) -> None:
        raise NotImplementedError

    def _sweep(self, now: float) -> None:
        raise NotImplementedError


class MemoryCache(_Cache):
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


class SqliteCache(_Cache, contextlib.AbstractContextManager["SqliteCache"]):
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

    def _load(self, namespace: str, key: str, now: float) -> bytes | None:
        rows = self._run(
            "reading an entry",
            "SELECT value FROM actorgraph_cache WHERE namespace = ? AND key = ? "
            "AND (expires_at IS NULL OR expires_at > ?)",
            (namespace, key, now),
        )
        return bytes(rows[0][0]) if rows else None

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


def _aad(namespace: str, key: str) -> bytes:
    """Binds an entry's bytes to its place (an encrypting serializer refuses them elsewhere)."""
    return f"cache|{namespace}|{key}".encode()


def _canonical(value: Any, plain: Callable[[Any], bytes]) -> Any:
    """`value` with every dict and set in a fixed order, so equal values give equal bytes."""
    if isinstance(value, dict):
        items = [(_canonical(k, plain), _canonical(v, plain)) for k, v in value.items()]
        items.sort(key=lambda kv: plain(kv[0]))
        return ("dict", [list(kv) for kv in items])
    if isinstance(value, (set, frozenset)):
        return ("set", sorted((_canonical(v, plain) for v in value), key=plain))
    if isinstance(value, (list, tuple)):
        out = [_canonical(v, plain) for v in value]
        return out if isinstance(value, list) else tuple(out)
    return value


def _plain_returned(returned: Any) -> list[Any]:
    """What a vertex returned, as plain data: a state, a `Command` or a `Send`."""
    if isinstance(returned, Command):
        goto: list[str | Send] = (
            [returned.goto] if isinstance(returned.goto, (str, Send)) else list(returned.goto)
        )
        single = isinstance(returned.goto, (str, Send))
        return ["command", returned.update, [_plain_target(g) for g in goto], single, returned.graph]
    if isinstance(returned, Send):
        return ["send", returned.vertex, returned.state]
    return ["state", returned]


def _plain_target(target: str | Send) -> Any:
    return ["send", target.vertex, target.state] if isinstance(target, Send) else target


def _returned(plain: list[Any]) -> Any:
    """What `_plain_returned` made, back as the vertex returned it."""
    match plain:
        case ["command", update, goto, single, graph]:
            targets = [Send(g[1], g[2]) if isinstance(g, list) else g for g in goto]
            return Command(update=update, goto=targets[0] if single else tuple(targets), graph=graph)
        case ["send", vertex, state]:
            return Send(vertex, state)
        case ["state", state]:
            return state
    msg = "a node cache entry is damaged (an unknown kind of outcome); clear the cache"
    raise ActorGraphError(msg)
