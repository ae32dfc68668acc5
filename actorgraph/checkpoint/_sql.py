"""One SQL store for SQLite and PostgreSQL: every statement and every method, written once.

`SqlStore` holds the whole protocol (its writes in `SqlWrites`, its answers
in `SqlAnswers`) and the schema code, in standard SQL both databases run
(`INSERT ... ON CONFLICT`, `CAST(... AS text)`). A dialect subclass supplies
only what truly differs: its placeholder and column types (`Dialect`), how a
connection runs a call in a transaction or outside one, how a list of ids is
matched (`= ANY(%s)` or chunked `IN (?, ...)`), the statements that lock a
thread or the schema, and its error messages.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypeVar

from actorgraph._model.errors import CheckpointError
from actorgraph._model.records import NS
from actorgraph.checkpoint._dialect import Dialect, Statements, Step
from actorgraph.checkpoint._protocol import SCHEMA_VERSION, CheckpointRow, Serializer, ThreadInfo, WriteRow
from actorgraph.checkpoint._sql_answers import SqlAnswers
from actorgraph.checkpoint._sql_writes import SqlWrites
from actorgraph.checkpoint._store import (
    META_VERSION_KEY,
    StoreBase,
    check_keep,
    check_limit,
    check_schema,
    decode_refs,
    decode_row,
    prune_plan,
    unused_blobs,
)

__all__ = ["Conn", "SqlStore", "history_query", "threads_query"]

_T = TypeVar("_T")

Conn = Any
"""A DB-API connection (`sqlite3.Connection` or `psycopg.Connection`): `execute(sql, args)`, `cursor()`."""


class SqlStore(SqlWrites, SqlAnswers, StoreBase):
    """The checkpointer protocol on a SQL database; subclasses connect and run calls.

    Subclasses set `dialect` and `sql` (`Statements.of(dialect)`) and implement
    `_transaction`, `_query` and `_matching`; `where` names the store in messages.
    """

    dialect: Dialect
    sql: Statements

    def __init__(self, serializer: Serializer | None, *, where: str, readonly: bool = False) -> None:
        super().__init__(serializer)
        self._where = where
        self.readonly = readonly

    # -- what a dialect implements ---------------------------------------------------------

    def _transaction(self, op: str, work: Callable[[Conn], _T]) -> _T:
        """Run `work(conn)` in one transaction; store errors become `CheckpointError` naming `op`."""
        raise NotImplementedError

    def _query(self, op: str, work: Callable[[Conn], _T]) -> _T:
        """Run `work(conn)` outside a transaction (reads)."""
        raise NotImplementedError

    def _matching(self, column: str, ids: Sequence[str]) -> list[tuple[str, list[Any]]]:
        """Conditions that match `column` to `ids` (one or several, each with its arguments)."""
        raise NotImplementedError

    def _sent_at_once(self, op: str, steps: Sequence[Step]) -> None:
        """Run `steps` in one transaction, sent together (one round trip where the database is remote).

        Nothing is read back before the end, so every condition of the batch is
        checked by its SQL (see `Refused`), which the dialect raises when a
        statement broke a NOT NULL or UNIQUE constraint; nothing is stored then.
        """
        raise NotImplementedError

    # -- shared machinery ----------------------------------------------------------------------

    def _write(self, op: str, work: Callable[[Conn], _T]) -> _T:
        if self.readonly:
            raise CheckpointError(
                f"{self.dialect.name} store {self._where} is open read-only, so {op} was refused; "
                f"open it without readonly=True (and with write access to the file) to change it."
            )
        return self._transaction(op, work)

    def _batch(self, op: str, steps: Sequence[Step]) -> None:
        if self.readonly:
            self._write(op, lambda _conn: None)  # refused, with the read-only store's message
        self._sent_at_once(op, [step for step in steps if step[1] or not step[2]])

    def _read(self, op: str, sql: str, args: Sequence[Any]) -> list[Any]:
        return self._query(op, lambda conn: conn.execute(sql, args).fetchall())

    @staticmethod
    def _many(conn: Conn, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        if rows:
            cursor = conn.cursor()
            try:
                cursor.executemany(sql, rows)
            finally:
                cursor.close()

    def _recorded_version(self, conn: Conn) -> object | None:
        """The schema version the database records, or None when it has no actorgraph tables."""
        if not self._has_table(conn, "actorgraph_meta"):
            return None
        version = conn.execute(self.sql.meta, (META_VERSION_KEY,)).fetchone()
        return None if version is None else version[0]

    def _has_table(self, conn: Conn, name: str) -> bool:
        found = conn.execute(self.dialect.table_exists, (name,)).fetchone()
        return found is not None and found[0] is not None

    def _create_schema(self, conn: Conn) -> None:
        """Check the recorded schema version, then create what is missing (idempotent)."""
        if self.dialect.lock_schema:
            conn.execute(self.dialect.lock_schema)
        version = self._recorded_version(conn)
        if version is not None:
            check_schema(f"the {self.dialect.name} database {self._where}", version)
        for statement in self.sql.schema:
            conn.execute(statement)
        conn.execute(self.sql.new_meta, (META_VERSION_KEY, str(SCHEMA_VERSION)))

    def _check_readable(self, conn: Conn) -> None:
        """Check the recorded schema version without writing (a read-only store)."""
        version = self._recorded_version(conn)
        if version is None:
            raise CheckpointError(
                f"the {self.dialect.name} database {self._where} has no actorgraph tables, so there "
                f"is nothing to read; open it once without readonly=True to create them."
            )
        check_schema(f"the {self.dialect.name} database {self._where}", version)
        # a database written before answers and metadata were stored has neither: read them as empty
        self.answer_tables = self._has_table(conn, "actorgraph_answers")

    @property
    def schema_version(self) -> int:
        """The schema version recorded in the database."""
        rows = self._read("reading the schema version", self.sql.meta, (META_VERSION_KEY,))
        return int(rows[0][0])

    # -- the protocol -----------------------------------------------------------------------------

    def get(self, thread_id: str, checkpoint_id: str | None = None) -> CheckpointRow | None:
        """One checkpoint, or the thread's head when `checkpoint_id` is None; None if absent."""
        if checkpoint_id is None:
            sql, args = self.sql.select_head, (thread_id, thread_id)
        else:
            sql, args = self.sql.select_one, (thread_id, checkpoint_id)
        found = self._read(f"reading a checkpoint of thread {thread_id!r}", sql, args)
        return decode_row(found[0]) if found else None

    def get_writes(self, thread_id: str, checkpoint_id: str) -> dict[str, WriteRow]:
        """The task results stored against a checkpoint, by task id (sorted by task id)."""
        found = self._read(
            f"reading task results of thread {thread_id!r}", self.sql.writes, (thread_id, checkpoint_id)
        )
        return {task_id: WriteRow(task_id, bytes(data), decode_refs(refs)) for task_id, data, refs in found}

    def get_blobs(self, thread_id: str, blob_ids: Iterable[str]) -> dict[str, bytes]:
        """The stored blobs among `blob_ids` (missing ids are left out)."""
        wanted = list(dict.fromkeys(blob_ids))
        if not wanted:
            return {}
        m = self.dialect.mark
        found: dict[str, bytes] = {}
        for condition, args in self._matching("blob_id", wanted):
            sql = f"SELECT blob_id, data FROM actorgraph_blobs WHERE thread_id = {m} AND {condition}"  # noqa: S608
            found.update(self._read(f"reading blobs of thread {thread_id!r}", sql, (thread_id, *args)))
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
        check_limit(limit)
        sql, args = history_query(
            self.sql.select_row, self.dialect.mark, thread_id, limit=limit, before=before
        )
        found = self._read(f"reading the history of thread {thread_id!r}", sql, args)
        return [decode_row(r) for r in found]

    def threads(
        self, *, status: str | None = None, limit: int | None = None, after: ThreadInfo | None = None
    ) -> list[ThreadInfo]:
        """The threads (with that status, if given), most recently updated first, a page at a time.

        The threads of subgraphs' runs (their ids contain `|`) are not listed.
        A page is read in the order of an index (`actorgraph_threads_by_status`
        or `actorgraph_threads_by_time`), so its cost does not grow with the
        store. See `Checkpointer.threads` for `limit` and `after`.
        """
        check_limit(limit, "threads")
        sql, args = threads_query(self.dialect.mark, status=status, limit=limit, after=after)
        return [ThreadInfo(*r) for r in self._read("listing threads", sql, args)]

    def thread_counts(self) -> dict[str, int]:
        """How many threads have each status (subgraphs' runs left out, as `threads()` leaves them).

        One `GROUP BY` that the index `actorgraph_threads_by_status` can answer
        alone (it holds every column read); nothing is decoded. It still counts
        every thread: a store of a million threads scans a million index entries.
        """
        found = self._read("counting threads", self.sql.thread_counts, (f"%{NS}%",))
        return {status: int(count) for status, count in found}

    def delete_thread(self, thread_id: str) -> None:
        """Remove a thread: its checkpoints, writes and blobs, and its subgraphs' threads (`thread|...`).

        A run of it queued for workers goes too (no worker starts it again).
        Nothing happens if it is absent.
        """
        m, prefix = self.dialect.mark, thread_id + NS
        args = (thread_id, len(prefix), prefix)

        def work(conn: Conn) -> None:
            for table in (
                "threads",
                "checkpoints",
                "writes",
                "blobs",
                "answers",
                "metadata",
            ):  # row first: locks
                where = f"thread_id = {m} OR substr(thread_id, 1, {m}) = {m}"
                conn.execute(f"DELETE FROM actorgraph_{table} WHERE {where}", args)  # noqa: S608
            if self._has_table(conn, "actorgraph_queue"):  # made by the first submit
                conn.execute(f"DELETE FROM actorgraph_queue WHERE thread_id = {m}", (thread_id,))  # noqa: S608

        self._write(f"deleting thread {thread_id!r}", work)

    def prune(self, thread_id: str, *, keep: int) -> int:
        """Delete all but the newest `keep` checkpoints of a thread (the head always stays).

        Writes of deleted checkpoints go too, and every blob of the thread (state
        versions and their parts) that no remaining checkpoint or write refers to.

        Returns:
            How many checkpoints were deleted.
        """
        check_keep(keep)
        key, sql = (thread_id,), self.sql

        def work(conn: Conn) -> int:
            head = conn.execute(sql.head + self.dialect.lock_thread, key).fetchone()  # writers wait
            if head is None:
                return 0
            drop = prune_plan([r[0] for r in conn.execute(sql.ids_of_rows, key)], head[0], keep)
            self._delete(conn, thread_id, "writes", "checkpoint_id", drop)
            self._delete(conn, thread_id, "answers", "checkpoint_id", drop)
            self._delete(conn, thread_id, "checkpoints", "checkpoint_id", drop)
            refs = [text for (text,) in conn.execute(sql.refs, (thread_id, thread_id))]
            unused = unused_blobs(refs, [b for (b,) in conn.execute(sql.blob_ids, key)])
            self._delete(conn, thread_id, "blobs", "blob_id", unused)
            return len(drop)

        return self._write(f"pruning thread {thread_id!r}", work)

    def _delete(self, conn: Conn, thread_id: str, table: str, column: str, ids: Sequence[str]) -> None:
        m = self.dialect.mark
        for condition, args in self._matching(column, ids) if ids else ():
            sql = f"DELETE FROM actorgraph_{table} WHERE thread_id = {m} AND {condition}"  # noqa: S608
            conn.execute(sql, (thread_id, *args))


