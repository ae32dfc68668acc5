"""The msgpack form behind `MsgpackSerializer`: tagged values for what users put in states.

Plain values (None, bool, int, float, str, bytes, list, dict) are msgpack's own
types, packed and unpacked in C. Everything else reaches `Codec.default`, which
turns it into either a small ext (big ints, UUIDs, Decimals) or a *tagged
array*: an array whose first item is an empty ext naming the type, followed by
the parts (a tuple's items, a dataclass's class path and fields...). msgpack
packs the parts in the same pass, and on loading `list_hook` turns tagged arrays
back into values from the inside out. So nesting never calls msgpack again from
a hook (which would use C stack per level), and a tuple or a frozen dataclass
works as a dict key like any other value.

User classes (enums, dataclasses, pydantic models) are stored as the class path
"module:QualName" and their data (`_msgpack_classes.py`). Saving one needs its
class in the allowlist; loading one looks the path up in the allowlist before
anything is imported.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import enum
import uuid
from collections.abc import Callable, Iterator, Mapping
from decimal import Decimal
from typing import Any

import msgpack  # type: ignore[import-untyped]

from actorgraph._model.errors import SerializationError
from actorgraph.checkpoint._allowlist import (
    Allowlist,
    Refused,
    is_pydantic,
    type_name,
    unsupported,
)
from actorgraph.checkpoint._clocktime import datetime_fields, make_datetime, make_time, time_fields
from actorgraph.checkpoint._msgpack_classes import UserClasses

__all__ = ["MAGIC", "Codec"]

MAGIC = b"AGm\x01"
"""The first bytes of everything `MsgpackSerializer` writes: "AG", "m" for msgpack, format 1."""

BIGINT, TUPLE, SET, FROZENSET, DATETIME, DATE, TIME, TIMEDELTA, UUID, DECIMAL = range(1, 11)
ENUM, DATACLASS, PYDANTIC = 20, 21, 22


def _list(value: object, length: int) -> list[Any]:
    if type(value) is not list or len(value) != length:
        raise TypeError(f"expected a list of {length} items, found {type(value).__name__}")
    return value


class _Tag:
    """What a type marker loads as, until `list_hook` builds the tagged array it starts."""

    __slots__ = ("code",)

    def __init__(self, code: int) -> None:
        self.code = code


_TAGGED = (TUPLE, SET, FROZENSET, DATETIME, DATE, TIME, TIMEDELTA, ENUM, DATACLASS, PYDANTIC)
_MARK = {code: msgpack.ExtType(code, b"") for code in _TAGGED}
_TAGS = {code: _Tag(code) for code in _TAGGED}
_DECODERS: dict[int, Callable[[bytes], Any]] = {
    BIGINT: lambda data: int.from_bytes(data, "big", signed=True),
    UUID: lambda data: uuid.UUID(bytes=data),
    DECIMAL: lambda data: Decimal(data.decode("ascii")),
}
_LEAVES = frozenset({bool, int, float, str, bytes, bytearray, memoryview})
_DAMAGED = (ValueError, TypeError, LookupError, ArithmeticError, OSError, RecursionError)


class _Reader:
    """Msgpack's hooks while one value is read: type markers open tagged arrays, lists close them."""

    def __init__(self, builders: Mapping[int, Callable[[list[Any]], Any]]) -> None:
        self.builders = builders
        self.open_tags = 0

    def ext_hook(self, code: int, payload: bytes) -> Any:
        tag = _TAGS.get(code)
        if tag is not None:
            if payload:
                msg = f"the type marker {code} holds data"
                raise ValueError(msg)
            self.open_tags += 1
            return tag
        decoder = _DECODERS.get(code)
        if decoder is not None:
            return decoder(payload)
        raise SerializationError(
            f"the stored data holds ext type {code}, which this version of actorgraph does not "
            f"know; it was written by a newer version or is damaged. Load it with that version"
        )

    def list_hook(self, items: list[Any]) -> Any:
        if items and type(items[0]) is _Tag:
            self.open_tags -= 1
            code = items[0].code
            del items[0]
            return self.builders[code](items)
        return items


