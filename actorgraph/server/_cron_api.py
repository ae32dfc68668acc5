"""`Crons`: a server's crons from Python, on its store, with no server running.

```python
from actorgraph.server import Crons

with Crons(db="actorgraph.db") as crons:
    cron = crons.add("agent", "0 9 * * *", input={"messages": [...]}, timezone="Europe/Paris")
    crons.list(graph="agent")
    crons.delete(cron.cron_id)
```

It writes the same rows the cron routes write (`_crons.py`), with the same checks
(`_cron_specs.py`), so every server and worker of the store that serves the graph
fires them. It does not load the graph: a breakpoint that names no vertex is
found at the first tick, which is then passed and logged.
"""

from __future__ import annotations

import builtins
import datetime as dt
import time
from collections.abc import Mapping
from types import TracebackType
from typing import Any, Self

from pydantic import ValidationError

from actorgraph._model.errors import ConfigError
from actorgraph.server._body import validation_detail
from actorgraph.server._cron_models import CronCreate, CronPatch
from actorgraph.server._cron_rows import Cron
from actorgraph.server._cron_specs import new_cron, patched
from actorgraph.server._crons import CronFilter, CronTable
from actorgraph.server._graphs import assistant_uuid
from actorgraph.server._tables import Tables

__all__ = ["Crons"]


def _checked(model: type[Any], fields: Mapping[str, Any]) -> Any:
    try:
        return model.model_validate(dict(fields))
    except ValidationError as exc:
        raise ConfigError(validation_detail(exc)) from None


class Crons:
    """The crons of a server's store (SQLite or PostgreSQL): add, list, get, update, delete.

    Every server and `actorgraph worker --config` of the store queues a cron's runs at its
    ticks, if it serves the cron's graph (by name); each tick makes one run, however many
    of them there are (docs/how-to/serve-many-users.md).
    """

    def __init__(self, *, db: str | None = None, dsn: str | None = None, checkpointer: Any = None) -> None:
        """Open the crons of the store `db` (a SQLite file), `dsn` (PostgreSQL) or `checkpointer`.

        Args:
            db: the SQLite file the server uses (`actorgraph server --db`; default `actorgraph.db`).
            dsn: the PostgreSQL database instead (`--dsn`).
            checkpointer: a `SqliteCheckpointer` or `PostgresCheckpointer` of the caller's instead
                (the caller closes it).

        Raises:
            ConfigError: more than one store given, or a checkpointer without SQL.
        """
        from actorgraph.checkpoint import PostgresCheckpointer, SqliteCheckpointer  # noqa: PLC0415 - lazy stores

        given = [n for n, v in (("db", db), ("dsn", dsn), ("checkpointer", checkpointer)) if v is not None]
        if len(given) > 1:
            raise ConfigError(f"Crons: give one of db, dsn and checkpointer, not {' and '.join(given)}")
        self._opened = checkpointer is None
        if checkpointer is None:
            checkpointer = (
                PostgresCheckpointer(dsn) if dsn is not None else SqliteCheckpointer(db or "actorgraph.db")
            )
        try:
            self._table = CronTable(checkpointer)
        except BaseException:
            if self._opened:
                checkpointer.close()
            raise
        self._store = checkpointer

    def add(  # noqa: PLR0913 - the run and its schedule, all keyword-only but the graph and the schedule
        self,
        graph: str,
        schedule: str,
        *,
        input: Any = None,  # noqa: A002 - the name LangGraph's API and langgraph-sdk give it
        thread_id: str | None = None,
        timezone: str | None = None,
        end_time: dt.datetime | None = None,
        metadata: Mapping[str, Any] | None = None,
        **options: Any,
    ) -> Cron:
        """Add a cron: a run of `graph` at each tick of `schedule`, as `POST /runs/crons` does.

        Args:
            graph: the graph's name, as the server serves it (`-g NAME=...`, or langgraph.json).
            schedule: a cron expression: five fields, a sixth for the second, or `@hourly`...
            input: the input of each run.
            thread_id: the thread each run goes on (it must exist); None: a new thread each tick.
            timezone: the IANA zone of the schedule (default UTC).
            end_time: when it stops firing (a time without offset is UTC).
            metadata: its metadata, carried by each run (with `cron_id`).
            **options: the other fields of the route's body, checked as it checks them: `config`,
                `context`, `webhook`, `multitask_strategy` (a cron on a thread; default "enqueue"),
                `on_run_completed` ("delete", the default, or "keep" each tick's new thread),
                `interrupt_before`, `interrupt_after`, `enabled`, `stream_mode`, `durability`.

        Returns:
            The cron, with its first tick (`next_run_at`).

        Raises:
            ConfigError: a bad schedule, zone, end time, webhook, option or graph name, or a
                thread that does not exist (the message names the field).
        """
        unknown = sorted(set(options) - set(CronCreate.model_fields) - {"assistant_id", "schedule"})
        if unknown:
            raise ConfigError(f"{unknown[0]}: not a field of a cron (see POST /runs/crons)")
        given = {"input": input, "timezone": timezone, "end_time": end_time, "metadata": metadata, **options}
        fields = {k: v for k, v in given.items() if v is not None}
        body: CronCreate = _checked(CronCreate, {**fields, "assistant_id": graph, "schedule": schedule})
        if thread_id is not None and Tables(self._store).thread(thread_id) is None:
            raise ConfigError(f"thread_id: thread {thread_id!r} not found (create it first: threads.create)")
        assistant = assistant_uuid(graph)
        cron = new_cron(body, graph=graph, assistant_id=assistant, thread_id=thread_id, now=time.time())
        return self._table.put(cron)

    def get(self, cron_id: str) -> Cron | None:
        """The cron, or None."""
        return self._table.get(cron_id)

    def list(
        self,
        *,
        graph: str | None = None,
        thread_id: str | None = None,
        enabled: bool | None = None,
        limit: int = 100,
        offset: int = 0,
    ) -> builtins.list[Cron]:
        """The crons (of a graph, of a thread, enabled or not), newest first."""
        return self._table.search(CronFilter(graph, thread_id, enabled), limit=limit, offset=offset)

    def update(self, cron_id: str, **changes: Any) -> Cron | None:
        """Change a cron as `PATCH /runs/crons/{id}` does (`schedule=`, `enabled=`, `end_time=`, ...).

        Returns:
            The cron changed, or None if there is no such cron.

        Raises:
            ConfigError: a change refused (naming the field), or none given.
        """
        body: CronPatch = _checked(CronPatch, changes)
        now = time.time()
        return self._table.change(cron_id, lambda cron: patched(cron, body, now=now))

    def delete(self, cron_id: str) -> bool:
        """Delete a cron; False if there was none (the runs it queued stay)."""
        return self._table.delete(cron_id)

    def close(self) -> None:
        """Close the store, if these crons opened it."""
        if self._opened:
            self._store.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.close()
