"""A checkpointer that stores runs in one SQLite file (stdlib `sqlite3`, WAL mode).

One connection, guarded by a lock, serves every thread of the process; other
processes may open the same file (SQLite's own locks and the busy timeout
order their writes). Every call is one transaction, so a crash leaves either
all of a call's rows or none of them. The SQL itself is shared with the
PostgreSQL store (`_sql.py`); this module only connects.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
import time
import urllib.parse
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from actorgraph._model.errors import CheckpointError
from actorgraph.checkpoint._dialect import Dialect, Refused, Statements, Step
from actorgraph.checkpoint._protocol import Serializer
from actorgraph.checkpoint._sql import SqlStore

__all__ = ["SqliteCheckpointer"]

_T = TypeVar("_T")

_DIALECT = Dialect(
    name="SQLite",
    mark="?",
    key="TEXT",
    text="TEXT",
    real="REAL",
    int="INTEGER",
    blob="BLOB",
    lock_thread="",  # BEGIN IMMEDIATE already holds the database's write lock
    lock_schema="",
    table_exists="SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?",
)
_CHUNK = 500  # ids per `IN (...)` query, well below SQLite's limit on variables


def _hint(exc: sqlite3.Error) -> str:
    text = str(exc).lower()
    if "locked" in text or "busy" in text:
        return (
            "another connection held a lock on the file longer than the busy timeout; retry, "
            "or give SqliteCheckpointer a longer timeout= (the run stays resumable)"
        )
    if "full" in text:
        return "free disk space, then retry (the run stays resumable)"
    if "not a database" in text or "malformed" in text or "corrupt" in text:
        return "the file is not an intact SQLite database; restore it from a backup or use a new path"
    if "readonly" in text or "unable to open" in text or "permission" in text:
        return (
            "check that the file and its directory exist and are writable by this process, "
            "or open it with readonly=True to only read it"
        )
    return "check the file and the disk, then retry"


def _refused(exc: sqlite3.IntegrityError) -> Refused | None:
    """The refusal a broken NOT NULL or UNIQUE constraint stands for ("... failed: table.column")."""
    kinds = {
        "SQLITE_CONSTRAINT_NOTNULL": "null",
        "SQLITE_CONSTRAINT_PRIMARYKEY": "unique",
        "SQLITE_CONSTRAINT_UNIQUE": "unique",
    }
    kind = kinds.get(getattr(exc, "sqlite_errorname", ""))
    if kind is None:
        return None
    return Refused(kind, str(exc).partition(": ")[2].partition(".")[0])


def wal_connect(path: str | os.PathLike[str], timeout: float) -> sqlite3.Connection:
    """A connection to `path` (autocommit, usable from any thread) with the file in WAL mode.

    Shared with the memory store and the node cache. Turning a new file to WAL
    takes its exclusive lock, and SQLite refuses that at once, without waiting
    out its busy timeout, while another connection opens the same new file
    (several workers started together on one new `--db`): the switch is tried
    again, with short pauses, for up to `timeout` seconds.

    Raises:
        sqlite3.Error: the file cannot be opened, or stayed locked for `timeout` seconds.
    """
    deadline = time.monotonic() + timeout
    pause = 0.002
    while True:
        conn = sqlite3.connect(path, timeout=timeout, isolation_level=None, check_same_thread=False)
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
        except sqlite3.OperationalError as exc:
            conn.close()
            if "locked" not in str(exc) or time.monotonic() + pause > deadline:
                raise
        except BaseException:
            conn.close()
            raise
        else:
            return conn
        time.sleep(pause)
        pause = min(pause * 2, 0.05)


def immediate(conn: sqlite3.Connection, work: Callable[[sqlite3.Connection], _T]) -> _T:
    """`work(conn)` in one transaction that takes the file's write lock first (`BEGIN IMMEDIATE`).

    Shared with the memory store (`actorgraph.store.sqlite`): either all of `work`'s changes
    are committed or, when it raises, none.
    """
    conn.execute("BEGIN IMMEDIATE")
    try:
        result = work(conn)
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            with contextlib.suppress(sqlite3.Error):
                conn.execute("ROLLBACK")
        raise
    return result


def _not_writable(path: str) -> bool:
    """An existing file this process cannot write (or whose directory cannot take the WAL files)."""
    file = Path(path)
    if path == ":memory:" or not file.exists():
        return False
    return not (os.access(file, os.W_OK) and os.access(file.absolute().parent, os.W_OK))


class SqliteCheckpointer(SqlStore):
    """Stores runs in a SQLite database file; safe to use from many threads.

    The file is put in WAL mode with `synchronous=NORMAL` (a commit survives a
    crash of the process; a power cut may lose the last commits, never corrupt
    the file). The schema is created on first use. Use it as a context manager
    (`with SqliteCheckpointer(path) as cp:`) or call `close()`.

    Args:
        path: the database file (str or path), or ":memory:" for a private in-memory database.
        serializer: encodes the engine's records; None for `MsgpackSerializer()`.
        timeout: the busy timeout: seconds to wait for another connection's lock
            before a call fails with `CheckpointError` (never a hang).
        readonly: open the file for reading only: nothing is written, not even
            the schema, and every write fails with `CheckpointError`. A file this
            process cannot write (a read-only mount, a copy kept for inspection)
            is opened this way by itself.

    Raises:
        CheckpointError: the file cannot be opened, is not a SQLite database, or
            was written by a newer actorgraph.
    """

    dialect = _DIALECT
    sql = Statements.of(_DIALECT)

    def __init__(
        self,
        path: str | os.PathLike[str],
        serializer: Serializer | None = None,
        *,
        timeout: float = 5.0,
        readonly: bool = False,
    ) -> None:
        self._path = os.fspath(path)
        super().__init__(serializer, where=repr(self._path), readonly=readonly or _not_writable(self._path))
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        conn = self._connect(timeout)
        self._conn = conn
        try:
            if self.readonly:
                self._query("opening the database", self._check_readable)
            else:
                self._transaction("creating the schema", self._create_schema)
        except BaseException:
            self._conn = None
            conn.close()
            raise

    def _connect(self, timeout: float) -> sqlite3.Connection:
        options: dict[str, Any] = {"timeout": timeout, "isolation_level": None, "check_same_thread": False}
        uri = f"file:{urllib.parse.quote(str(Path(self._path).absolute()))}?mode=ro"
        try:
            if not self.readonly:
                return self._prepared(wal_connect(self._path, timeout))
            try:
                return self._prepared(sqlite3.connect(uri, uri=True, **options))
            except sqlite3.OperationalError:
                # A WAL file whose folder cannot take the shared-memory file: read it as it stands.
                return self._prepared(sqlite3.connect(f"{uri}&immutable=1", uri=True, **options))
        except sqlite3.Error as exc:
            raise self._error("opening the database", exc) from exc

    @staticmethod
    def _prepared(conn: sqlite3.Connection) -> sqlite3.Connection:
        """`conn` once it has read the file, or closed on failure."""
        try:
            conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
        except BaseException:
            conn.close()
            raise
        return conn

    def _error(self, op: str, exc: sqlite3.Error) -> CheckpointError:
        return CheckpointError(f"SQLite store {self._path!r}: {op} failed: {exc}. What to do: {_hint(exc)}.")

    def _open(self) -> sqlite3.Connection:
        conn = self._conn
        if conn is None:
            raise CheckpointError(
                f"this SqliteCheckpointer ({self._path!r}) is closed; create a new "
                f"SqliteCheckpointer on the same path to use the store again."
            )
        return conn

    def _transaction(self, op: str, work: Callable[[sqlite3.Connection], _T]) -> _T:
        with self._lock:
            conn = self._open()
            try:
                return immediate(conn, work)
            except sqlite3.Error as exc:
                raise self._error(op, exc) from exc

    def _query(self, op: str, work: Callable[[sqlite3.Connection], _T]) -> _T:
        with self._lock:
            conn = self._open()
            try:
                return work(conn)
            except sqlite3.Error as exc:
                raise self._error(op, exc) from exc

    def _sent_at_once(self, op: str, steps: Sequence[Step]) -> None:
        def work(conn: sqlite3.Connection) -> None:
            try:
                for sql, args, many in steps:
                    if many:
                        conn.executemany(sql, args)
                    else:
                        conn.execute(sql, args)
            except sqlite3.IntegrityError as exc:
                refused = _refused(exc)
                if refused is None:
                    raise
                raise refused from exc

        self._transaction(op, work)

    def _matching(self, column: str, ids: Sequence[str]) -> list[tuple[str, list[Any]]]:
        chunks = [list(ids[start : start + _CHUNK]) for start in range(0, len(ids), _CHUNK)]
        return [(f"{column} IN ({', '.join('?' * len(chunk))})", chunk) for chunk in chunks]

    def close(self) -> None:
        """Close the connection; calling it again does nothing, any other call then fails."""
        with self._lock:
            conn, self._conn = self._conn, None
        if conn is not None:
            try:
                conn.close()
            except sqlite3.Error as exc:
                raise self._error("closing the database", exc) from exc
