"""The request bodies of the cron routes, as pydantic models: every field typed and bounded.

They follow what `langgraph-sdk`'s `client.crons` sends (`create`,
`create_for_thread`, `update`, `search`, `count`): the run each tick queues
(`input`, `config`/`context`, `metadata`, `webhook`, breakpoints, stream options,
`multitask_strategy`) and the schedule (`schedule`, `timezone`, `end_time`,
`enabled`, and `on_run_completed` for a cron without a thread). Fields the
server has nothing to do with (`checkpoint_during`, ...) are accepted and ignored.
"""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Any, Final, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from actorgraph.server._models import ID, STREAM_MODES, Name, StreamMode, Vertices
from actorgraph.server._schedule import LONGEST_SCHEDULE

__all__ = ["CRON_BODIES", "CRON_FIELDS", "RUN_FIELDS", "CronCount", "CronCreate", "CronPatch", "CronSearch"]

Schedule = Annotated[str, StringConstraints(min_length=1, max_length=LONGEST_SCHEDULE)]
Zone = Annotated[str, StringConstraints(min_length=1, max_length=64)]
Webhook = Annotated[str, StringConstraints(min_length=1, max_length=65536)]
Strategy = Literal["reject", "enqueue", "interrupt", "rollback"]
Modes = StreamMode | Annotated[list[StreamMode], Field(max_length=len(STREAM_MODES))]
Filter = Annotated[dict[str, Any], Field(max_length=100)]  # each key is a condition of the query

RUN_FIELDS: Final = (
    "input",
    "config",
    "context",
    "interrupt_before",
    "interrupt_after",
    "webhook",
    "multitask_strategy",
    "stream_mode",
    "stream_subgraphs",
    "stream_resumable",
    "durability",
)
"""The fields of a cron's request that make the run each tick queues (its `payload`)."""

CronField = Literal[
    "cron_id",
    "assistant_id",
    "thread_id",
    "on_run_completed",
    "end_time",
    "schedule",
    "timezone",
    "created_at",
    "updated_at",
    "user_id",
    "payload",
    "next_run_date",
    "metadata",
    "enabled",
]

CRON_FIELDS: Final = get_args(CronField)
"""A cron's fields as the API shows them (what a search may `select`)."""


class _Body(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)


class _RunFields(_Body):
    """What the run of each tick is: the same fields as a run's request."""

    input: Any = None
    metadata: dict[str, Any] | None = None
    config: dict[str, Any] | None = None
    context: Any = None
    webhook: Webhook | None = None
    interrupt_before: Vertices | None = None
    interrupt_after: Vertices | None = None
    stream_mode: Modes | None = None
    stream_subgraphs: bool | None = None
    stream_resumable: bool | None = None
    durability: Literal["sync", "async", "exit"] | None = None


class CronCreate(_RunFields):
    """`POST /runs/crons` (a new thread at each tick) and `POST /threads/{id}/runs/crons` (on that thread)."""

    assistant_id: Name
    schedule: Schedule
    timezone: Zone | None = None
    end_time: dt.datetime | None = None
    enabled: bool = True
    multitask_strategy: Strategy = "enqueue"
    on_run_completed: Literal["delete", "keep"] | None = None


class CronPatch(_RunFields):
    """`PATCH /runs/crons/{id}`: the fields given change (`end_time: null` clears the end)."""

    schedule: Schedule | None = None
    timezone: Zone | None = None
    end_time: dt.datetime | None = None
    enabled: bool | None = None
    multitask_strategy: Strategy | None = None
    on_run_completed: Literal["delete", "keep"] | None = None


class CronSearch(_Body):
    """`POST /runs/crons/search`."""

    assistant_id: Name | None = None
    thread_id: ID | None = None
    enabled: bool | None = None
    metadata: Filter | None = None
    limit: Annotated[int, Field(ge=1, le=1000)] = 10
    offset: Annotated[int, Field(ge=0, le=1_000_000)] = 0
    sort_by: Literal[
        "cron_id", "assistant_id", "thread_id", "next_run_date", "end_time", "created_at", "updated_at"
    ] = "created_at"
    sort_order: Literal["asc", "desc"] = "desc"
    select: Annotated[list[CronField], Field(max_length=len(CRON_FIELDS))] | None = None


class CronCount(_Body):
    """`POST /runs/crons/count`."""

    assistant_id: Name | None = None
    thread_id: ID | None = None
    enabled: bool | None = None
    metadata: Filter | None = None


CRON_BODIES: Final[dict[tuple[str, str], type[BaseModel]]] = {
    ("POST", "/runs/crons"): CronCreate,
    ("POST", "/threads/{thread_id}/runs/crons"): CronCreate,
    ("POST", "/runs/crons/search"): CronSearch,
    ("POST", "/runs/crons/count"): CronCount,
    ("PATCH", "/runs/crons/{cron_id}"): CronPatch,
}
"""The cron routes' request bodies, for the OpenAPI document."""
