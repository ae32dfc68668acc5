"""A checkpointer that stores runs in PostgreSQL (psycopg 3, installed with `actorgraph[postgres]`).

One connection, guarded by a lock, serves the process; other processes may
share the database. Moving a head is a compare-and-swap in SQL (`UPDATE ...
WHERE head = ...`, or an insert that does nothing when another writer created
the thread first), so two writers never both commit a step. The SQL itself is
shared with the SQLite store (`_sql.py`); this module connects, bounds every
wait, and reconnects.

A server that stops answering (frozen, overloaded, cut off by a network
partition) never hangs a run: every wait for the server is bounded on the
client (connect, then each statement and each commit), and so is the wait for
the connection behind another call; the server cancels statements and idle
transactions of its own; TCP keepalives notice a peer that vanished, and the
TCP user timeout drops a connection whose sent data goes unacknowledged. A call
that fails because the connection was lost or timed out raises
`CheckpointError`; the next call reconnects. psycopg is imported only when a
`PostgresCheckpointer` is made.
"""

from __future__ import annotations

import contextlib
import functools
import math
import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from actorgraph._model.errors import CheckpointError
from actorgraph.checkpoint._dialect import Dialect, Refused, Statements, Step
from actorgraph.checkpoint._protocol import Serializer
from actorgraph.checkpoint._sql import SqlStore

if TYPE_CHECKING:
    import psycopg
    from psycopg.rows import TupleRow

__all__ = ["PostgresCheckpointer"]

_T = TypeVar("_T")

_SCHEMA_LOCK = 0x6163746F72677270  # advisory lock key ("actorgrp") held while creating the schema
_GRACE = 1.0  # seconds the client waits beyond the server's own statement timeout
_KEEPALIVE_INTERVAL = 2  # seconds between keepalive probes once the first went unanswered
_KEEPALIVE_COUNT = 3  # unanswered probes before the kernel drops the connection

_DIALECT = Dialect(
    name="PostgreSQL",
    mark="%s",
    key='text COLLATE "C"',
    text="text",
    real="double precision",
    int="bigint",
    blob="bytea",
    lock_thread=" FOR UPDATE",  # writers of the thread wait for the prune
    lock_schema=f"SELECT pg_advisory_xact_lock({_SCHEMA_LOCK})",
    table_exists="SELECT to_regclass(%s)",
)


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


@functools.cache
def _bounded_classes() -> tuple[type[psycopg.Connection[Any]], type[Exception]]:
    """A psycopg connection whose every wait for the server is bounded, and its timeout error.

    The bound is the connection's `answer_within` (seconds). When a wait ends
    unanswered the connection is closed on the spot: it is in the middle of the
    protocol, so it cannot be used again.
    """
    import psycopg  # noqa: PLC0415 - optional dependency
    from psycopg.errors import _WaitTimeout  # noqa: PLC0415 - the wait functions' own timeout

    class NoAnswerError(psycopg.OperationalError):
        """The server did not answer in time; the connection was closed."""

    class BoundedConnection(psycopg.Connection[Any]):
        answer_within = 31.0

        def wait(self, gen: Any, interval: float = 0.1, timeout: float | None = None) -> Any:
            try:
                return super().wait(gen, interval=interval, timeout=timeout or self.answer_within)
            except _WaitTimeout:
                self.pgconn.finish()
                raise NoAnswerError(f"the server did not answer within {self.answer_within:g} s") from None

    return BoundedConnection, NoAnswerError


