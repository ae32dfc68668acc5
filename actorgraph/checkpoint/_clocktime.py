"""Dates and times with their time zones, as the plain values `MsgpackSerializer` stores.

A zone is stored by name (`zoneinfo.ZoneInfo`) or as a fixed offset
(`datetime.timezone`); any other tzinfo is refused, since it could not be re-created.
"""

from __future__ import annotations

import datetime as dt
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from actorgraph._model.errors import SerializationError
from actorgraph.checkpoint._allowlist import FIX, Refused, type_name

__all__ = ["datetime_fields", "make_datetime", "make_time", "time_fields"]


def _four(fields: Any) -> list[Any]:
    if type(fields) is not list or len(fields) != 4:  # noqa: PLR2004 - days, seconds, micros, name
        msg = f"expected a list of 4 items, found {type(fields).__name__}"
        raise TypeError(msg)  # the decoder turns it into a SerializationError
    return fields


def _tz_fields(tz: dt.tzinfo | None) -> Any:
    if tz is None:
        return None
    if type(tz) is ZoneInfo and tz.key is not None:
        return tz.key
    if type(tz) is dt.timezone:
        offset = tz.utcoffset(None)
        name = tz.tzname(None)
        plain = dt.timezone(offset).tzname(None)
        return [offset.days, offset.seconds, offset.microseconds, None if name == plain else name]
    raise Refused(
        tz,
        f"its tzinfo of type {type_name(tz)} cannot be saved; use datetime.timezone or "
        f"zoneinfo.ZoneInfo (by key), {FIX}",
    )


def _make_tz(fields: Any) -> dt.tzinfo | None:
    if fields is None:
        return None
    if type(fields) is str:
        try:
            return ZoneInfo(fields)
        except ZoneInfoNotFoundError as exc:
            raise SerializationError(
                f"the stored data uses time zone {fields!r}, which this system does not know; "
                f"install the tzdata package (pip install tzdata) to load it"
            ) from exc
    days, seconds, micros, name = _four(fields)
    offset = dt.timedelta(days, seconds, micros)
    return dt.timezone(offset) if name is None else dt.timezone(offset, name)


def datetime_fields(d: dt.datetime) -> list[Any]:
    tz = _tz_fields(d.tzinfo)
    return [d.year, d.month, d.day, d.hour, d.minute, d.second, d.microsecond, d.fold, tz]


def make_datetime(fields: list[Any]) -> dt.datetime:
    year, month, day, hour, minute, second, micro, fold, tz = fields
    return dt.datetime(year, month, day, hour, minute, second, micro, tzinfo=_make_tz(tz), fold=fold)


def time_fields(t: dt.time) -> list[Any]:
    return [t.hour, t.minute, t.second, t.microsecond, t.fold, _tz_fields(t.tzinfo)]


def make_time(fields: list[Any]) -> dt.time:
    hour, minute, second, micro, fold, tz = fields
    return dt.time(hour, minute, second, micro, tzinfo=_make_tz(tz), fold=fold)