def threads_query(
    m: str, *, status: str | None, limit: int | None, after: ThreadInfo | None
) -> tuple[str, list[Any]]:
    """The statement (with placeholder `m`) and arguments of one page of `threads()`.

    It reads `actorgraph_threads_by_status` (with a status) or
    `actorgraph_threads_by_time` in order; `after` is a range of that index
    (keyset), never an offset counted through.
    """
    sql = f"SELECT thread_id, head, status, updated_at FROM actorgraph_threads WHERE thread_id NOT LIKE {m}"  # noqa: S608
    args: list[Any] = [f"%{NS}%"]
    if status is not None:
        sql += f" AND status = {m}"
        args.append(status)
    if after is not None:
        sql += f" AND updated_at <= {m} AND NOT (updated_at = {m} AND thread_id <= {m})"
        args += [after.updated_at, after.updated_at, after.thread_id]
    sql += " ORDER BY updated_at DESC, thread_id"
    if limit is not None:
        sql += f" LIMIT {m}"
        args.append(limit)
    return sql, args


def history_query(
    select_row: str, m: str, thread_id: str, *, limit: int | None, before: str | None
) -> tuple[str, list[Any]]:
    """The statement (with placeholder `m`) and arguments of one page of `history()`.

    It reads the primary key of `actorgraph_checkpoints` backwards from `before`
    (or from the newest), so a page costs the same however long the thread is.
    """
    sql, args = select_row, list[Any]([thread_id])
    if before is not None:
        sql += f" AND checkpoint_id < {m}"
        args.append(before)
    sql += " ORDER BY checkpoint_id DESC"
    if limit is not None:
        sql += f" LIMIT {m}"
        args.append(limit)
    return sql, args