class PostgresCheckpointer(SqlStore):
    """Stores runs in a PostgreSQL database; safe to use from many threads and processes.

    The tables (`actorgraph_*`) are created on first use, under an advisory
    lock so processes starting together do not race. Use it as a context
    manager (`with PostgresCheckpointer(dsn) as cp:`) or call `close()`.

    Every wait is bounded, so a server that stops answering turns into a
    `CheckpointError` (the run stays resumable) instead of a hang.

    Args:
        dsn: a libpq connection string or URI ("postgresql://user@host/db").
        serializer: encodes the engine's records; None for `MsgpackSerializer()`.
        connect_timeout: seconds to wait for the server when (re)connecting
            (libpq counts whole seconds, at least 2).
        statement_timeout: seconds a statement may run: the server cancels it
            after that, and the client gives up waiting one second later (the
            bound when the server is frozen or cut off).
        idle_timeout: seconds the server keeps a transaction that went idle
            (its client vanished mid-call) before ending it and its locks.
        keepalive: seconds of silence on the connection before TCP keepalive
            probes start (then every 2 s, 3 unanswered probes drop it); None
            turns keepalives off.
        tcp_user_timeout: seconds data sent to the server may go unacknowledged
            before the kernel drops the connection (a network partition in the
            middle of a call; libpq's `tcp_user_timeout`, in milliseconds there);
            None leaves the system's default (about 15 minutes).

    Raises:
        CheckpointError: psycopg is not installed, the server cannot be reached,
            or the database was written by a newer actorgraph.
    """

    dialect = _DIALECT
    sql = Statements.of(_DIALECT)

    def __init__(  # noqa: PLR0913 - the DSN, the serializer and five bounds, all keyword-only
        self,
        dsn: str,
        serializer: Serializer | None = None,
        *,
        connect_timeout: float = 5.0,
        statement_timeout: float = 30.0,
        idle_timeout: float = 60.0,
        keepalive: float | None = 10.0,
        tcp_user_timeout: float | None = 20.0,
    ) -> None:
        _require_psycopg()
        super().__init__(serializer, where=_describe(dsn))
        self._dsn = dsn
        self._bound = statement_timeout + _GRACE
        self._options = _connect_options(
            dsn,
            connect=connect_timeout,
            statement=statement_timeout,
            idle=idle_timeout,
            keepalive=keepalive,
            user=tcp_user_timeout,
        )
        # a call behind another one waits at most for that one's bound (a reconnect, then a statement)
        self._turn = self._bound + self._options["connect_timeout"]
        self._lock = threading.Lock()
        self._conn: psycopg.Connection[TupleRow] | None = None
        self._closed = False
        try:
            self._transaction("creating the schema", self._create_schema)
        except BaseException:
            self.close()
            raise

    def _connection(self) -> psycopg.Connection[TupleRow]:
        conn = self._conn
        if conn is not None and not conn.closed and not conn.broken:
            return conn
        self._drop()
        conn = _bounded_classes()[0].connect(self._dsn, autocommit=True, **self._options)
        conn.answer_within = self._bound  # type: ignore[attr-defined]
        self._conn = conn
        return conn

    def _drop(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            with contextlib.suppress(Exception):
                conn.close()

    def _call(self, op: str, work: Callable[[psycopg.Connection[TupleRow]], _T], *, transaction: bool) -> _T:
        import psycopg  # noqa: PLC0415 - optional dependency

        if not self._lock.acquire(timeout=self._turn):
            raise self._busy(op)
        try:
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
                raise self._failed(op, exc) from exc
            finally:
                if self._closed:  # close() gave up waiting for this call: it lets go of the connection
                    self._drop()
        finally:
            self._lock.release()

    def _busy(self, op: str) -> CheckpointError:
        return CheckpointError(
            f"PostgreSQL store {self._where}: {op} failed: the store's connection stayed busy with "
            f"another call for {self._turn:g} s (its bound). What to do: the server is frozen, "
            "overloaded or cut off by the network; check the server and the network. The next call "
            "reconnects by itself, and the run stays resumable: invoke(None, thread_id=...) continues it."
        )

    def _failed(self, op: str, exc: Exception) -> CheckpointError:
        import psycopg  # noqa: PLC0415 - optional dependency

        lost = isinstance(exc, psycopg.OperationalError) or self._conn is None or self._conn.broken
        if lost:
            self._drop()  # the next call reconnects
        resumable = "The next call reconnects by itself, and the run stays resumable"
        if isinstance(exc, _bounded_classes()[1]):
            hint = (
                "the server is frozen, overloaded or cut off by the network; check the server and "
                f"the network. {resumable}: invoke(None, thread_id=...) continues it"
            )
        elif isinstance(exc, psycopg.errors.QueryCanceled):
            hint = (
                f"the statement ran past the statement timeout ({self._bound - _GRACE:g} s): the server "
                "is overloaded or the statement is slow; retry, or give PostgresCheckpointer a longer "
                "statement_timeout=. The run stays resumable"
            )
        elif lost:
            hint = (
                "the server could not be reached or the connection was lost; check that "
                f"the server is up and the DSN is right. {resumable}"
            )
        else:
            hint = "check the database's state and this user's permissions, then retry"
        return CheckpointError(f"PostgreSQL store {self._where}: {op} failed: {exc}. What to do: {hint}.")

    def _transaction(self, op: str, work: Callable[[psycopg.Connection[TupleRow]], _T]) -> _T:
        return self._call(op, work, transaction=True)

    def _query(self, op: str, work: Callable[[psycopg.Connection[TupleRow]], _T]) -> _T:
        return self._call(op, work, transaction=False)

    def _sent_at_once(self, op: str, steps: Sequence[Step]) -> None:
        """Two round trips: `BEGIN` and the statements in one pipeline, then `COMMIT`.

        Not one: a pipeline that carried its `COMMIT` too would be committed by a
        server that froze before answering and woke after the client gave up (the
        bytes were already in its socket), so a run reported as failed would have
        moved its thread. Here a client that gives up before the `COMMIT` leaves an
        open transaction, which the server rolls back when it finds the connection
        closed; only a freeze between `COMMIT` and its answer stays in doubt, as for
        any database client.
        """
        from psycopg import errors  # noqa: PLC0415 - optional dependency

        def work(conn: psycopg.Connection[TupleRow]) -> None:
            try:
                with conn.pipeline():
                    conn.execute("BEGIN", prepare=False)
                    for sql, args, many in steps:
                        if many:
                            conn.cursor().executemany(sql, args)
                        else:
                            conn.execute(sql, args)
            except BaseException as exc:
                if not conn.broken and not conn.closed:
                    with contextlib.suppress(Exception):
                        conn.execute("ROLLBACK", prepare=False)
                if isinstance(exc, errors.NotNullViolation | errors.UniqueViolation):
                    kind = "null" if isinstance(exc, errors.NotNullViolation) else "unique"
                    raise Refused(kind, exc.diag.table_name or "") from exc
                raise
            conn.execute("COMMIT", prepare=False)

        self._call(op, work, transaction=False)

    def _matching(self, column: str, ids: Sequence[str]) -> list[tuple[str, list[Any]]]:
        return [(f"{column} = ANY(%s)", [list(ids)])]

    def close(self, timeout: float | None = None) -> None:
        """Close the connection; calling it again does nothing, any other call then fails.

        Args:
            timeout: seconds to wait for a call in progress (by default its own
                bound, the statement timeout and a second). When it is still
                waiting for the server then, `close()` returns and the call closes
                the connection as it ends.
        """
        self._closed = True
        if self._lock.acquire(timeout=self._bound if timeout is None else max(0.0, timeout)):
            try:
                self._drop()
            finally:
                self._lock.release()


def _connect_options(  # noqa: PLR0913 - one per bound, all keyword-only
    dsn: str, *, connect: float, statement: float, idle: float, keepalive: float | None, user: float | None
) -> dict[str, Any]:
    """The libpq parameters that bound every wait (they add to the DSN's own `options`).

    Seconds here; libpq counts `connect_timeout` in whole seconds, `tcp_user_timeout` in milliseconds.
    """
    from psycopg.conninfo import conninfo_to_dict  # noqa: PLC0415 - optional dependency

    try:
        given = str(conninfo_to_dict(dsn).get("options") or "")
    except Exception:  # noqa: BLE001 - an unparsable DSN fails again, with its reason, on connect
        given = ""
    millis = {"statement_timeout": statement, "idle_in_transaction_session_timeout": idle}
    settings = " ".join(f"-c {name}={max(1, round(s * 1000))}" for name, s in millis.items())
    options: dict[str, Any] = {
        "connect_timeout": max(2, math.ceil(connect)),
        "options": f"{given} {settings}".strip(),
    }
    if keepalive is not None:
        options.update(
            keepalives=1,
            keepalives_idle=max(1, math.ceil(keepalive)),
            keepalives_interval=_KEEPALIVE_INTERVAL,
            keepalives_count=_KEEPALIVE_COUNT,
        )
    if user is not None:
        options["tcp_user_timeout"] = max(1, round(user * 1000))
    return options
