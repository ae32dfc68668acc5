"""The crons' table, in the checkpointer's SQL database: its rows, their search, and the claim of a due tick.

`actorgraph_crons` holds one row per cron: its graph (by name, and its
assistant's id), its thread (None: each tick runs on a new thread), its
schedule and time zone, when it stops (`end_time`), whether it is enabled,
what becomes of a stateless run's thread (`on_run_completed`), its next tick
(`next_run_at`, wall-clock seconds; None once it has none), its metadata (JSON
the search filters on, in the query), and the run it queues at each tick
(`payload`: the run's request, encoded by the checkpointer's serializer, so an
encrypting one encrypts it as it does a run's).

Every read and every search is here, in one module, so that a filter (the
owner a custom auth handler asks for) is added in one place, to the query.

A tick is claimed in the transaction that queues its run (`_scheduler.py`):
`due_in` picks the earliest due row of the graphs a process serves (PostgreSQL:
`FOR UPDATE SKIP LOCKED`, so another server passes it by; SQLite: the
transaction holds the file's write lock), and `advance_in` moves its
`next_run_at` by compare-and-set on the value read. Either both the move and the
run are committed or neither is, so a tick makes one run however many
processes look at once.
"""

# ruff: noqa: S608, SLF001 - statements are fixed text with placeholders; the rows use their store's transactions

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import orjson

from actorgraph._model.errors import CheckpointError, ConfigError, SerializationError
from actorgraph.checkpoint._codec import aad
from actorgraph.server._cron_rows import COLUMNS as _COLUMNS
from actorgraph.server._cron_rows import Cron, cron_row, cron_values, seconds
from actorgraph.server._owners import Filter
from actorgraph.server._tables import sql_dialect

__all__ = ["SORTS", "CronFilter", "CronTable"]

_SCHEMA: Final = """
CREATE TABLE IF NOT EXISTS actorgraph_crons (
    cron_id {key} PRIMARY KEY, graph {text} NOT NULL, assistant_id {key} NOT NULL, thread_id {key},
    schedule {text} NOT NULL, timezone {text}, end_time {real}, enabled {int} NOT NULL,
    on_run_completed {text}, next_run_at {real}, payload {blob} NOT NULL, metadata {json} NOT NULL,
    user_id {text}, created_at {real} NOT NULL, updated_at {real} NOT NULL
);
CREATE INDEX IF NOT EXISTS actorgraph_crons_due ON actorgraph_crons (enabled, next_run_at);
CREATE INDEX IF NOT EXISTS actorgraph_crons_by_thread ON actorgraph_crons (thread_id)
"""
SORTS: Final = {
    "cron_id": "cron_id",
    "assistant_id": "assistant_id",
    "thread_id": "thread_id",
    "next_run_date": "next_run_at",
    "end_time": "end_time",
    "created_at": "created_at",
    "updated_at": "updated_at",
}
"""What a search sorts by, as the API names it -> the column."""


@dataclass(frozen=True, slots=True)
class CronFilter:
    """Which crons a search finds (each given filter holds, in the query).

    Attributes:
        assistant: a graph's name or its assistant's id.
        thread_id: the crons of that thread.
        enabled: enabled ones, or disabled ones.
        metadata: each key has that value in the cron's metadata.
        where: an auth handler's filter on the cron's metadata (the crons the user may see).
    """

    assistant: str | None = None
    thread_id: str | None = None
    enabled: bool | None = None
    metadata: Mapping[str, Any] | None = None
    where: Filter | None = None


