"""A cron as a record, and its row in `actorgraph_crons` read back with checks.

Anyone with the database can write anything into a row (SQLite keeps a text in
a REAL column; PostgreSQL keeps NaN in one): each column is checked for what the
table writes there, and a row that fails is a `CheckpointError` naming the cron,
so a search leaves it out and the scheduler stops it, never crashes on it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import orjson

from actorgraph._model.errors import CheckpointError

__all__ = ["COLUMNS", "Cron", "cron_row", "cron_values", "metadata_json", "seconds"]

COLUMNS: Final = (
    "cron_id, graph, assistant_id, thread_id, schedule, timezone, end_time, enabled, on_run_completed,"
    " next_run_at, payload, metadata, user_id, created_at, updated_at"
)
"""The table's columns, in the order `cron_row` reads them."""


@dataclass(frozen=True, slots=True)
class Cron:
    """A cron: a run of a graph queued at each tick of a schedule.

    Attributes:
        cron_id: its id.
        graph: the name of the graph it runs.
        assistant_id: the graph's assistant's id.
        thread_id: the thread each run goes on; None: each tick runs on a new thread.
        schedule: the cron expression.
        timezone: the IANA zone its ticks are in; None for UTC.
        end_time: wall-clock seconds after which it fires no more, or None.
        enabled: whether it fires.
        on_run_completed: for a cron without a thread: "delete" (each run's thread is deleted
            when the run ends) or "keep"; None for a cron on a thread.
        next_run_at: wall-clock seconds of its next tick; None when it has none (past its end).
        metadata: its metadata (each run it queues carries it, with `cron_id`).
        payload: the request of the run it queues at each tick (None: it could not be read).
        user_id: who made it (set by a custom auth handler), or None.
        created_at: wall-clock seconds.
        updated_at: wall-clock seconds of its last change.
    """

    cron_id: str
    graph: str
    assistant_id: str
    thread_id: str | None
    schedule: str
    timezone: str | None
    end_time: float | None
    enabled: bool
    on_run_completed: str | None
    next_run_at: float | None
    metadata: dict[str, Any]
    payload: dict[str, Any] | None
    user_id: str | None
    created_at: float
    updated_at: float


def _text(value: object, *, optional: bool = False) -> Any:
    if (value is None and optional) or (isinstance(value, str) and value):
        return value
    raise ValueError(f"{value!r:.60} is not a text")


def seconds(value: object, *, optional: bool = False) -> Any:
    if value is None and optional:
        return None
    if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
        return float(value)
    raise ValueError(f"{value!r:.60} is not a time in seconds")


def _metadata(value: object) -> dict[str, Any]:
    found = orjson.loads(value) if isinstance(value, str | bytes) else value
    if not isinstance(found, dict):
        raise ValueError(f"{value!r:.60} is not a JSON object")  # noqa: TRY004 - a damaged row, said as one
    return found


def metadata_json(metadata: Mapping[str, Any]) -> str:
    """Metadata as stored: compact JSON with sorted keys, so a nested value compares as text in SQLite."""
    return orjson.dumps(dict(metadata), option=orjson.OPT_SORT_KEYS).decode()


def cron_row(values: Sequence[Any], decode: Callable[[str, Any], dict[str, Any] | None]) -> Cron:
    """A stored row (its `COLUMNS`), checked column by column; `decode(cron_id, data)` reads its payload.

    Raises:
        CheckpointError: a column holds what the table never writes there (naming the cron).
    """
    try:
        cron_id, graph, assistant, thread, schedule, zone, end, enabled, completed, *rest = values
        next_at, payload, metadata, user, created, updated = rest
        return Cron(
            _text(cron_id), _text(graph), _text(assistant), _text(thread, optional=True), _text(schedule),
            _text(zone, optional=True), seconds(end, optional=True), bool(enabled),
            _text(completed, optional=True), seconds(next_at, optional=True), _metadata(metadata),
            decode(str(cron_id), payload), _text(user, optional=True), seconds(created), seconds(updated),
        )  # fmt: skip
    except (ValueError, TypeError, orjson.JSONDecodeError) as exc:
        shown = repr(values[0])[:80] if values else "?"
        raise CheckpointError(f"the row of cron {shown} is damaged ({exc}); delete the cron") from None


def cron_values(cron: Cron, payload: bytes) -> tuple[Any, ...]:
    """The values of a cron's row, in `COLUMNS` order (its payload already encoded)."""
    return (
        cron.cron_id, cron.graph, cron.assistant_id, cron.thread_id, cron.schedule, cron.timezone,
        cron.end_time, int(cron.enabled), cron.on_run_completed, cron.next_run_at, payload,
        metadata_json(cron.metadata), cron.user_id, cron.created_at, cron.updated_at,
    )  # fmt: skip
