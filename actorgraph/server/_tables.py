"""The server's own rows, in the checkpointer's SQL database: threads as the API sees them, and runs.

A thread of the API exists before its first run (`threads.create`) and carries
JSON metadata and a status (`idle`, `busy`, `interrupted`, `error`), which the
checkpointer's labels (strings, kept once a checkpoint exists) cannot hold: so
`actorgraph_server_threads` keeps them. Its checkpoints stay where every
front end reads them, in the checkpointer's tables under the same thread id.

A run is a row of `actorgraph_server_runs`. Creating it and marking its thread
`busy` is one transaction that first reads (and on PostgreSQL locks) the
thread's row: two requests for one thread, from any number of server
processes, never both find it free. The rows are read and written through the
checkpointer's own connection and transactions (SQLite `BEGIN IMMEDIATE`,
PostgreSQL `SELECT ... FOR UPDATE`), as the run queue of `actorgraph worker` is.
"""

# ruff: noqa: S608, SLF001 - statements are fixed text with placeholders; the rows use their store's transactions

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

import orjson

from actorgraph._model.errors import ConfigError
from actorgraph.checkpoint._store import now

__all__ = ["BusyError", "RunRow", "Tables", "ThreadRow"]

_SCHEMA: Final = """
CREATE TABLE IF NOT EXISTS actorgraph_server_threads (
    thread_id {key} PRIMARY KEY, metadata {text} NOT NULL, status {text} NOT NULL,
    created_at {real} NOT NULL, updated_at {real} NOT NULL, error {text}
);
CREATE INDEX IF NOT EXISTS actorgraph_server_threads_by_time
    ON actorgraph_server_threads (updated_at DESC, thread_id);
CREATE TABLE IF NOT EXISTS actorgraph_server_runs (
    run_id {key} PRIMARY KEY, thread_id {key} NOT NULL, assistant_id {key} NOT NULL,
    status {text} NOT NULL, metadata {text} NOT NULL, kwargs {text} NOT NULL,
    multitask_strategy {text} NOT NULL, created_at {real} NOT NULL, updated_at {real} NOT NULL
);
CREATE INDEX IF NOT EXISTS actorgraph_server_runs_by_thread
    ON actorgraph_server_runs (thread_id, created_at)
"""
_THREAD: Final = "thread_id, metadata, status, created_at, updated_at, error"
_RUN: Final = (
    "run_id, thread_id, assistant_id, status, metadata, kwargs, multitask_strategy, created_at, updated_at"
)
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


@dataclass(frozen=True, slots=True)
class RunRow:
    """A run as the server keeps it: its thread, assistant, status, metadata and the request's options."""

    run_id: str
    thread_id: str
    assistant_id: str
    status: str
    metadata: dict[str, Any]
    kwargs: dict[str, Any]
    multitask_strategy: str
    created_at: float
    updated_at: float


def _loads(text: Any) -> Any:
    return None if text is None else orjson.loads(text)


def _thread(values: Sequence[Any]) -> ThreadRow:
    thread_id, metadata, status, created, updated, error = values
    return ThreadRow(
        str(thread_id), _loads(metadata) or {}, str(status), float(created), float(updated), _loads(error)
    )


def _run(values: Sequence[Any]) -> RunRow:
    run_id, thread_id, assistant_id, status, metadata, kwargs, strategy, created, updated = values
    return RunRow(
        str(run_id),
        str(thread_id),
        str(assistant_id),
        str(status),
        _loads(metadata) or {},
        _loads(kwargs) or {},
        str(strategy),
        float(created),
        float(updated),
    )