class CronTable:
    """The crons of one SQL checkpointer's database (the table made on first use)."""

    def __init__(self, store: Any) -> None:
        """Keep the crons in `store`'s database: a `SqliteCheckpointer` or a `PostgresCheckpointer`.

        Raises:
            ConfigError: the checkpointer keeps no SQL database.
        """
        dialect = sql_dialect(store, "crons live")
        self.store = store
        self._m = dialect.mark
        self._postgres = dialect.name == "PostgreSQL"
        self._json = f"CAST({self._m} AS jsonb)" if self._postgres else self._m  # a parameter for `metadata`
        types = {"key": dialect.key, "text": dialect.text, "real": dialect.real, "int": dialect.int}
        types |= {"blob": dialect.blob, "json": "jsonb" if self._postgres else dialect.text}
        ddl = [s for s in _SCHEMA.format(**types).split(";") if s.strip()]
        lock = dialect.lock_schema

        def create(conn: Any) -> None:
            if lock:
                conn.execute(lock)
            for statement in ddl:
                conn.execute(statement)

        if not getattr(store, "readonly", False):
            store._write("creating the crons' table", create)

    # -- rows ------------------------------------------------------------------------------------

    def _encode(self, cron_id: str, payload: Mapping[str, Any]) -> bytes:
        data: bytes = self.store.serializer.dumps(dict(payload), aad=aad(f"cron:{cron_id}", "server-cron"))
        return data

    def _decode(self, cron_id: str, data: Any) -> dict[str, Any] | None:
        try:
            found = self.store.serializer.loads(bytes(data), aad=aad(f"cron:{cron_id}", "server-cron"))
        except (SerializationError, TypeError, ValueError):
            return None
        return found if isinstance(found, dict) else None

    def _row(self, values: Sequence[Any]) -> Cron:
        """A stored row, checked (`cron_row`), its payload decoded.

        Raises:
            CheckpointError: a column holds what this table never writes there (naming the cron).
        """
        return cron_row(values, self._decode)

    def _values(self, cron: Cron) -> tuple[Any, ...]:
        return cron_values(cron, self._encode(cron.cron_id, cron.payload or {}))

    def put(self, cron: Cron) -> Cron:
        """Store a new cron."""
        marks = [self._m] * 15
        marks[11] = self._json
        sql = f"INSERT INTO actorgraph_crons ({_COLUMNS}) VALUES ({', '.join(marks)})"
        values = self._values(cron)
        self.store._write(f"creating cron {cron.cron_id}", lambda conn: conn.execute(sql, values))
        return cron

    def _owned(self, where: Filter | None) -> tuple[str, list[Any]]:
        """` AND` an auth handler's filter on the crons' metadata ("" without one), and its parameters."""
        if where is None:
            return "", []
        sql, args = where.sql(self.store.dialect.name, "actorgraph_crons.metadata")
        return f" AND ({sql})", args

    def get(self, cron_id: str, where: Filter | None = None) -> Cron | None:
        """The cron if it meets `where`, or None (also for a damaged row, which cannot be shown)."""
        owned, args = self._owned(where)
        sql = f"SELECT {_COLUMNS} FROM actorgraph_crons WHERE cron_id = {self._m}{owned}"
        found = self.store._read(f"reading cron {cron_id}", sql, (cron_id, *args))
        try:
            return self._row(found[0]) if found else None
        except CheckpointError:
            return None

    def change(self, cron_id: str, edit: Callable[[Cron], Cron], where: Filter | None = None) -> Cron | None:
        """Change a cron in one transaction: `edit` gets it as stored and returns it changed.

        None if absent (or it does not meet `where`, an auth handler's filter). `edit` may
        raise (a `ConfigError` for a change refused): nothing is written then.
        """
        m, lock = self._m, " FOR UPDATE" if self._postgres else ""
        owned, owned_args = self._owned(where)
        read = f"SELECT {_COLUMNS} FROM actorgraph_crons WHERE cron_id = {m}{owned}{lock}"
        columns = [c.strip() for c in _COLUMNS.split(",")][1:]
        sets = ", ".join(f"{c} = {self._json if c == 'metadata' else m}" for c in columns)
        write = f"UPDATE actorgraph_crons SET {sets} WHERE cron_id = {m}"

        def work(conn: Any) -> Cron | None:
            found = conn.execute(read, (cron_id, *owned_args)).fetchone()
            if found is None:
                return None
            changed = edit(self._row(found))
            conn.execute(write, (*self._values(changed)[1:], cron_id))
            return changed

        result: Cron | None = self.store._write(f"changing cron {cron_id}", work)
        return result

    def delete(self, cron_id: str, where: Filter | None = None) -> bool:
        """Delete a cron; False if there was none (or it does not meet `where`, an auth handler's filter)."""
        owned, args = self._owned(where)
        sql = f"DELETE FROM actorgraph_crons WHERE cron_id = {self._m}{owned}"
        gone: bool = self.store._write(
            f"deleting cron {cron_id}", lambda conn: conn.execute(sql, (cron_id, *args)).rowcount == 1
        )
        return gone

    def delete_of_thread(self, thread_id: str) -> int:
        """Delete the crons of a thread (it is being deleted); how many."""
        sql = f"DELETE FROM actorgraph_crons WHERE thread_id = {self._m}"
        count: int = self.store._write(
            f"deleting the crons of thread {thread_id!r}",
            lambda conn: conn.execute(sql, (thread_id,)).rowcount,
        )
        return count

    # -- search ----------------------------------------------------------------------------------

    def _metadata_match(self, metadata: Mapping[str, Any]) -> tuple[list[str], list[Any]]:
        """Conditions that hold when each key of `metadata` has that value in a cron's (in the query)."""
        m, where, args = self._m, list[str](), list[Any]()
        for key, value in metadata.items():
            wanted = orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()
            if self._postgres:
                where.append(f"metadata -> CAST({m} AS text) = CAST({m} AS jsonb)")
            else:  # json_each's value as JSON text: objects and arrays as stored, scalars quoted
                where.append(
                    "CASE WHEN json_valid(metadata) THEN EXISTS (SELECT 1 FROM json_each(metadata) j"
                    f" WHERE j.key = {m} AND (CASE j.type WHEN 'object' THEN j.value"
                    " WHEN 'array' THEN j.value WHEN 'true' THEN 'true' WHEN 'false' THEN 'false'"
                    " WHEN 'null' THEN 'null'"
                    f" ELSE json_quote(j.value) END) = {m}) ELSE 0 END"
                )
            args.extend((key, wanted))
        return where, args

    def _where(self, found: CronFilter) -> tuple[str, list[Any]]:
        """The WHERE clause of a search and its arguments (every filter is in the query)."""
        m, where, args = self._m, ["1 = 1"], list[Any]()
        if found.assistant is not None:
            where.append(f"(graph = {m} OR assistant_id = {m})")
            args.extend((found.assistant, found.assistant))
        if found.thread_id is not None:
            where.append(f"thread_id = {m}")
            args.append(found.thread_id)
        if found.enabled is not None:
            where.append(f"enabled = {m}")
            args.append(int(found.enabled))
        matched, more = self._metadata_match(found.metadata or {})
        owned, owned_args = self._owned(found.where)
        return " AND ".join([*where, *matched]) + owned, [*args, *more, *owned_args]

    def search(
        self,
        found: CronFilter,
        *,
        sort: tuple[str, str] = ("created_at", "desc"),
        limit: int = 10,
        offset: int = 0,
    ) -> list[Cron]:
        """The crons that match, sorted by `sort` (a name of `SORTS`, and asc or desc), one page.

        A damaged row is left out.
        """
        column, order = SORTS.get(sort[0]), sort[1]
        if column is None or order not in ("asc", "desc"):
            raise ConfigError(f"sort_by: cannot sort crons by {sort[0]!r} {sort[1]!r}")
        where, args = self._where(found)
        sql = (
            f"SELECT {_COLUMNS} FROM actorgraph_crons WHERE {where}"
            f" ORDER BY {column} {order.upper()}, cron_id LIMIT {self._m} OFFSET {self._m}"
        )
        crons = []
        for values in self.store._read("searching crons", sql, (*args, limit, offset)):
            try:
                crons.append(self._row(values))
            except CheckpointError:
                continue
        return crons

    def count(self, found: CronFilter) -> int:
        """How many crons match."""
        where, args = self._where(found)
        sql = f"SELECT count(*) FROM actorgraph_crons WHERE {where}"
        return int(self.store._read("counting crons", sql, args)[0][0])

    def earliest(self, graphs: Sequence[str]) -> float | None:
        """The earliest next tick of the enabled crons of `graphs`, or None."""
        if not graphs:
            return None
        m = self._m
        sql = (
            f"SELECT min(next_run_at) FROM actorgraph_crons WHERE enabled = 1"
            f" AND graph IN ({', '.join([m] * len(graphs))})"
        )
        found = self.store._read("reading the next tick", sql, tuple(graphs))
        value = found[0][0] if found else None
        try:
            return seconds(value, optional=True)  # type: ignore[no-any-return]
        except ValueError:
            return None

    # -- a tick, inside the scheduler's transaction -----------------------------------------------

    def due_in(self, conn: Any, graphs: Sequence[str], now: float) -> tuple[Any, Cron | None] | None:
        """The earliest due cron of `graphs`, locked for this transaction: (its id as stored, the cron).

        The cron is None when its row is damaged (the caller stops it). None when nothing is due.
        """
        m = self._m
        sql = (
            f"SELECT {_COLUMNS} FROM actorgraph_crons WHERE enabled = 1 AND next_run_at <= {m}"
            f" AND graph IN ({', '.join([m] * len(graphs))}) ORDER BY next_run_at, cron_id LIMIT 1"
            + (" FOR UPDATE SKIP LOCKED" if self._postgres else "")
        )
        found = conn.execute(sql, (now, *graphs)).fetchone()
        if found is None:
            return None
        try:
            return found[0], self._row(found)
        except CheckpointError:
            return found[0], None

    def advance_in(self, conn: Any, cron_id: Any, was: float | None, to: float | None) -> bool:
        """Move a cron's next tick from `was` to `to` (compare-and-set); False if another moved it first."""
        m = self._m
        moved = conn.execute(
            f"UPDATE actorgraph_crons SET next_run_at = {m} WHERE cron_id = {m} AND next_run_at = {m}",
            (to, cron_id, was),
        )
        return bool(moved.rowcount == 1)

    def stop_in(self, conn: Any, cron_id: Any) -> None:
        """Stop a cron whose row cannot be read: it has no next tick (deleting or fixing it is the user's)."""
        conn.execute(f"UPDATE actorgraph_crons SET next_run_at = NULL WHERE cron_id = {self._m}", (cron_id,))

    def forget_in(self, conn: Any, cron_id: str) -> None:
        """Delete a cron whose thread is gone."""
        conn.execute(f"DELETE FROM actorgraph_crons WHERE cron_id = {self._m}", (cron_id,))
