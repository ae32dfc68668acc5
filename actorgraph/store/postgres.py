"""A memory store in PostgreSQL (psycopg 3, installed with `actorgraph[postgres]`).

The connection is the checkpointer's: every wait for the server is bounded
(connect, each statement, each commit), TCP keepalives notice a vanished peer,
and a lost connection is dropped so the next call reconnects.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from actorgraph._model.errors import MissingDependencyError, StoreError
from actorgraph.checkpoint.postgres import _DIALECT, _GRACE, _bounded_classes, _connect_options, _describe
from actorgraph.store._sql import Conn, SqlStore

__all__ = ["PostgresStore"]

_T = TypeVar("_T")


class PostgresStore(SqlStore):
    """Keeps values in a PostgreSQL database; safe to use from many threads and processes.

    The tables (`actorgraph_store*`) are created on first use, under the
    checkpointers' advisory lock so processes starting together do not race; a
    store may share a database with a `PostgresCheckpointer`. Use it as a
    context manager or call `close()`.

    A `PostgresStore` pickles as its arguments: the copy (in a Ray worker, a
    child process) connects on its first call.

    Args:
        dsn: a libpq connection string or URI ("postgresql://user@host/db").
        index: a semantic index `{"embed": fn, "dims": n, "fields": [...]}` (see `MemoryStore`);
            pickled with the store, so `fn` must be picklable to cross processes.
        connect_timeout: seconds to wait for the server when (re)connecting.
        statement_timeout: seconds a statement may run before the server cancels it
            (the client gives up a second later: the bound when the server is frozen).
        clock: the wall clock (seconds since the epoch) that stamps and expires values.

    Raises:
        MissingDependencyError: psycopg is not installed.
        ConfigError: `index` is malformed.
        StoreError: the server cannot be reached.
    """

    dialect = _DIALECT

    def __init__(
        self,
        dsn: str,
        index: Mapping[str, Any] | None = None,
        *,
        connect_timeout: float = 5.0,
        statement_timeout: float = 30.0,
        clock: Callable[[], float] | None = None,
    ) -> None:
        try:
            import psycopg  # noqa: PLC0415, F401 - optional dependency, imported only when used
        except ImportError as exc:
            raise MissingDependencyError(
                'PostgresStore needs psycopg 3, which is not installed: pip install "actorgraph[postgres]"'
            ) from exc
        arguments = {
            "connect_timeout": connect_timeout,
            "statement_timeout": statement_timeout,
            "clock": clock,
        }
        self._configure(dsn=dsn, index=index, **arguments)
        self._open_now("connecting")

    def _configure(self, **arguments: Any) -> None:
        self._arguments_given = arguments
        self._dsn: str = arguments["dsn"]
        statement = arguments["statement_timeout"]
        self._options = _connect_options(
            self._dsn,
            connect=arguments["connect_timeout"],
            statement=statement,
            idle=60.0,
            keepalive=10.0,
            user=20.0,
        )
        self._bound = statement + _GRACE
        self._setup(_describe(self._dsn), arguments["index"], arguments["clock"])
        # a call behind another one waits at most for that one's bound (a reconnect, then a statement)
        self._lock_wait = self._bound + self._options["connect_timeout"]

    def _arguments(self) -> dict[str, Any]:
        return dict(self._arguments_given)

    # json (not jsonb, which refuses them) cannot turn a \u0000 escape into text either: such rows
    # pass; numbers are not narrowed (their text differs: 1, 1.0, 1e0)
    _field_is = "CASE WHEN strpos(value, '\\u0000') > 0 THEN true ELSE CAST(value AS json) ->> %s = %s END"

    def _field_path(self, field: str, wanted: str | float) -> str | None:
        return field if isinstance(wanted, str) else None

    def _connect(self) -> Conn:
        conn = _bounded_classes()[0].connect(self._dsn, autocommit=True, **self._options)
        conn.answer_within = self._bound  # type: ignore[attr-defined]
        return conn

    def _run_in_transaction(self, conn: Conn, work: Callable[[Conn], _T]) -> _T:
        with conn.transaction():
            return work(conn)

    def _failure(self, op: str, exc: Exception) -> StoreError | None:
        import psycopg  # noqa: PLC0415 - optional dependency

        if not isinstance(exc, psycopg.Error):
            return None
        unreadable = (psycopg.errors.InvalidTextRepresentation, psycopg.errors.StatementTooComplex)
        lost = self._conn is None or self._conn.broken
        if isinstance(exc, unreadable) and not lost:  # a filter's JSON cast met a row it cannot read
            hint = (
                "a stored value is not JSON text, or nests too deeply for the server: the database was "
                "changed outside actorgraph. Search without filter= to find the row (its error names "
                "it), then repair or delete it"
            )
        elif lost or isinstance(exc, psycopg.OperationalError):
            self._drop()  # the next call reconnects
            hint = "check that the server is up and the DSN is right; the next call reconnects"
        elif isinstance(exc, psycopg.errors.QueryCanceled):
            hint = "the statement ran past statement_timeout; retry, or give a longer statement_timeout="
        else:
            hint = "check the database's state and this user's permissions, then retry"
        return StoreError(f"PostgreSQL store {self._where}: {op} failed: {exc}. What to do: {hint}.")