class Tables:
    """The server's threads and runs in one SQL checkpointer's database (tables made on first use)."""

    def __init__(self, store: Any) -> None:
        """Keep the rows in `store`'s database: a `SqliteCheckpointer` or a `PostgresCheckpointer`.

        Raises:
            ConfigError: the checkpointer keeps no SQL database.
        """
        dialect = getattr(store, "dialect", None)
        if dialect is None or not hasattr(store, "_write"):
            msg = (
                f"the server keeps its threads and runs in a SQL database: give it a SqliteCheckpointer "
                f"(--db) or a PostgresCheckpointer (--dsn), not a {type(store).__name__}"
            )
            raise ConfigError(msg)
        self._store = store
        self._m = dialect.mark
        self._lock = " FOR UPDATE" if dialect.name == "PostgreSQL" else ""
        types = {"key": dialect.key, "text": dialect.text, "real": dialect.real}
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

    # -- threads -----------------------------------------------------------------------------------

    def put_thread(self, thread_id: str, metadata: dict[str, Any], *, if_exists: str) -> ThreadRow | None:
        """Create a thread; an existing one is returned as it is (`do_nothing`) or None (`raise`)."""
        m, stamp, text = self._m, now(), orjson.dumps(metadata).decode()

        def work(conn: Any) -> ThreadRow | None:
            found = conn.execute(
                f"SELECT {_THREAD} FROM actorgraph_server_threads WHERE thread_id = {m}", (thread_id,)
            ).fetchone()
            if found is not None:
                return _thread(found) if if_exists == "do_nothing" else None
            conn.execute(
                f"INSERT INTO actorgraph_server_threads ({_THREAD})"
                f" VALUES ({m}, {m}, 'idle', {m}, {m}, NULL)",
                (thread_id, text, stamp, stamp),
            )
            return ThreadRow(thread_id, metadata, "idle", stamp, stamp)

        result: ThreadRow | None = self._write(f"creating thread {thread_id!r}", work)
        return result

    def thread(self, thread_id: str) -> ThreadRow | None:
        """The thread's row, or None."""
        sql = f"SELECT {_THREAD} FROM actorgraph_server_threads WHERE thread_id = {self._m}"
        found = self._read(f"reading thread {thread_id!r}", sql, (thread_id,))
        return _thread(found[0]) if found else None

    def patch_thread(self, thread_id: str, metadata: dict[str, Any]) -> ThreadRow | None:
        """Merge `metadata` into the thread's (a key given again is replaced); None if there is no thread."""
        m = self._m

        def work(conn: Any) -> ThreadRow | None:
            found = conn.execute(
                f"SELECT {_THREAD} FROM actorgraph_server_threads WHERE thread_id = {m}{self._lock}",
                (thread_id,),
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
        """Delete the thread's row and its runs' rows; False if there was none."""
        m = self._m

        def work(conn: Any) -> bool:
            conn.execute(f"DELETE FROM actorgraph_server_runs WHERE thread_id = {m}", (thread_id,))
            gone = conn.execute(f"DELETE FROM actorgraph_server_threads WHERE thread_id = {m}", (thread_id,))
            return bool(gone.rowcount)

        result: bool = self._write(f"deleting thread {thread_id!r}", work)
        return result

    def threads(
        self, *, status: str | None, ids: Sequence[str] | None, sort: tuple[str, str], limit: int
    ) -> list[ThreadRow]:
        """Threads with that status (and among `ids`), sorted by `sort` (column, order), at most `limit`."""
        column, order = sort
        if column not in _SORTS or order not in ("asc", "desc"):
            raise ConfigError(f"cannot sort threads by {column!r} {order!r}")
        where, args = ["1 = 1"], list[Any]()
        if status is not None:
            where.append(f"status = {self._m}")
            args.append(status)
        if ids is not None:
            where.append(f"thread_id IN ({', '.join([self._m] * len(ids))})" if ids else "1 = 0")
            args.extend(ids)
        sql = (
            f"SELECT {_THREAD} FROM actorgraph_server_threads WHERE {' AND '.join(where)}"
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

    # -- runs --------------------------------------------------------------------------------------

    def claim(self, run: RunRow, *, create: bool, metadata: dict[str, Any]) -> RunRow:
        """Record `run` as pending and its thread busy, in one transaction; the thread must be free.

        Args:
            run: the new run.
            create: make the thread first when it does not exist (`if_not_exists="create"`).
            metadata: labels to add to the thread where it has none (its graph and assistant).

        Raises:
            BusyError: the thread has a run pending or running (nothing was written).
            LookupError: the thread does not exist and `create` is False.
        """
        m, stamp = self._m, run.created_at

        def work(conn: Any) -> RunRow:
            row = self._locked_thread(conn, run.thread_id, create=create, stamp=stamp)
            if row.status == "busy":
                msg = (
                    f"thread {run.thread_id} has a run pending or running; wait for it to end, or send "
                    "multitask_strategy 'enqueue', 'interrupt' or 'rollback'"
                )
                raise BusyError(msg)
            labels = orjson.dumps({**metadata, **row.metadata}).decode()
            conn.execute(
                f"UPDATE actorgraph_server_threads SET status = 'busy', metadata = {m}, updated_at = {m}"
                f" WHERE thread_id = {m}",
                (labels, stamp, run.thread_id),
            )
            conn.execute(
                f"INSERT INTO actorgraph_server_runs ({_RUN}) VALUES ({', '.join([m] * 9)})",
                (
                    run.run_id,
                    run.thread_id,
                    run.assistant_id,
                    run.status,
                    orjson.dumps(run.metadata).decode(),
                    orjson.dumps(run.kwargs).decode(),
                    run.multitask_strategy,
                    stamp,
                    stamp,
                ),
            )
            return run

        result: RunRow = self._write(f"creating a run on thread {run.thread_id!r}", work)
        return result

    def _locked_thread(self, conn: Any, thread_id: str, *, create: bool, stamp: float) -> ThreadRow:
        m = self._m
        if create:
            conn.execute(
                f"INSERT INTO actorgraph_server_threads ({_THREAD})"
                f" VALUES ({m}, '{{}}', 'idle', {m}, {m}, NULL)"
                " ON CONFLICT (thread_id) DO NOTHING",
                (thread_id, stamp, stamp),
            )
        found = conn.execute(
            f"SELECT {_THREAD} FROM actorgraph_server_threads WHERE thread_id = {m}{self._lock}", (thread_id,)
        ).fetchone()
        if found is None:
            raise LookupError(thread_id)
        return _thread(found)

    def set_run(self, run_id: str, status: str) -> None:
        """Record the run's status."""
        m = self._m
        sql = f"UPDATE actorgraph_server_runs SET status = {m}, updated_at = {m} WHERE run_id = {m}"
        self._write(
            f"recording the status of run {run_id}", lambda conn: conn.execute(sql, (status, now(), run_id))
        )

    def finish(self, run: RunRow, status: str, thread_status: str, error: Any = None) -> None:
        """Record how the run ended and what its thread is now, in one transaction."""
        m, stamp = self._m, now()
        text = None if error is None else orjson.dumps(error).decode()

        def work(conn: Any) -> None:
            conn.execute(
                f"UPDATE actorgraph_server_runs SET status = {m}, updated_at = {m} WHERE run_id = {m}",
                (status, stamp, run.run_id),
            )
            conn.execute(
                f"UPDATE actorgraph_server_threads SET status = {m}, error = {m}, updated_at = {m}"
                f" WHERE thread_id = {m}",
                (thread_status, text, stamp, run.thread_id),
            )

        self._write(f"recording the end of run {run.run_id}", work)

    def run(self, thread_id: str, run_id: str) -> RunRow | None:
        """The run's row, if it belongs to that thread."""
        sql = f"SELECT {_RUN} FROM actorgraph_server_runs WHERE run_id = {self._m} AND thread_id = {self._m}"
        found = self._read(f"reading run {run_id}", sql, (run_id, thread_id))
        return _run(found[0]) if found else None

    def runs(self, thread_id: str, *, status: str | None, limit: int, offset: int) -> list[RunRow]:
        """The thread's runs, newest first, one page of them."""
        m = self._m
        where, args = f"thread_id = {m}", [thread_id]
        if status is not None:
            where, args = f"{where} AND status = {m}", [*args, status]
        sql = (
            f"SELECT {_RUN} FROM actorgraph_server_runs WHERE {where}"
            f" ORDER BY created_at DESC, run_id LIMIT {m} OFFSET {m}"
        )
        return [
            _run(r)
            for r in self._read(f"listing the runs of thread {thread_id!r}", sql, (*args, limit, offset))
        ]

    def delete_run(self, thread_id: str, run_id: str) -> bool:
        """Delete a run's row; False if the thread has no such run."""
        m = self._m
        sql = f"DELETE FROM actorgraph_server_runs WHERE run_id = {m} AND thread_id = {m}"
        result: bool = self._write(
            f"deleting run {run_id}", lambda conn: bool(conn.execute(sql, (run_id, thread_id)).rowcount)
        )
        return result
