"""A cron made from its request, changed by a patch, and the run each of its ticks queues.

The same steps serve the routes, `Crons` (Python) and `actorgraph crons`: the
schedule, the zone and the end are checked here (`_schedule.py`), the parts a
cron copies into every run are bounded here (a cron keeps them and each tick
copies them), and the first tick is computed from `now`, the time the caller
passes (so a test gives one).

What a tick queues is a run's request (`RunCreate`): the cron's `payload` (the
run fields of its request), its metadata with `cron_id` added, and, for a cron
without a thread, `on_completion` from its `on_run_completed`. The cron's
`webhook` rides in that request as a run's own does.
"""

from __future__ import annotations

import dataclasses
import uuid
from typing import Any, Final

import orjson

from actorgraph._model.errors import ConfigError
from actorgraph.server._cron_models import RUN_FIELDS, CronCreate, CronPatch
from actorgraph.server._cron_rows import Cron
from actorgraph.server._models import RunCreate
from actorgraph.server._schedule import check_end_time, check_schedule, check_timezone, next_tick
from actorgraph.server._wire import iso

__all__ = ["LARGEST_PART", "new_cron", "patched", "tick_request", "tick_run_id"]

LARGEST_PART: Final = 1024 * 1024
"""Bytes of JSON a cron keeps of each of its input, config, context and metadata (each tick copies them)."""

_TICKS: Final = uuid.UUID("3f0c2a52-6a59-4c1e-9a3e-6d1c0b7f2c41")  # the namespace of tick run ids
_SCHEMES: Final = ("http://", "https://")


def tick_run_id(cron_id: str, tick: float) -> str:
    """The id of the run a cron's tick queues: made from the cron and the tick, so a tick makes one run."""
    return str(uuid.uuid5(_TICKS, f"{cron_id}@{iso(tick)}"))


def _bounded(body: CronCreate | CronPatch) -> None:
    """Refuse a part of the run larger than a cron keeps, naming it."""
    for name in ("input", "config", "context", "metadata"):
        value = getattr(body, name)
        if value is None:
            continue
        size = len(orjson.dumps(value))
        if size > LARGEST_PART:
            msg = (
                f"{name}: {size} bytes of JSON; a cron keeps at most {LARGEST_PART} (each of its "
                "runs copies it): keep large data in the store and pass its key"
            )
            raise ConfigError(msg)


def _webhook(url: str | None) -> str | None:
    if url is not None and not url.lower().startswith(_SCHEMES):
        raise ConfigError(f"webhook: {url[:80]!r} is not an http:// or https:// URL")
    return url


def _payload(body: CronCreate | CronPatch, fields: set[str]) -> dict[str, Any]:
    """The run fields the request gives (its `payload`), as JSON values."""
    dumped = body.model_dump(mode="json", include=fields & set(RUN_FIELDS))
    return {k: v for k, v in dumped.items() if v is not None}


def new_cron(  # noqa: PLR0913 - the request, what it runs on, and when: all keyword-only
    body: CronCreate,
    *,
    graph: str,
    assistant_id: str,
    thread_id: str | None,
    now: float,
    user_id: str | None = None,
) -> Cron:
    """A new cron from its request (its first tick the first after `now`).

    Raises:
        ConfigError: a bad schedule, zone, end time or webhook, a part too large, or
            `on_run_completed` on a cron with a thread (each message names its field).
    """
    _bounded(body)
    _webhook(body.webhook)
    if thread_id is not None and body.on_run_completed is not None:
        raise ConfigError("on_run_completed: a cron on a thread keeps its thread; leave it out")
    zone = check_timezone(body.timezone)
    first = check_schedule(body.schedule, zone, now=now)
    end = check_end_time(body.end_time, now=now, first=first)
    payload = _payload(body, body.model_fields_set | {"multitask_strategy"})
    return Cron(
        cron_id=str(uuid.uuid4()), graph=graph, assistant_id=assistant_id, thread_id=thread_id,
        schedule=body.schedule, timezone=zone, end_time=end, enabled=body.enabled,
        on_run_completed=None if thread_id is not None else body.on_run_completed or "delete",
        next_run_at=first, metadata=dict(body.metadata or {}), payload=payload, user_id=user_id,
        created_at=now, updated_at=now,
    )  # fmt: skip


def patched(cron: Cron, body: CronPatch, *, now: float) -> Cron:
    """`cron` changed by a patch: the fields given; its next tick again from `now` when its timing changed.

    Metadata given is merged into the cron's (a key given again is replaced); the run fields
    given replace the cron's. Enabling a disabled cron starts it from its next tick after now
    (the ticks it was off are not run).

    Raises:
        ConfigError: as `new_cron`, or a patch that changes nothing.
    """
    given = body.model_fields_set
    if not given:
        raise ConfigError("the patch changes nothing: give schedule, enabled, end_time, input, metadata, ...")
    _bounded(body)
    _webhook(body.webhook)
    if "on_run_completed" in given and cron.thread_id is not None and body.on_run_completed is not None:
        raise ConfigError("on_run_completed: a cron on a thread keeps its thread; leave it out")
    changes: dict[str, Any] = {"updated_at": now}
    zone = check_timezone(body.timezone) if "timezone" in given else cron.timezone
    schedule = body.schedule if body.schedule is not None else cron.schedule
    first = check_schedule(schedule, zone, now=now) if given & {"schedule", "timezone"} else None
    enabled = body.enabled if body.enabled is not None else cron.enabled
    if first is not None or (enabled and not cron.enabled):
        changes["next_run_at"] = first if first is not None else next_tick(schedule, zone, now)
    if "end_time" in given:
        changes["end_time"] = check_end_time(body.end_time, now=now, first=None)
    changes |= {"schedule": schedule, "timezone": zone, "enabled": enabled}
    if body.on_run_completed is not None and cron.thread_id is None:
        changes["on_run_completed"] = body.on_run_completed
    if body.metadata is not None:
        changes["metadata"] = {**cron.metadata, **body.metadata}
    if given & set(RUN_FIELDS):
        changes["payload"] = {**(cron.payload or {}), **_payload(body, given)}
    return _ended(dataclasses.replace(cron, **changes))


def _ended(cron: Cron) -> Cron:
    """The cron's next tick made right after a change: none past its end; one again if it has none.

    An enabled cron without a next tick (its end was reached, or its row was stopped) gets its
    first tick after the change when its end allows one (an end moved later starts it again).
    """
    following = cron.next_run_at
    if following is None and cron.enabled:
        following = next_tick(cron.schedule, cron.timezone, cron.updated_at)
    if following is not None and cron.end_time is not None and following > cron.end_time:
        following = None
    return cron if following == cron.next_run_at else dataclasses.replace(cron, next_run_at=following)


def tick_request(cron: Cron) -> tuple[RunCreate, str | None]:
    """The request of the run a tick of `cron` queues, and the webhook it carries (or None).

    Raises:
        ValidationError: a stored payload that is no run's request (it is read as hostile as a request).
        ConfigError: a payload that cannot be read.
    """
    if cron.payload is None:
        raise ConfigError(f"cron {cron.cron_id}: its run cannot be read (a store of another serializer?)")
    fields = {k: v for k, v in cron.payload.items() if k in RUN_FIELDS and k != "webhook"}
    webhook = cron.payload.get("webhook")
    request = RunCreate.model_validate(
        {
            **fields,
            "assistant_id": cron.graph,
            "metadata": {**cron.metadata, "cron_id": cron.cron_id},
            "on_completion": cron.on_run_completed or "keep",
        }
    )
    return request, webhook if isinstance(webhook, str) else None
