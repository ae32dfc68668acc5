"""A checkpointer that stores runs in one SQLite file (stdlib `sqlite3`, WAL mode).

One connection, guarded by a lock, serves every thread of the process; other
processes may open the same file (SQLite's own locks and the busy timeout
order their writes). Every call is one transaction, so a crash leaves either
all of a call's rows or none of them.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, TypeVar

from actorgraph._errors import CheckpointError
from actorgraph.checkpoint._protocol import SCHEMA_VERSION, CheckpointRow, Serializer, ThreadInfo, WriteRow
from actorgraph.checkpoint._store import (
    META_VERSION_KEY,
    ROW_COLUMNS,
    StoreBase,
    already_stored,
    cas_refused,
    check_history_limit,
    check_keep,
    check_schema,
    decode_refs,
    decode_row,
    encode_refs,
    history_query,
    now,
    prune_plan,
    threads_query,
    unknown_checkpoint,
    unused_blobs,
)

__all__ = ["SqliteCheckpointer"]

_T = TypeVar("_T")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS actorgraph_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS actorgraph_threads (
    thread_id TEXT PRIMARY KEY, head TEXT NOT NULL, status TEXT NOT NULL, updated_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS actorgraph_checkpoints (
    thread_id TEXT NOT NULL, checkpoint_id TEXT NOT NULL, parent_id TEXT, step INTEGER NOT NULL,
    source TEXT NOT NULL, status TEXT NOT NULL, created_at REAL NOT NULL, data BLOB NOT NULL,
    refs TEXT NOT NULL, PRIMARY KEY (thread_id, checkpoint_id)
);
CREATE TABLE IF NOT EXISTS actorgraph_writes (
    thread_id TEXT NOT NULL, checkpoint_id TEXT NOT NULL, task_id TEXT NOT NULL, data BLOB NOT NULL,
    refs TEXT NOT NULL, PRIMARY KEY (thread_id, checkpoint_id, task_id)
);
CREATE TABLE IF NOT EXISTS actorgraph_blobs (
    thread_id TEXT NOT NULL, blob_id TEXT NOT NULL, data BLOB NOT NULL, PRIMARY KEY (thread_id, blob_id)
)
"""

_NEW_THREAD = "INSERT OR IGNORE INTO actorgraph_threads VALUES (?, ?, ?, ?)"
_MOVE_HEAD = (
    "UPDATE actorgraph_threads SET head = ?, status = ?, updated_at = ? WHERE thread_id = ? AND head = ?"
)
_HEAD = "SELECT head FROM actorgraph_threads WHERE thread_id = ?"
_INSERT_ROW = f"INSERT INTO actorgraph_checkpoints ({ROW_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"  # noqa: S608
_INSERT_BLOB = "INSERT OR IGNORE INTO actorgraph_blobs VALUES (?, ?, ?)"
_TOUCH = (
    "UPDATE actorgraph_threads SET updated_at = ?, status = coalesce(?, status) WHERE thread_id = ?"
    " AND EXISTS (SELECT 1 FROM actorgraph_checkpoints WHERE thread_id = ? AND checkpoint_id = ?)"
)
_INSERT_WRITE = "INSERT OR REPLACE INTO actorgraph_writes VALUES (?, ?, ?, ?, ?)"
_SELECT_ROW = f"SELECT {ROW_COLUMNS} FROM actorgraph_checkpoints WHERE thread_id = ?"  # noqa: S608
_SELECT_ONE = f"{_SELECT_ROW} AND checkpoint_id = ?"
_SELECT_HEAD = f"{_SELECT_ROW} AND checkpoint_id = (SELECT head FROM actorgraph_threads WHERE thread_id = ?)"  # noqa: S608
_ID_OF_ROWS = "SELECT checkpoint_id FROM actorgraph_checkpoints WHERE thread_id = ?"
_DELETE_WRITES = "DELETE FROM actorgraph_writes WHERE thread_id = ? AND checkpoint_id = ?"
_DELETE_ROW = "DELETE FROM actorgraph_checkpoints WHERE thread_id = ? AND checkpoint_id = ?"
_REFS = (
    "SELECT refs FROM actorgraph_checkpoints WHERE thread_id = ?"
    " UNION ALL SELECT refs FROM actorgraph_writes WHERE thread_id = ?"
)
_BLOB_IDS = "SELECT blob_id FROM actorgraph_blobs WHERE thread_id = ?"
_DELETE_BLOB = "DELETE FROM actorgraph_blobs WHERE thread_id = ? AND blob_id = ?"
_CHUNK = 500  # ids per `IN (...)` query, well below SQLite's limit on variables


