"""The node cache's keys: the bytes a vertex's input is digested from, an encoding that carries every type.

Two inputs get one key exactly when a vertex could not tell them apart:

- **The same key**: values of the same types all the way down, and equal; a
  dict's items and a set's members in any order (a dict built in another
  order, or a set iterated in another process's order, is the same input).
- **Different keys**: `1`, `1.0` and `True` (equal in Python, but a vertex
  that formats or branches on its input tells them apart, and the serializer
  gives each back as its own type); `0.0` and `-0.0` (floats are compared bit
  for bit); `str` and `bytes`; `list` and `tuple`; `set` and `frozenset`; a
  dict and a dict subclass; and a container and any value that spells it out
  (`{"a": 1}` and `("dict", [["a", 1]])`). Every part of the encoding starts
  with its type's tag and its length, so the encoding is prefix-free: no
  value's bytes can be another value's, or begin another value's.
- **Other values** (datetimes, UUIDs, decimals; the enums, dataclasses and
  pydantic models the serializer allows) are the serializer's bytes of them,
  tagged as such. The serializer gives them back equal and of their class, so
  two different ones never share those bytes; a dict or a set *inside* one is
  encoded in the order it holds, so the same object built in another order
  is a miss (the vertex runs), never a wrong hit. What the serializer refuses
  is refused here too (`SerializationError`, saying where in the input it is).
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from typing import Any

from actorgraph._model.errors import SerializationError

__all__ = ["encode"]

HEADER = b"AGk\x03"
"""The first bytes of every encoding: earlier versions digested serializer bytes (`AGm\\x01`...), then
tagged text and sets alike (`AGk\\x02`: `""` and `set()` shared a key), so no key of this encoding
is a key of theirs, whatever they were given."""

_FLOAT = struct.Struct("!d")
_LONG = struct.Struct("!q")
_INT64 = 2**63
_SEQUENCES: dict[type, bytes] = {list: b"l", tuple: b"t"}
_SETS: dict[type, bytes] = {set: b"s", frozenset: b"f"}
# Every type's tag is its own (text is "u"): two types sharing one would share the keys of their empty values.


class _Refused(Exception):  # noqa: N818 - a signal inside this module, never raised out of it
    """A part of the input the serializer refused, with the path to it (built on the way out)."""

    def __init__(self, cause: Exception) -> None:
        super().__init__(str(cause))
        self.cause = cause
        self.steps: list[str] = []


def encode(value: Any, plain: Callable[[Any], bytes]) -> bytes:
    """The bytes `value` is keyed by (see the module): `HEADER`, then its prefix-free encoding.

    Args:
        value: the input (and what else the key holds).
        plain: the serializer's `dumps`, for the values this encoding does not spell out.

    Raises:
        SerializationError: a part of `value` that the serializer refuses (the
            message says where), or a value nested too deeply to walk.
    """
    try:
        return HEADER + _encode(value, plain)
    except _Refused as refused:
        where = "".join(reversed(refused.steps))
        msg = f"{refused.cause} (at {where} of the input)" if where else str(refused.cause)
        raise SerializationError(msg) from refused.cause
    except RecursionError:
        msg = "the input nests too deeply (hundreds of levels) to make a key of; flatten it"
        raise SerializationError(msg) from None


def _size(count: int) -> bytes:
    return count.to_bytes(8, "big")


def _text(value: str) -> bytes:
    text = value.encode("utf-8", "surrogatepass")  # a lone surrogate is still text of its own
    return b"u" + _size(len(text)) + text


def _integer(value: int) -> bytes:
    if -_INT64 <= value < _INT64:  # each int has one form: these 8 bytes, or its length and bytes
        return b"q" + _LONG.pack(value)
    number = value.to_bytes((value.bit_length() + 8) // 8, "big", signed=True)
    return b"i" + _size(len(number)) + number


_SCALARS: dict[type, Callable[[Any], bytes]] = {
    str: _text,
    bytes: lambda value: b"b" + _size(len(value)) + value,
    int: _integer,
    float: lambda value: b"r" + _FLOAT.pack(value),  # bit for bit: 0.0 and -0.0 differ
    bool: lambda value: b"T" if value else b"F",
    type(None): lambda _: b"N",
}


def _encode(value: Any, plain: Callable[[Any], bytes]) -> bytes:
    kind = type(value)  # exactly: a subclass is another type, left to the serializer
    scalar = _SCALARS.get(kind)
    if scalar is not None:
        return scalar(value)
    if kind in _SEQUENCES:
        return _SEQUENCES[kind] + _size(len(value)) + _sequence(value, plain)
    if kind is dict:
        return b"d" + _size(len(value)) + _mapping(value, plain)
    if kind in _SETS:
        return _SETS[kind] + _size(len(value)) + _members(value, plain)
    try:
        data = plain(value)
    except SerializationError as exc:
        raise _Refused(exc) from None
    return b"v" + _size(len(data)) + data


# One frame per level of the input in each of these and `_encode` (loops, not comprehensions, which
# are frames too), so an input nested as deeply as the serializer stores (511 levels) can be keyed.


def _sequence(values: list[Any] | tuple[Any, ...], plain: Callable[[Any], bytes]) -> bytes:
    parts: list[bytes] = []
    try:
        for item in values:
            parts.append(_encode(item, plain))  # noqa: PERF401 - a loop: one frame less per level
    except _Refused as refused:
        refused.steps.append(f"[{len(parts)}]")
        raise
    return b"".join(parts)


def _mapping(mapping: dict[Any, Any], plain: Callable[[Any], bytes]) -> bytes:
    """The items' keys and values, by key: a key's bytes are prefix-free, so they alone order the pairs."""
    pairs: list[bytes] = []
    key: Any = None
    done = b""
    try:
        for key, item in mapping.items():
            done = b""
            done = _encode(key, plain)
            pairs.append(done + _encode(item, plain))
    except _Refused as refused:
        refused.steps.append(f"[{key!r}]" if done else f"[<key {type(key).__name__}>]")
        raise
    return b"".join(sorted(pairs))


def _members(members: set[Any] | frozenset[Any], plain: Callable[[Any], bytes]) -> bytes:
    parts: list[bytes] = []
    try:
        for item in members:
            parts.append(_encode(item, plain))  # noqa: PERF401 - a loop: one frame less per level
    except _Refused as refused:
        refused.steps.append("{...}")
        raise
    return b"".join(sorted(parts))
