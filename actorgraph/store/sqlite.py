"""A memory store in one SQLite file (stdlib `sqlite3`, WAL mode), shared by threads and processes."""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from actorgraph._model.errors import StoreError
from actorgraph.checkpoint.sqlite import _DIALECT, immediate, wal_connect
from actorgraph.store._sql import Conn, SqlStore

__all__ = ["SqliteStore"]

_T = TypeVar("_T")


class SqliteStore(SqlStore):
    """Keeps values in a SQLite database file; safe to use from many threads and processes.

    One connection, guarded by a lock, serves every thread of the process; other
    processes may open the same file (SQLite's locks and the busy timeout order
    their writes). The file is put in WAL mode; the tables (`actorgraph_store*`)
    are created on first use, so a store may share a file with a
    `SqliteCheckpointer`. Use it as a context manager or call `close()`.

    A `SqliteStore` pickles as its arguments: the copy (in a Ray worker, a child
    process) opens the same file on its first call.

    Args:
        path: the database file (str or path).
        index: a semantic index `{"embed": fn, "dims": n, "fields": [...]}` (see `MemoryStore`);
            pickled with the store, so `fn` must be picklable to cross processes.
        timeout: the busy timeout: seconds to wait for another connection's lock
            before a call fails with `StoreError` (never a hang).
        clock: the wall clock (seconds since the epoch) that stamps and expires values.

    Raises:
        ConfigError: `index` is malformed.
        StoreError: the file cannot be opened or is not a SQLite database.
    """

    dialect = _DIALECT

    def __init__(
        self,
        path: str | os.PathLike[str],
        index: Mapping[str, Any] | None = None,
        *,
        timeout: float = 5.0,
        clock: Callable[[], float] | None = None,
    ) -> None:
        self._configure(path=os.fspath(path), index=index, timeout=timeout, clock=clock)
        self._open_now("opening the store")

    def _configure(self, **arguments: Any) -> None:
        self._path: str = arguments["path"]
        self._timeout: float = arguments["timeout"]
        self._setup(repr(self._path), arguments["index"], arguments["clock"])

    def _arguments(self) -> dict[str, Any]:
        return {
            "path": self._path,
            "index": self._index_config,
            "timeout": self._timeout,
            "clock": self._clock,
        }

    # json_extract's text ends at a NUL, so a row with a \u0000 escape passes and Python decides, as
    # does a row that is not JSON text (changed outside actorgraph: Python names it), where
    # json_extract would fail the whole search; it reads a JSON number as a number and true / false
    # as 1 / 0, which compare as Python's == does
    _field_is = (
        "CASE WHEN typeof(value) <> 'text' OR instr(value, '\\u0000') > 0 OR NOT json_valid(value) "
        "THEN 1 ELSE json_extract(value, ?) = ? END"
    )

    def _field_path(self, field: str, _wanted: str | float) -> str | None:
        # SQLite 3.40 compares a path label with a key as the JSON text writes it (a tab as \t) and
        # takes no quote in a label; 3.45 and later compare it with the key as read. So only a name
        # that JSON writes as it is makes a label; a filter on any other is decided by Python alone.
        return f'$."{field}"' if json.dumps(field, ensure_ascii=False) == f'"{field}"' else None

    def _connect(self) -> Conn:
        return wal_connect(self._path, self._timeout)

    def _run_in_transaction(self, conn: Conn, work: Callable[[Conn], _T]) -> _T:
        return immediate(conn, work)

    def _failure(self, op: str, exc: Exception) -> StoreError | None:
        if not isinstance(exc, sqlite3.Error):
            return None
        text = str(exc).lower()
        if "locked" in text or "busy" in text:
            hint = (
                "another connection held the file's lock past the busy timeout; retry, or give more timeout="
            )
        elif "not a database" in text or "malformed" in text:
            hint = "the file is not an intact SQLite database; give another path"
        else:
            hint = "check that the file and its directory exist and are writable, and that the disk has room"
        return StoreError(f"SQLite store {self._path!r}: {op} failed: {exc}. What to do: {hint}.")
