"""The server's own rows, in the checkpointer's SQL database.

Threads as the API sees them, and the parts of resumable streams.

A thread of the API exists before its first run (`threads.create`) and carries
JSON metadata and a status (`idle`, `busy`, `interrupted`, `error`), which the
checkpointer's labels (strings, kept once a checkpoint exists) cannot hold: so
`actorgraph_server_threads` keeps them. Its checkpoints stay where every
front end reads them, in the checkpointer's tables under the same thread id.

Runs are rows of the run queue (`actorgraph_queue`, `_queued.py`). The steps
here that take a connection (`thread_in`, `busy_in`, `ended_in`) run inside the
queue's transactions: creating a run and marking its thread `busy` is one
transaction, and so is ending it and recording the thread's new status. The
parts of a run started with `stream_resumable` are kept in
`actorgraph_server_events` (`_resumable.py`), so a client joining from any
server process can read them.
"""

# ruff: noqa: S608, SLF001 - statements are fixed text with placeholders; the rows use their store's transactions

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

import orjson

from actorgraph._model.errors import ConfigError
from actorgraph.checkpoint._store import now
from actorgraph.server._owners import Filter

__all__ = ["BusyError", "Tables", "ThreadRow", "sql_dialect"]

_SCHEMA: Final = """
CREATE TABLE IF NOT EXISTS actorgraph_server_threads (
    thread_id {key} PRIMARY KEY, metadata {text} NOT NULL, status {text} NOT NULL,
    created_at {real} NOT NULL, updated_at {real} NOT NULL, error {text}
);
CREATE INDEX IF NOT EXISTS actorgraph_server_threads_by_time
    ON actorgraph_server_threads (updated_at DESC, thread_id);
CREATE TABLE IF NOT EXISTS actorgraph_server_events (
    run_id {key} NOT NULL, seq {int} NOT NULL, thread_id {key} NOT NULL, name {text} NOT NULL,
    data {blob} NOT NULL, created_at {real} NOT NULL, PRIMARY KEY (run_id, seq)
);
CREATE INDEX IF NOT EXISTS actorgraph_server_events_by_time ON actorgraph_server_events (created_at)
"""
_THREAD: Final = "thread_id, metadata, status, created_at, updated_at, error"
_SORTS: Final = {"thread_id", "status", "created_at", "updated_at"}


class BusyError(ConfigError):
    """A run was refused because its thread has a run pending or running (multitask_strategy="reject")."""


@dataclass(frozen=True, slots=True)
class ThreadRow:
    """A thread as the server keeps it: metadata, status, times, and the error of its last run."""

    thread_id: str
    metadata: dict[str, Any]
    status: str
    created_at: float
    updated_at: float
    error: Any = None


def _loads(text: Any) -> Any:
    return None if text is None else orjson.loads(text)


def _thread(values: Sequence[Any]) -> ThreadRow:
    thread_id, metadata, status, created, updated, error = values
    return ThreadRow(
        str(thread_id), _loads(metadata) or {}, str(status), float(created), float(updated), _loads(error)
    )


def sql_dialect(store: Any, what: str) -> Any:
    """The SQL dialect of `store`, a `SqliteCheckpointer` or `PostgresCheckpointer` (`what` keeps rows there).

    Raises:
        ConfigError: the checkpointer keeps no SQL database.
    """
    dialect = getattr(store, "dialect", None)
    if dialect is None or not hasattr(store, "_write"):
        msg = (
            f"{what} in a SQL database: give a SqliteCheckpointer (--db) or a PostgresCheckpointer "
            f"(--dsn), not a {type(store).__name__}"
        )
        raise ConfigError(msg)
    return dialect


