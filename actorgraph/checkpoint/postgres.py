"""A checkpointer that stores runs in PostgreSQL (psycopg 3, installed with `actorgraph[postgres]`).

One connection, guarded by a lock, serves the process; other processes may
share the database. Moving a head is a compare-and-swap in SQL (`UPDATE ...
WHERE head = ...`, or an insert that does nothing when another writer created
the thread first), so two writers never both commit a step. A call that fails
because the connection was lost raises `CheckpointError`; the next call
reconnects. psycopg is imported only when a `PostgresCheckpointer` is made.
"""

from __future__ import annotations

import contextlib
import math
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

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

if TYPE_CHECKING:
    import psycopg
    from psycopg.rows import TupleRow

__all__ = ["PostgresCheckpointer"]

_T = TypeVar("_T")

_SCHEMA_LOCK = 0x6163746F72677270  # advisory lock key ("actorgrp") held while creating the schema

_SCHEMA = """
CREATE TABLE IF NOT EXISTS actorgraph_meta (key text COLLATE "C" PRIMARY KEY, value text NOT NULL);
CREATE TABLE IF NOT EXISTS actorgraph_threads (
    thread_id text COLLATE "C" PRIMARY KEY, head text COLLATE "C" NOT NULL, status text NOT NULL,
    updated_at double precision NOT NULL
);
CREATE TABLE IF NOT EXISTS actorgraph_checkpoints (
    thread_id text COLLATE "C" NOT NULL, checkpoint_id text COLLATE "C" NOT NULL,
    parent_id text COLLATE "C", step bigint NOT NULL, source text NOT NULL, status text NOT NULL,
    created_at double precision NOT NULL, data bytea NOT NULL, refs text NOT NULL,
    PRIMARY KEY (thread_id, checkpoint_id)
);
CREATE TABLE IF NOT EXISTS actorgraph_writes (
    thread_id text COLLATE "C" NOT NULL, checkpoint_id text COLLATE "C" NOT NULL,
    task_id text COLLATE "C" NOT NULL, data bytea NOT NULL, refs text NOT NULL,
    PRIMARY KEY (thread_id, checkpoint_id, task_id)
);
CREATE TABLE IF NOT EXISTS actorgraph_blobs (
    thread_id text COLLATE "C" NOT NULL, blob_id text COLLATE "C" NOT NULL, data bytea NOT NULL,
    PRIMARY KEY (thread_id, blob_id)
)
"""

_SELECT_ROW = f"SELECT {ROW_COLUMNS} FROM actorgraph_checkpoints WHERE thread_id = %s"  # noqa: S608
_NEW_THREAD = "INSERT INTO actorgraph_threads VALUES (%s, %s, %s, %s) ON CONFLICT (thread_id) DO NOTHING"
_MOVE_HEAD = (
    "UPDATE actorgraph_threads SET head = %s, status = %s, updated_at = %s WHERE thread_id = %s AND head = %s"
)
_HEAD = "SELECT head FROM actorgraph_threads WHERE thread_id = %s"
_INSERT_ROW = (
    f"INSERT INTO actorgraph_checkpoints ({ROW_COLUMNS}) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)"  # noqa: S608
    " ON CONFLICT (thread_id, checkpoint_id) DO NOTHING"
)
_INSERT_BLOB = "INSERT INTO actorgraph_blobs VALUES (%s, %s, %s) ON CONFLICT (thread_id, blob_id) DO NOTHING"
_TOUCH = (
    "UPDATE actorgraph_threads SET updated_at = %s, status = coalesce(%s::text, status)"
    " WHERE thread_id = %s AND EXISTS"
    " (SELECT 1 FROM actorgraph_checkpoints WHERE thread_id = %s AND checkpoint_id = %s)"
)
_INSERT_WRITE = (
    "INSERT INTO actorgraph_writes VALUES (%s, %s, %s, %s, %s)"
    " ON CONFLICT (thread_id, checkpoint_id, task_id)"
    " DO UPDATE SET data = excluded.data, refs = excluded.refs"
)
_ID_OF_ROWS = "SELECT checkpoint_id FROM actorgraph_checkpoints WHERE thread_id = %s"
_DELETE_WRITES = "DELETE FROM actorgraph_writes WHERE thread_id = %s AND checkpoint_id = ANY(%s)"
_DELETE_ROWS = "DELETE FROM actorgraph_checkpoints WHERE thread_id = %s AND checkpoint_id = ANY(%s)"
_REFS = (
    "SELECT refs FROM actorgraph_checkpoints WHERE thread_id = %s"
    " UNION ALL SELECT refs FROM actorgraph_writes WHERE thread_id = %s"
)
_BLOB_IDS = "SELECT blob_id FROM actorgraph_blobs WHERE thread_id = %s"
_DELETE_BLOBS = "DELETE FROM actorgraph_blobs WHERE thread_id = %s AND blob_id = ANY(%s)"