def _bigint(n: int) -> msgpack.ExtType:
    return msgpack.ExtType(BIGINT, n.to_bytes((n.bit_length() + 8) // 8, "big", signed=True))


class Codec(UserClasses):
    """Packs and unpacks values with the tagged types, under one allowlist."""

    def __init__(self, allow: Allowlist) -> None:
        super().__init__(allow)
        self._encoders: dict[type, Callable[[Any], Any]] = {
            int: _bigint,
            tuple: lambda t: [_MARK[TUPLE], *t],
            set: lambda s: [_MARK[SET], *s],
            frozenset: lambda s: [_MARK[FROZENSET], *s],
            dt.datetime: lambda d: [_MARK[DATETIME], *datetime_fields(d)],
            dt.date: lambda d: [_MARK[DATE], d.year, d.month, d.day],
            dt.time: lambda t: [_MARK[TIME], *time_fields(t)],
            dt.timedelta: lambda d: [_MARK[TIMEDELTA], d.days, d.seconds, d.microseconds],
            uuid.UUID: lambda u: msgpack.ExtType(UUID, u.bytes),
            Decimal: lambda d: msgpack.ExtType(DECIMAL, str(d).encode("ascii")),
        }
        self._builders: dict[int, Callable[[list[Any]], Any]] = {
            TUPLE: tuple,
            SET: set,
            FROZENSET: frozenset,
            DATETIME: make_datetime,
            DATE: lambda fields: dt.date(*_list(fields, 3)),
            TIME: make_time,
            TIMEDELTA: lambda fields: dt.timedelta(*_list(fields, 3)),
            ENUM: self._load_enum,
            DATACLASS: self._load_dataclass,
            PYDANTIC: self._load_pydantic,
        }

    def pack(self, value: Any, prefix: bytes = b"") -> bytes:
        """`prefix` and the msgpack bytes of `value`; raises `Refused` for what could not be loaded back.

        The bytes are built in the packer's buffer and copied out once, with the
        prefix: a value of N bytes costs two buffers of N, not four (a str
        encoded apart, the packer's result, then the prefix added). Buffers
        above 32 MiB are fresh pages on every call, so each copy saved there
        is time saved in proportion. Strings are encoded straight from their
        UTF-8 form; only a str with lone surrogates (which strict UTF-8
        refuses) is packed again with "surrogatepass", the same bytes the
        first pass would give any other string.
        """
        try:
            return self._pack(value, prefix, None)
        except UnicodeEncodeError:
            return self._pack(value, prefix, "surrogatepass")

    def _pack(self, value: Any, prefix: bytes, unicode_errors: str | None) -> bytes:
        packer = msgpack.Packer(
            default=self.default,
            use_bin_type=True,
            strict_types=True,
            unicode_errors=unicode_errors,
            autoreset=False,
        )
        packer.pack(value)
        with packer.getbuffer() as packed:
            return b"".join((prefix, packed))

    def unpack(self, data: bytes | memoryview) -> Any:
        """The value of msgpack bytes written by `pack`, or `SerializationError`."""
        reader = _Reader(self._builders)
        try:
            value = msgpack.unpackb(
                data,
                ext_hook=reader.ext_hook,
                list_hook=reader.list_hook,
                raw=False,
                strict_map_key=False,
                unicode_errors="surrogatepass",
            )
        except SerializationError:
            raise
        except (*_DAMAGED, msgpack.UnpackException) as exc:
            raise SerializationError(
                f"the stored data is damaged or truncated and cannot be loaded ({type(exc).__name__}: "
                f"{exc}); restore it from a good copy or resume from an older checkpoint"
            ) from exc
        if reader.open_tags:
            raise SerializationError(
                "the stored data is damaged: it holds a type marker out of place; it was not written "
                "by MsgpackSerializer or was altered"
            )
        return value

    # -- saving ----------------------------------------------------------------------------

    def default(self, value: Any) -> Any:
        """Msgpack's hook for what it does not pack itself: an ext or a tagged array."""
        encoder = self._encoders.get(type(value))
        if encoder is not None:
            return encoder(value)
        if isinstance(value, enum.Enum):
            return [_MARK[ENUM], *self.enum_payload(value)]
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            return [_MARK[DATACLASS], *self.dataclass_payload(value)]
        if is_pydantic(value):
            return [_MARK[PYDANTIC], *self.pydantic_payload(value)]
        raise unsupported(value)

    def find_refusal(self, value: Any) -> tuple[str, Refused] | None:
        """The path and reason of the first part of `value` that `pack` refuses, if any.

        Walks the value in the order msgpack packs it, without recursion (so any
        depth is fine), and finds reference cycles too.
        """
        stack: list[tuple[Any, str, Iterator[tuple[str, Any]] | None]] = [(value, "", None)]
        active: set[int] = set()
        while stack:
            obj, path, parts = stack[-1]
            if parts is None:
                if obj is None or type(obj) in _LEAVES:
                    stack.pop()
                    continue
                if id(obj) in active:
                    return path, Refused(obj, "it contains itself (a reference cycle); break the cycle")
                try:
                    parts = iter(self._parts(obj))
                except Refused as refused:
                    return path, Refused(obj, refused.reason)
                active.add(id(obj))
                stack[-1] = (obj, path, parts)
            step = next(parts, None)
            if step is None:
                active.discard(id(obj))
                stack.pop()
            else:
                stack.append((step[1], path + step[0], None))
        return None

    def _parts(self, value: Any) -> list[tuple[str, Any]]:
        cls = type(value)
        if cls is dict:
            parts: list[tuple[str, Any]] = []
            for key, item in value.items():
                parts += [(f"[<key {type_name(key)}>]", key), (f"[{key!r}]", item)]
            return parts
        if cls in (list, tuple):
            return [(f"[{index}]", item) for index, item in enumerate(value)]
        if cls in (set, frozenset):
            return [("{...}", item) for item in value]
        if cls in self._encoders:
            self._encoders[cls](value)  # raises for an unsupported tzinfo; nothing nested
            return []
        if isinstance(value, enum.Enum):
            return [(".value", self.enum_payload(value)[1])]
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            _, init, other = self.dataclass_payload(value)
            return [(f".{name}", item) for name, item in {**init, **other}.items()]
        if is_pydantic(value):
            return [(f".{name}", item) for name, item in self.pydantic_payload(value)[1].items()]
        raise unsupported(value)