class Tables:
    """The server's threads and runs in one SQL checkpointer's database (tables made on first use)."""

    def __init__(self, store: Any) -> None:
        """Keep the rows in `store`'s database: a `SqliteCheckpointer` or a `PostgresCheckpointer`.

        Raises:
            ConfigError: the checkpointer keeps no SQL database.
        """
        dialect = sql_dialect(store, "the server keeps its threads and runs")
        self._store = store
        self._m = dialect.mark
        self._dialect = dialect.name
        self._lock = " FOR UPDATE" if dialect.name == "PostgreSQL" else ""
        types = {"key": dialect.key, "text": dialect.text, "real": dialect.real, "int": dialect.int}
        types["blob"] = dialect.blob
        ddl = [s for s in _SCHEMA.format(**types).split(";") if s.strip()]
        lock = dialect.lock_schema

        def create(conn: Any) -> None:
            if lock:
                conn.execute(lock)
            for statement in ddl:
                conn.execute(statement)

        store._write("creating the server's tables", create)

    def _write(self, op: str, work: Any) -> Any:
        return self._store._write(op, work)

    def _read(self, op: str, sql: str, args: Sequence[Any]) -> list[Any]:
        return list(self._store._read(op, sql, args))

    def _condition(self, where: Filter | None) -> tuple[str, list[Any]]:
        """The filter of an auth handler as a condition on the threads' metadata, and its parameters."""
        if where is None:
            return "1 = 1", []
        sql, args = where.sql(self._dialect, "actorgraph_server_threads.metadata")
        return f"({sql})", args

    def _owned(self, where: Filter | None) -> tuple[str, list[Any]]:
        """` AND` that condition ("" without a filter), and its parameters."""
        if where is None:
            return "", []
        sql, args = self._condition(where)
        return f" AND {sql}", args

    # -- threads -----------------------------------------------------------------------------------

    def put_thread(
        self, thread_id: str, metadata: dict[str, Any], *, if_exists: str, where: Filter | None = None
    ) -> ThreadRow | None:
        """Create a thread; an existing one is returned as it is (`do_nothing`, meeting `where`) or None."""
        m, stamp, text = self._m, now(), orjson.dumps(metadata).decode()
        owned, args = self._condition(where)

        def work(conn: Any) -> ThreadRow | None:
            found = conn.execute(
                f"SELECT {_THREAD}, {owned} FROM actorgraph_server_threads WHERE thread_id = {m}",
                (*args, thread_id),
            ).fetchone()
            if found is not None:
                return _thread(found[:-1]) if if_exists == "do_nothing" and found[-1] else None
            conn.execute(
                f"INSERT INTO actorgraph_server_threads ({_THREAD})"
                f" VALUES ({m}, {m}, 'idle', {m}, {m}, NULL)",
                (thread_id, text, stamp, stamp),
            )
            return ThreadRow(thread_id, metadata, "idle", stamp, stamp)

        result: ThreadRow | None = self._write(f"creating thread {thread_id!r}", work)
        return result

    def thread(self, thread_id: str, where: Filter | None = None) -> ThreadRow | None:
        """The thread's row, or None (also when it does not meet `where`, an auth handler's filter)."""
        owned, args = self._owned(where)
        sql = f"SELECT {_THREAD} FROM actorgraph_server_threads WHERE thread_id = {self._m}{owned}"
        found = self._read(f"reading thread {thread_id!r}", sql, (thread_id, *args))
        return _thread(found[0]) if found else None

    def patch_thread(
        self, thread_id: str, metadata: dict[str, Any], where: Filter | None = None
    ) -> ThreadRow | None:
        """Merge `metadata` into the thread's (a key given again is replaced); None if none meets `where`."""
        m = self._m
        owned, args = self._owned(where)

        def work(conn: Any) -> ThreadRow | None:
            found = conn.execute(
                f"SELECT {_THREAD} FROM actorgraph_server_threads WHERE thread_id = {m}{owned}{self._lock}",
                (thread_id, *args),
            ).fetchone()
            if found is None:
                return None
            row = _thread(found)
            merged, stamp = {**row.metadata, **metadata}, now()
            conn.execute(
                f"UPDATE actorgraph_server_threads SET metadata = {m}, updated_at = {m}"
                f" WHERE thread_id = {m}",
                (orjson.dumps(merged).decode(), stamp, thread_id),
            )
            return ThreadRow(thread_id, merged, row.status, row.created_at, stamp, row.error)

        result: ThreadRow | None = self._write(f"changing thread {thread_id!r}", work)
        return result

    def delete_thread(self, thread_id: str) -> bool:
        """Delete the thread's row and the kept parts of its runs' streams; False if there was none."""
        m = self._m

        def work(conn: Any) -> bool:
            conn.execute(f"DELETE FROM actorgraph_server_events WHERE thread_id = {m}", (thread_id,))
            gone = conn.execute(f"DELETE FROM actorgraph_server_threads WHERE thread_id = {m}", (thread_id,))
            return bool(gone.rowcount)

        result: bool = self._write(f"deleting thread {thread_id!r}", work)
        return result

    def threads(
        self,
        *,
        status: str | None,
        ids: Sequence[str] | None,
        sort: tuple[str, str],
        limit: int,
        where: Filter | None = None,
    ) -> list[ThreadRow]:
        """Threads with that status (among `ids`, meeting `where`), sorted by `sort`, at most `limit`."""
        column, order = sort
        if column not in _SORTS or order not in ("asc", "desc"):
            raise ConfigError(f"cannot sort threads by {column!r} {order!r}")
        owned, args = self._condition(where)
        where_sql = [owned]
        if status is not None:
            where_sql.append(f"status = {self._m}")
            args.append(status)
        if ids is not None:
            where_sql.append(f"thread_id IN ({', '.join([self._m] * len(ids))})" if ids else "1 = 0")
            args.extend(ids)
        sql = (
            f"SELECT {_THREAD} FROM actorgraph_server_threads WHERE {' AND '.join(where_sql)}"
            f" ORDER BY {column} {order.upper()}, thread_id LIMIT {self._m}"
        )
        return [_thread(r) for r in self._read("listing threads", sql, (*args, limit))]

    def set_thread(self, thread_id: str, status: str, error: Any = None) -> None:
        """Record the thread's status (and its last run's error, or none)."""
        m, text = self._m, None if error is None else orjson.dumps(error).decode()
        sql = (
            f"UPDATE actorgraph_server_threads SET status = {m}, error = {m}, updated_at = {m}"
            f" WHERE thread_id = {m}"
        )
        self._write(
            f"recording the status of thread {thread_id!r}",
            lambda conn: conn.execute(sql, (status, text, now(), thread_id)),
        )

    # -- steps inside the queue's transactions ---------------------------------------------------

    def thread_in(  # noqa: PLR0913 - the thread, and how to make or find it: keyword-only
        self,
        conn: Any,
        thread_id: str,
        *,
        create: bool,
        stamp: float,
        metadata: dict[str, Any] | None = None,
        where: Filter | None = None,
    ) -> ThreadRow:
        """The thread's row (made first with `metadata` when `create`: `if_not_exists="create"`).

        Raises:
            LookupError: the thread does not exist (or does not meet `where`) and `create` is False.
        """
        m = self._m
        if create:
            conn.execute(
                f"INSERT INTO actorgraph_server_threads ({_THREAD})"
                f" VALUES ({m}, {m}, 'idle', {m}, {m}, NULL)"
                " ON CONFLICT (thread_id) DO NOTHING",
                (thread_id, orjson.dumps(metadata or {}).decode(), stamp, stamp),
            )
        owned, args = self._owned(where)
        found = conn.execute(
            f"SELECT {_THREAD} FROM actorgraph_server_threads WHERE thread_id = {m}{owned}",
            (thread_id, *args),
        ).fetchone()
        if found is None:
            raise LookupError(thread_id)
        return _thread(found)

    def busy_in(self, conn: Any, row: ThreadRow, served: Any, stamp: float) -> None:
        """Mark the thread busy (a run was created), labelled with the run's graph where it has no label."""
        m, labels = self._m, {"graph_id": served.name, "assistant_id": served.assistant_id}
        conn.execute(
            f"UPDATE actorgraph_server_threads SET status = 'busy', metadata = {m}, updated_at = {m}"
            f" WHERE thread_id = {m}",
            (orjson.dumps({**labels, **row.metadata}).decode(), stamp, row.thread_id),
        )

    def ended_in(self, conn: Any, thread_id: str, status: str, error: Any = None) -> None:
        """Record the thread's status once a run ended (and that run's error, or none)."""
        m, text = self._m, None if error is None else orjson.dumps(error).decode()
        conn.execute(
            f"UPDATE actorgraph_server_threads SET status = {m}, error = {m}, updated_at = {m}"
            f" WHERE thread_id = {m}",
            (status, text, now(), thread_id),
        )