def _require_psycopg() -> None:
    try:
        import psycopg  # noqa: PLC0415, F401 - optional dependency, imported only when used
    except ImportError as exc:
        raise CheckpointError(
            'PostgresCheckpointer needs psycopg 3, which is not installed: pip install "actorgraph[postgres]"'
        ) from exc


def _describe(dsn: str) -> str:
    """Where a DSN points, without its password: "host:port/dbname"."""
    from psycopg.conninfo import conninfo_to_dict  # noqa: PLC0415 - optional dependency

    try:
        parts = conninfo_to_dict(dsn)
    except Exception:  # noqa: BLE001 - an unparsable DSN fails again, with its reason, on connect
        return "(unparsable DSN)"
    host = parts.get("host") or parts.get("hostaddr") or "(default host)"
    return f"{host}:{parts.get('port') or 5432}/{parts.get('dbname') or '(default database)'}"


class PostgresCheckpointer(StoreBase):
    """Stores runs in a PostgreSQL database; safe to use from many threads and processes.

    The tables (`actorgraph_*`) are created on first use, under an advisory
    lock so processes starting together do not race.

    Args:
        dsn: a libpq connection string or URI ("postgresql://user@host/db").
        serializer: encodes the engine's records; None for `MsgpackSerializer()`.
        connect_timeout: seconds to wait for the server when (re)connecting.

    Raises:
        CheckpointError: psycopg is not installed, the server cannot be reached,
            or the database was written by a newer actorgraph.
    """

    def __init__(
        self, dsn: str, serializer: Serializer | None = None, *, connect_timeout: float = 10.0
    ) -> None:
        super().__init__(serializer)
        _require_psycopg()
        self._dsn = dsn
        self._where = _describe(dsn)
        self._connect_timeout = max(1, math.ceil(connect_timeout))
        self._lock = threading.Lock()
        self._conn: psycopg.Connection[TupleRow] | None = None
        self._closed = False
        try:
            self._call("creating the schema", self._create_schema)
        except BaseException:
            self.close()
            raise

    def _connection(self) -> psycopg.Connection[TupleRow]:
        import psycopg  # noqa: PLC0415 - optional dependency

        conn = self._conn
        if conn is not None and not conn.closed and not conn.broken:
            return conn
        self._drop()
        conn = psycopg.connect(self._dsn, autocommit=True, connect_timeout=self._connect_timeout)
        self._conn = conn
        return conn

    def _drop(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            with contextlib.suppress(Exception):
                conn.close()

    def _call(
        self, op: str, work: Callable[[psycopg.Connection[TupleRow]], _T], *, transaction: bool = True
    ) -> _T:
        import psycopg  # noqa: PLC0415 - optional dependency

        with self._lock:
            if self._closed:
                raise CheckpointError(
                    f"this PostgresCheckpointer ({self._where}) is closed; create a new "
                    f"PostgresCheckpointer to use the store again."
                )
            try:
                conn = self._connection()
                if not transaction:
                    return work(conn)
                with conn.transaction():
                    return work(conn)
            except psycopg.Error as exc:
                lost = isinstance(exc, psycopg.OperationalError) or self._conn is None or self._conn.broken
                if lost:
                    self._drop()  # the next call reconnects
                    hint = (
                        "the server could not be reached or the connection was lost; check that "
                        "the server is up and the DSN is right. The next call reconnects by "
                        "itself, and the run stays resumable"
                    )
                else:
                    hint = "check the database's state and this user's permissions, then retry"
                raise CheckpointError(
                    f"PostgreSQL store {self._where}: {op} failed: {exc}. What to do: {hint}."
                ) from exc

    def _read(self, op: str, sql: str, args: Sequence[Any]) -> list[tuple[Any, ...]]:
        return self._call(op, lambda conn: conn.execute(sql, args).fetchall(), transaction=False)

    def _create_schema(self, conn: psycopg.Connection[TupleRow]) -> None:
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (_SCHEMA_LOCK,))
        found = conn.execute("SELECT to_regclass('actorgraph_meta')").fetchone()
        if found is not None and found[0] is not None:
            version = conn.execute(
                "SELECT value FROM actorgraph_meta WHERE key = %s", (META_VERSION_KEY,)
            ).fetchone()
            if version is not None:
                check_schema(f"the PostgreSQL database {self._where}", version[0])
        for statement in _SCHEMA.split(";"):
            conn.execute(statement)
        conn.execute(
            "INSERT INTO actorgraph_meta VALUES (%s, %s) ON CONFLICT (key) DO NOTHING",
            (META_VERSION_KEY, str(SCHEMA_VERSION)),
        )

    @property
    def schema_version(self) -> int:
        """The schema version recorded in the database."""
        found = self._read(
            "reading the schema version",
            "SELECT value FROM actorgraph_meta WHERE key = %s",
            (META_VERSION_KEY,),
        )
        return int(found[0][0])

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

        def work(conn: psycopg.Connection[TupleRow]) -> None:
            if expect_head is None:
                moved = conn.execute(_NEW_THREAD, (thread_id, checkpoint_id, row.status, stamp))
            else:
                moved = conn.execute(_MOVE_HEAD, (checkpoint_id, row.status, stamp, thread_id, expect_head))
            if moved.rowcount != 1:
                actual = conn.execute(_HEAD, (thread_id,)).fetchone()
                raise cas_refused(
                    thread_id, checkpoint_id, expect_head, None if actual is None else actual[0]
                )
            if conn.execute(_INSERT_ROW, values).rowcount != 1:
                raise already_stored(thread_id, checkpoint_id)
            if blobs:
                with conn.cursor() as cur:
                    cur.executemany(_INSERT_BLOB, [(thread_id, k, v) for k, v in blobs.items()])

        self._call(f"storing checkpoint {checkpoint_id!r} of thread {thread_id!r}", work)

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
        latest = {w.task_id: w for w in writes}  # one statement may not upsert a key twice
        rows = [(thread_id, checkpoint_id, w.task_id, w.data, encode_refs(w.refs)) for w in latest.values()]

        def work(conn: psycopg.Connection[TupleRow]) -> None:
            touched = conn.execute(_TOUCH, (stamp, status, thread_id, thread_id, checkpoint_id))
            if touched.rowcount != 1:
                raise unknown_checkpoint(thread_id, checkpoint_id)
            with conn.cursor() as cur:
                if rows:
                    cur.executemany(_INSERT_WRITE, rows)
                if blobs:
                    cur.executemany(_INSERT_BLOB, [(thread_id, k, v) for k, v in blobs.items()])

        self._call(f"storing task results of thread {thread_id!r}", work)

    def get(self, thread_id: str, checkpoint_id: str | None = None) -> CheckpointRow | None:
        """One checkpoint, or the thread's head when `checkpoint_id` is None; None if absent."""
        if checkpoint_id is None:
            sql = f"{_SELECT_ROW} AND checkpoint_id = ({_HEAD})"
            args: tuple[str, ...] = (thread_id, thread_id)
        else:
            sql, args = f"{_SELECT_ROW} AND checkpoint_id = %s", (thread_id, checkpoint_id)
        found = self._read(f"reading a checkpoint of thread {thread_id!r}", sql, args)
        return decode_row(found[0]) if found else None

    def get_writes(self, thread_id: str, checkpoint_id: str) -> dict[str, WriteRow]:
        """The task results stored against a checkpoint, by task id (sorted by task id)."""
        found = self._read(
            f"reading task results of thread {thread_id!r}",
            "SELECT task_id, data, refs FROM actorgraph_writes WHERE thread_id = %s AND checkpoint_id = %s"
            " ORDER BY task_id",
            (thread_id, checkpoint_id),
        )
        return {task_id: WriteRow(task_id, bytes(data), decode_refs(refs)) for task_id, data, refs in found}

    def get_blobs(self, thread_id: str, blob_ids: Iterable[str]) -> dict[str, bytes]:
        """The stored blobs among `blob_ids` (missing ids are left out)."""
        wanted = list(dict.fromkeys(blob_ids))
        if not wanted:
            return {}
        sql = "SELECT blob_id, data FROM actorgraph_blobs WHERE thread_id = %s AND blob_id = ANY(%s)"
        found = dict(self._read(f"reading blobs of thread {thread_id!r}", sql, (thread_id, wanted)))
        return {b: bytes(found[b]) for b in wanted if b in found}

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
        sql, args = history_query("%s", before, limit)
        found = self._read(f"reading the history of thread {thread_id!r}", sql, [thread_id, *args])
        return [decode_row(r) for r in found]

    def threads(self, *, status: str | None = None) -> list[ThreadInfo]:
        """Every thread (with that status, if given), most recently updated first."""
        found = self._read("listing threads", *threads_query("%s", status))
        return [ThreadInfo(*r) for r in found]

    def delete_thread(self, thread_id: str) -> None:
        """Remove a thread: its checkpoints, writes and blobs (nothing happens if it is absent)."""

        def work(conn: psycopg.Connection[TupleRow]) -> None:
            for table in ("threads", "checkpoints", "writes", "blobs"):  # the thread row first: it locks
                conn.execute(f"DELETE FROM actorgraph_{table} WHERE thread_id = %s", (thread_id,))  # noqa: S608

        self._call(f"deleting thread {thread_id!r}", work)

    def prune(self, thread_id: str, *, keep: int) -> int:
        """Delete all but the newest `keep` checkpoints of a thread (the head always stays).

        Writes of deleted checkpoints go too, and every blob of the thread that no
        remaining checkpoint or write refers to.

        Returns:
            How many checkpoints were deleted.
        """
        check_keep(keep)
        key = (thread_id,)

        def work(conn: psycopg.Connection[TupleRow]) -> int:
            head = conn.execute(f"{_HEAD} FOR UPDATE", key).fetchone()  # writers of the thread wait
            if head is None:
                return 0
            ids = [r[0] for r in conn.execute(_ID_OF_ROWS, key)]
            drop = prune_plan(ids, head[0], keep)
            if drop:
                conn.execute(_DELETE_WRITES, (thread_id, drop))
                conn.execute(_DELETE_ROWS, (thread_id, drop))
            refs = [text for (text,) in conn.execute(_REFS, (thread_id, thread_id))]
            unused = unused_blobs(refs, [b for (b,) in conn.execute(_BLOB_IDS, key)])
            if unused:
                conn.execute(_DELETE_BLOBS, (thread_id, unused))
            return len(drop)

        return self._call(f"pruning thread {thread_id!r}", work)

    def close(self) -> None:
        """Close the connection; calling it again does nothing, any other call then fails."""
        with self._lock:
            self._closed = True
            self._drop()