def _hint(exc: sqlite3.Error) -> str:
    text = str(exc).lower()
    if "locked" in text or "busy" in text:
        return (
            "another connection held a write lock longer than the busy timeout; retry, "
            "or give SqliteCheckpointer a longer timeout="
        )
    if "full" in text:
        return "free disk space, then retry (the run stays resumable)"
    if "not a database" in text or "malformed" in text or "corrupt" in text:
        return "the file is not an intact SQLite database; restore it from a backup or use a new path"
    if "readonly" in text or "unable to open" in text or "permission" in text:
        return "check that the file and its directory exist and are writable by this process"
    return "check the file and the disk, then retry"


class SqliteCheckpointer(StoreBase):
    """Stores runs in a SQLite database file; safe to use from many threads.

    The file is put in WAL mode with `synchronous=NORMAL` (a commit survives a
    crash of the process; a power cut may lose the last commits, never corrupt
    the file). The schema is created on first use.

    Args:
        path: the database file (str or path), or ":memory:" for a private in-memory database.
        serializer: encodes the engine's records; None for `MsgpackSerializer()`.
        timeout: seconds to wait for another connection's write lock before a
            call fails with `CheckpointError`.

    Raises:
        CheckpointError: the file cannot be opened, is not a SQLite database, or
            was written by a newer actorgraph.
    """

    def __init__(
        self, path: str | os.PathLike[str], serializer: Serializer | None = None, *, timeout: float = 5.0
    ) -> None:
        super().__init__(serializer)
        self._path = os.fspath(path)
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        try:
            conn = sqlite3.connect(self._path, timeout=timeout, isolation_level=None, check_same_thread=False)
        except sqlite3.Error as exc:
            raise self._error("opening the database", exc) from exc
        self._conn = conn
        try:
            try:
                conn.execute("PRAGMA journal_mode=WAL")
                conn.execute("PRAGMA synchronous=NORMAL")
            except sqlite3.Error as exc:
                raise self._error("opening the database", exc) from exc
            self._write("creating the schema", self._create_schema)
        except BaseException:
            self._conn = None
            conn.close()
            raise

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

    def _write(self, op: str, work: Callable[[sqlite3.Connection], _T]) -> _T:
        with self._lock:
            conn = self._open()
            try:
                conn.execute("BEGIN IMMEDIATE")
                try:
                    result = work(conn)
                    conn.execute("COMMIT")
                except BaseException:
                    if conn.in_transaction:
                        with contextlib.suppress(sqlite3.Error):
                            conn.execute("ROLLBACK")
                    raise
            except sqlite3.Error as exc:
                raise self._error(op, exc) from exc
            return result

    def _read(self, op: str, sql: str, args: Sequence[Any]) -> list[Any]:
        with self._lock:
            conn = self._open()
            try:
                return conn.execute(sql, args).fetchall()
            except sqlite3.Error as exc:
                raise self._error(op, exc) from exc

    def _create_schema(self, conn: sqlite3.Connection) -> None:
        where = f"the SQLite database {self._path!r}"
        found = conn.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'actorgraph_meta'"
        ).fetchone()
        if found is not None:
            version = conn.execute(
                "SELECT value FROM actorgraph_meta WHERE key = ?", (META_VERSION_KEY,)
            ).fetchone()
            if version is not None:
                check_schema(where, version[0])
        for statement in _SCHEMA.split(";"):
            conn.execute(statement)
        conn.execute(
            "INSERT OR IGNORE INTO actorgraph_meta VALUES (?, ?)", (META_VERSION_KEY, str(SCHEMA_VERSION))
        )

    @property
    def schema_version(self) -> int:
        """The schema version recorded in the database."""
        rows = self._read(
            "reading the schema version",
            "SELECT value FROM actorgraph_meta WHERE key = ?",
            (META_VERSION_KEY,),
        )
        return int(rows[0][0])

    def put(
        self,
        row: CheckpointRow,
        *,
        blobs: Mapping[str, bytes] | None = None,
        expect_head: str | None,
    ) -> None:
        """Store the blobs and the checkpoint, and make it the thread's head, in one transaction.

        Args:
            row: the checkpoint.
            blobs: state versions it refers to; an id already stored keeps its bytes.
            expect_head: the head the writer started from (None for a new thread).

        Raises:
            CheckpointError: the head moved (another run advanced the thread), the id
                is already stored, or the database failed; nothing was written.
        """
        thread_id = row.thread_id
        checkpoint_id = row.checkpoint_id
        stamp = now()
        values = (
            thread_id, checkpoint_id, row.parent_id, row.step, row.source, row.status,
            row.created_at, row.data, encode_refs(row.refs),
        )  # fmt: skip

        def work(conn: sqlite3.Connection) -> None:
            if expect_head is None:
                moved = conn.execute(_NEW_THREAD, (thread_id, checkpoint_id, row.status, stamp))
            else:
                moved = conn.execute(_MOVE_HEAD, (checkpoint_id, row.status, stamp, thread_id, expect_head))
            if moved.rowcount != 1:
                actual = conn.execute(_HEAD, (thread_id,)).fetchone()
                raise cas_refused(
                    thread_id, checkpoint_id, expect_head, None if actual is None else actual[0]
                )
            try:
                conn.execute(_INSERT_ROW, values)
            except sqlite3.IntegrityError:
                raise already_stored(thread_id, checkpoint_id) from None
            if blobs:
                conn.executemany(_INSERT_BLOB, [(thread_id, k, v) for k, v in blobs.items()])

        self._write(f"storing checkpoint {checkpoint_id!r} of thread {thread_id!r}", work)

    def put_writes(
        self,
        thread_id: str,
        checkpoint_id: str,
        writes: Sequence[WriteRow],
        *,
        blobs: Mapping[str, bytes] | None = None,
        status: str | None = None,
    ) -> None:
        """Store task results against a checkpoint (and their blobs), in one transaction.

        Args:
            thread_id: the thread.
            checkpoint_id: the checkpoint whose next superstep the tasks belong to.
            writes: the results; a later one for a task id replaces the earlier one.
            blobs: state versions they refer to; an id already stored keeps its bytes.
            status: when given, the thread's new status.

        Raises:
            CheckpointError: the checkpoint is unknown or the database failed; nothing was written.
        """
        stamp = now()
        rows = [(thread_id, checkpoint_id, w.task_id, w.data, encode_refs(w.refs)) for w in writes]

        def work(conn: sqlite3.Connection) -> None:
            touched = conn.execute(_TOUCH, (stamp, status, thread_id, thread_id, checkpoint_id))
            if touched.rowcount != 1:
                raise unknown_checkpoint(thread_id, checkpoint_id)
            conn.executemany(_INSERT_WRITE, rows)
            if blobs:
                conn.executemany(_INSERT_BLOB, [(thread_id, k, v) for k, v in blobs.items()])

        self._write(f"storing task results of thread {thread_id!r}", work)

    def get(self, thread_id: str, checkpoint_id: str | None = None) -> CheckpointRow | None:
        """One checkpoint, or the thread's head when `checkpoint_id` is None; None if absent."""
        if checkpoint_id is None:
            sql, args = _SELECT_HEAD, (thread_id, thread_id)
        else:
            sql, args = _SELECT_ONE, (thread_id, checkpoint_id)
        found = self._read(f"reading a checkpoint of thread {thread_id!r}", sql, args)
        return decode_row(found[0]) if found else None

    def get_writes(self, thread_id: str, checkpoint_id: str) -> dict[str, WriteRow]:
        """The task results stored against a checkpoint, by task id (sorted by task id)."""
        found = self._read(
            f"reading task results of thread {thread_id!r}",
            "SELECT task_id, data, refs FROM actorgraph_writes WHERE thread_id = ? AND checkpoint_id = ?"
            " ORDER BY task_id",
            (thread_id, checkpoint_id),
        )
        return {task_id: WriteRow(task_id, data, decode_refs(refs)) for task_id, data, refs in found}

    def get_blobs(self, thread_id: str, blob_ids: Iterable[str]) -> dict[str, bytes]:
        """The stored blobs among `blob_ids` (missing ids are left out)."""
        wanted = list(dict.fromkeys(blob_ids))
        out: dict[str, bytes] = {}
        for start in range(0, len(wanted), _CHUNK):
            chunk = wanted[start : start + _CHUNK]
            marks = ", ".join("?" * len(chunk))
            found = self._read(
                f"reading blobs of thread {thread_id!r}",
                f"SELECT blob_id, data FROM actorgraph_blobs WHERE thread_id = ? AND blob_id IN ({marks})",  # noqa: S608
                (thread_id, *chunk),
            )
            out.update(found)
        return {b: out[b] for b in wanted if b in out}

    def history(
        self, thread_id: str, *, limit: int | None = None, before: str | None = None
    ) -> list[CheckpointRow]:
        """A thread's checkpoints, newest (greatest checkpoint id) first.

        Args:
            thread_id: the thread.
            limit: at most this many.
            before: only checkpoints whose id sorts before this one.
        """
        check_history_limit(limit)
        sql, args = history_query("?", before, limit)
        return [
            decode_row(r)
            for r in self._read(f"reading the history of thread {thread_id!r}", sql, [thread_id, *args])
        ]

    def threads(self, *, status: str | None = None) -> list[ThreadInfo]:
        """Every thread (with that status, if given), most recently updated first."""
        found = self._read("listing threads", *threads_query("?", status))
        return [ThreadInfo(*r) for r in found]

    def delete_thread(self, thread_id: str) -> None:
        """Remove a thread: its checkpoints, writes and blobs (nothing happens if it is absent)."""

        def work(conn: sqlite3.Connection) -> None:
            for table in ("threads", "checkpoints", "writes", "blobs"):
                conn.execute(f"DELETE FROM actorgraph_{table} WHERE thread_id = ?", (thread_id,))  # noqa: S608

        self._write(f"deleting thread {thread_id!r}", work)

    def prune(self, thread_id: str, *, keep: int) -> int:
        """Delete all but the newest `keep` checkpoints of a thread (the head always stays).

        Writes of deleted checkpoints go too, and every blob of the thread that no
        remaining checkpoint or write refers to.

        Returns:
            How many checkpoints were deleted.
        """
        check_keep(keep)
        key = (thread_id,)

        def work(conn: sqlite3.Connection) -> int:
            head = conn.execute(_HEAD, key).fetchone()
            if head is None:
                return 0
            ids = [r[0] for r in conn.execute(_ID_OF_ROWS, key)]
            drop = [(thread_id, cid) for cid in prune_plan(ids, head[0], keep)]
            conn.executemany(_DELETE_WRITES, drop)
            conn.executemany(_DELETE_ROW, drop)
            refs = [text for (text,) in conn.execute(_REFS, (thread_id, thread_id))]
            unused = unused_blobs(refs, [b for (b,) in conn.execute(_BLOB_IDS, key)])
            conn.executemany(_DELETE_BLOB, [(thread_id, b) for b in unused])
            return len(drop)

        return self._write(f"pruning thread {thread_id!r}", work)

    def close(self) -> None:
        """Close the connection; calling it again does nothing, any other call then fails."""
        with self._lock:
            conn, self._conn = self._conn, None
        if conn is not None:
            try:
                conn.close()
            except sqlite3.Error as exc:
                raise self._error("closing the database", exc) from exc
