"""A cron's schedule read with croniter, its time zone with zoneinfo, and the ticks they make.

A schedule is what LangGraph's server takes: five fields (minute, hour, day of
the month, month, day of the week), a sixth for the second (`* * * * * *` is every
second, `0 9 * * * 30` is 09:00:30), a seventh for the year, or an alias
(`@hourly`, `@daily`, `@weekly`, `@monthly`, `@yearly`, `@midnight`), read by
croniter; its ticks are in the cron's time zone (an IANA name, UTC by default),
so `0 9 * * *` in Europe/Paris stays at nine o'clock across summer time.

Everything here is checked as hostile: the expression's length and characters
before croniter sees it, the zone against the names the system's (or the
`tzdata` package's) database lists (no path, no file of another kind), and a
schedule that never fires (`0 0 30 2 *`) is refused, not scheduled. Each
refusal is a `ConfigError` whose message starts with the field it names.
"""

from __future__ import annotations

import datetime as dt
import functools
import re
from typing import Final
from zoneinfo import ZoneInfo, available_timezones

from croniter import CroniterError, croniter

from actorgraph._model.errors import ConfigError

__all__ = ["LONGEST_SCHEDULE", "check_end_time", "check_schedule", "check_timezone", "next_tick"]

LONGEST_SCHEDULE: Final = 200
_LONGEST_ZONE: Final = 64
_CHARACTERS: Final = re.compile(r"[A-Za-z0-9*/,?#@ -]+")  # croniter's syntax, nothing else reaches it
_SHOWN: Final = 60


def _shown(text: str) -> str:
    return repr(text if len(text) <= _SHOWN else text[:_SHOWN] + "...")


@functools.cache
def _zones() -> frozenset[str]:
    """The IANA zone names this machine knows (scanned once: it reads the zone database's folder)."""
    return frozenset(available_timezones() | {"UTC"})


def check_timezone(name: str | None) -> str | None:
    """A time zone name, checked: an IANA name this machine's zone database holds, or None (UTC).

    Raises:
        ConfigError: any other text (a fixed offset, a path, a folder of the database).
    """
    if name is None:
        return None
    if len(name) > _LONGEST_ZONE or name not in _zones():
        msg = (
            f"timezone: {_shown(name)} is not an IANA time zone this server knows; give a name such as "
            "Europe/Paris, America/New_York or UTC (a fixed offset is Etc/GMT-2 for UTC+2)"
        )
        raise ConfigError(msg)
    return name


def _zone(name: str | None) -> dt.tzinfo:
    return dt.UTC if name in (None, "UTC") else ZoneInfo(str(name))


def next_tick(schedule: str, timezone: str | None, after: float) -> float | None:
    """The first tick of `schedule` in `timezone` strictly after `after` (wall-clock seconds); None if none.

    None: the expression has no tick within croniter's search (a year that is past, a date that never
    comes), so the cron never fires again.
    """
    start = dt.datetime.fromtimestamp(after, _zone(timezone))
    try:
        found = croniter(schedule, start).get_next(dt.datetime)
    except (CroniterError, ValueError, OverflowError):
        return None
    tick: float = found.timestamp()
    return tick if tick > after else None


def check_schedule(schedule: str, timezone: str | None, *, now: float) -> float:
    """A schedule checked (with its zone, already checked); its first tick after `now`.

    Raises:
        ConfigError: too long, characters cron does not use, not an expression croniter reads, or one
            that never fires.
    """
    if len(schedule) > LONGEST_SCHEDULE or _CHARACTERS.fullmatch(schedule) is None:
        msg = (
            f"schedule: {_shown(schedule)} is not a cron expression; give five fields (minute hour "
            "day-of-month month day-of-week, such as '*/5 * * * *'), a sixth for the second, or @hourly, "
            f"@daily..., at most {LONGEST_SCHEDULE} characters"
        )
        raise ConfigError(msg)
    try:
        croniter(schedule, dt.datetime.fromtimestamp(now, dt.UTC))
    except (CroniterError, ValueError) as exc:
        msg = (
            f"schedule: {_shown(schedule)} is not a cron expression croniter reads ({str(exc)[:120]}); "
            "give five fields (minute hour day-of-month month day-of-week), a sixth for the second, or an "
            "alias such as @hourly"
        )
        raise ConfigError(msg) from None
    first = next_tick(schedule, timezone, now)
    if first is None:
        raise ConfigError(f"schedule: {_shown(schedule)} never fires (no such date from now on)")
    return first


def check_end_time(end_time: dt.datetime | None, *, now: float, first: float | None) -> float | None:
    """When a cron stops, checked: after now and not before its first tick; None for never.

    A time without an offset is read as UTC (what `datetime.isoformat()` of a naive time sends).

    Raises:
        ConfigError: a time in the past, or one before the schedule's first tick (the cron would never run).
    """
    if end_time is None:
        return None
    if end_time.tzinfo is None:
        end_time = end_time.replace(tzinfo=dt.UTC)
    try:
        stamp = end_time.timestamp()
    except (OverflowError, ValueError, OSError):
        raise ConfigError(f"end_time: {end_time.isoformat()} is not a time this server can keep") from None
    if stamp <= now:
        raise ConfigError(f"end_time: {end_time.isoformat()} is in the past; the cron would never run")
    if first is not None and stamp < first:
        shown = dt.datetime.fromtimestamp(first, dt.UTC).isoformat()
        msg = f"end_time: {end_time.isoformat()} is before the schedule's first tick ({shown}): it never runs"
        raise ConfigError(msg)
    return stamp
