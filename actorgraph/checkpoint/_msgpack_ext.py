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
"module:QualName" and their data. Saving one needs its class in the allowlist;
loading one looks the path up in the allowlist before anything is imported.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import enum
import importlib
import inspect
import sys
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping
from decimal import Decimal
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import msgpack  # type: ignore[import-untyped]

from actorgraph._errors import ConfigError, SerializationError

__all__ = ["MAGIC", "Allowlist", "Codec", "Refused", "class_path"]

MAGIC = b"AGm\x01"
"""The first bytes of everything `MsgpackSerializer` writes: "AG", "m" for msgpack, format 1."""

BIGINT, TUPLE, SET, FROZENSET, DATETIME, DATE, TIME, TIMEDELTA, UUID, DECIMAL = range(1, 11)
ENUM, DATACLASS, PYDANTIC = 20, 21, 22

_FIX = "or use PickleSerializer() for trusted data"
_SUPPORTED = (
    "MsgpackSerializer saves None, bool, int, float, str, bytes, list, dict, tuple, set, "
    "frozenset, datetime/date/time/timedelta, UUID and Decimal, plus enums, dataclasses and "
    "pydantic models whose class is in allowed=[...]"
)


def class_path(cls: type) -> str:
    """The stored name of a class: "module:QualName"."""
    return f"{cls.__module__}:{cls.__qualname__}"


def _type_name(value: object) -> str:
    cls = type(value)
    return cls.__qualname__ if cls.__module__ == "builtins" else f"{cls.__module__}.{cls.__qualname__}"


class Refused(Exception):  # noqa: N818 - internal signal, never seen by users
    """A value `dumps` refuses; `reason` says why and what to do."""

    def __init__(self, value: object, reason: str) -> None:
        self.value = value
        self.reason = reason
        super().__init__(reason)


_BUILTINS = (bool, dict, list, tuple, set, frozenset, str, bytes, int, float)


def _unsupported(value: object) -> Refused:
    base = next((b for b in _BUILTINS if isinstance(value, b)), None)
    if base is not None:
        hint = f"subclasses of {base.__name__} are not supported; convert it to a plain {base.__name__}"
    elif isinstance(value, type):
        hint = "classes are code, not data; store its name instead"
    elif callable(value):
        hint = "functions and callables are code, not data; store a name for it instead"
    else:
        hint = (
            "this type is not supported; make it a dataclass or pydantic model and add its "
            "class to MsgpackSerializer(allowed=[...])"
        )
    return Refused(value, f"{hint}, {_FIX}. ({_SUPPORTED}.)")


def _names_ok(dotted: str) -> bool:
    return all(part.isidentifier() for part in dotted.split("."))


class Allowlist:
    """Which user classes may be saved and loaded; never imports what it does not allow."""

    def __init__(self, allowed: Iterable[type | str]) -> None:
        self.by_path: dict[str, type] = {}
        paths: set[str] = set()
        modules: set[str] = set()
        for item in allowed:
            if isinstance(item, type):
                if not (
                    issubclass(item, enum.Enum) or dataclasses.is_dataclass(item) or _is_pydantic_class(item)
                ):
                    raise ConfigError(
                        f"allowed=[...] holds {item.__qualname__}, which is not an enum, dataclass or "
                        f"pydantic model; MsgpackSerializer saves only those classes (make it a "
                        f"dataclass, or use PickleSerializer() for trusted data)"
                    )
                path = class_path(item)
                if self.by_path.setdefault(path, item) is not item:
                    raise ConfigError(
                        f"allowed=[...] holds two different classes named {path!r}; "
                        f"keep one of them (a class defined in a function is one class per call)"
                    )
            elif isinstance(item, str):
                module, sep, qualname = item.partition(":")
                if not _names_ok(module) or (sep and not _names_ok(qualname)):
                    raise ConfigError(
                        f"allowed=[...] holds {item!r}, which is neither a module name "
                        f"('package.module') nor a class path ('package.module:Class')"
                    )
                (paths if sep else modules).add(item)
            else:
                raise ConfigError(
                    f"allowed=[...] holds {item!r} of type {type(item).__name__}; "
                    f"give classes, module names or 'module:Class' strings"
                )
        self.paths = frozenset(paths)
        self.modules = frozenset(modules)
        self._classes = set(self.by_path.values())
        self._verdicts: dict[type, str | None] = {}
        self._loaded: dict[str, type] = {}

    def check(self, cls: type) -> None:
        """Raise `Refused` unless instances of `cls` may be saved (and so loaded back)."""
        try:
            verdict = self._verdicts[cls]
        except KeyError:
            verdict = self._verdicts.setdefault(cls, self._judge(cls))
        if verdict is not None:
            raise Refused(cls, verdict)

    def _judge(self, cls: type) -> str | None:
        path = class_path(cls)
        if cls in self._classes:
            return None
        if path in self.paths or cls.__module__ in self.modules:
            found: Any = sys.modules.get(cls.__module__)
            for part in cls.__qualname__.split("."):
                found = getattr(found, part, None)
            if found is cls:
                return None
            return (
                f"its class path {path!r} does not lead back to it (is it defined inside a "
                f"function?), so it could not be loaded; pass the class itself: "
                f"MsgpackSerializer(allowed=[{cls.__qualname__}, ...])"
            )
        return (
            f"class {path!r} is not allowed; add it with MsgpackSerializer(allowed=["
            f"{cls.__qualname__}, ...]) (or its module, allowed=[{cls.__module__!r}]), {_FIX}"
        )

    def resolve(self, path: str) -> type:
        """The class a stored path names, importing its module only if the allowlist names it."""
        found = self.by_path.get(path)
        if found is None:
            found = self._loaded.get(path)
        if found is not None:
            return found
        module, sep, qualname = path.partition(":")
        if not sep or not (path in self.paths or module in self.modules):
            raise SerializationError(
                f"the stored data names class {path!r}, which this MsgpackSerializer does not "
                f"allow, so it was not loaded (nothing was imported). If you trust the data, add "
                f"the class to MsgpackSerializer(allowed=[...]) (as the class, 'module:Class' "
                f"or the module name)"
            )
        if not _names_ok(qualname):
            raise SerializationError(f"the stored class path {path!r} is malformed; the data is damaged")
        try:
            obj: Any = importlib.import_module(module)
            for part in qualname.split("."):
                obj = getattr(obj, part)
        except Exception as exc:
            raise SerializationError(
                f"could not find class {path!r} named by the stored data ({type(exc).__name__}: "
                f"{exc}); was it renamed or moved? Restore it under that name to load this data"
            ) from exc
        if not isinstance(obj, type):
            raise SerializationError(f"the stored data names {path!r}, which is not a class")
        return self._loaded.setdefault(path, obj)


def _list(value: object, length: int) -> list[Any]:
    if type(value) is not list or len(value) != length:
        raise TypeError(f"expected a list of {length} items, found {type(value).__name__}")
    return value


def _dict(value: object) -> dict[str, Any]:
    if type(value) is not dict or not all(type(key) is str for key in value):
        raise TypeError(f"expected a dict of names, found {type(value).__name__}")
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


def _bigint(n: int) -> msgpack.ExtType:
    return msgpack.ExtType(BIGINT, n.to_bytes((n.bit_length() + 8) // 8, "big", signed=True))


class Codec:
    """Packs and unpacks values with the tagged types, under one allowlist."""

    def __init__(self, allow: Allowlist) -> None:
        self.allow = allow
        self._params: dict[type, tuple[tuple[str, bool], ...] | str] = {}
        self._encoders: dict[type, Callable[[Any], Any]] = {
            int: _bigint,
            tuple: lambda t: [_MARK[TUPLE], *t],
            set: lambda s: [_MARK[SET], *s],
            frozenset: lambda s: [_MARK[FROZENSET], *s],
            dt.datetime: lambda d: [_MARK[DATETIME], *_datetime_fields(d)],
            dt.date: lambda d: [_MARK[DATE], d.year, d.month, d.day],
            dt.time: lambda t: [_MARK[TIME], *_time_fields(t)],
            dt.timedelta: lambda d: [_MARK[TIMEDELTA], d.days, d.seconds, d.microseconds],
            uuid.UUID: lambda u: msgpack.ExtType(UUID, u.bytes),
            Decimal: lambda d: msgpack.ExtType(DECIMAL, str(d).encode("ascii")),
        }
        self._builders: dict[int, Callable[[list[Any]], Any]] = {
            TUPLE: tuple,
            SET: set,
            FROZENSET: frozenset,
            DATETIME: _make_datetime,
            DATE: lambda fields: dt.date(*_list(fields, 3)),
            TIME: _make_time,
            TIMEDELTA: lambda fields: dt.timedelta(*_list(fields, 3)),
            ENUM: self._load_enum,
            DATACLASS: self._load_dataclass,
            PYDANTIC: self._load_pydantic,
        }

    def pack(self, value: Any) -> bytes:
        """Msgpack bytes for `value`; raises `Refused` for what could not be loaded back."""
        return msgpack.packb(  # type: ignore[no-any-return]
            value, default=self.default, use_bin_type=True, strict_types=True, unicode_errors="surrogatepass"
        )

    def unpack(self, data: bytes | memoryview) -> Any:
        """The value of msgpack bytes written by `pack`, or `SerializationError`."""
        open_tags = 0

        def ext_hook(code: int, payload: bytes) -> Any:
            nonlocal open_tags
            tag = _TAGS.get(code)
            if tag is not None:
                if payload:
                    raise ValueError(f"the type marker {code} holds data")
                open_tags += 1
                return tag
            decoder = _DECODERS.get(code)
            if decoder is not None:
                return decoder(payload)
            raise SerializationError(
                f"the stored data holds ext type {code}, which this version of actorgraph does not "
                f"know; it was written by a newer version or is damaged. Load it with that version"
            )

        def list_hook(items: list[Any]) -> Any:
            nonlocal open_tags
            if items and type(items[0]) is _Tag:
                open_tags -= 1
                code = items[0].code
                del items[0]
                return self._builders[code](items)
            return items

        try:
            value = msgpack.unpackb(
                data,
                ext_hook=ext_hook,
                list_hook=list_hook,
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
        if open_tags:
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
        if _is_pydantic(value):
            return [_MARK[PYDANTIC], *self.pydantic_payload(value)]
        raise _unsupported(value)

    def enum_payload(self, member: enum.Enum) -> list[Any]:
        """[class path, value] of an allowed enum member."""
        self.allow.check(type(member))
        return [class_path(type(member)), member.value]

    def dataclass_payload(self, obj: Any) -> list[Any]:
        """[class path, init fields, other fields] of an allowed dataclass instance."""
        cls = type(obj)
        self.allow.check(cls)
        init: dict[str, Any] = {}
        other: dict[str, Any] = {}
        for name, is_init in self._dataclass_params(cls):
            try:
                (init if is_init else other)[name] = getattr(obj, name)
            except AttributeError:
                if is_init:
                    raise Refused(
                        obj, f"its field {name!r} is not set, so it could not be re-created"
                    ) from None
        return [class_path(cls), init, other]

    def _dataclass_params(self, cls: type) -> tuple[tuple[str, bool], ...]:
        try:
            known = self._params[cls]
        except KeyError:
            known = self._params.setdefault(cls, self._judge_dataclass(cls))
        if isinstance(known, str):
            raise Refused(cls, known)
        return known

    def _judge_dataclass(self, cls: type) -> tuple[tuple[str, bool], ...] | str:
        fields = tuple((field.name, field.init) for field in dataclasses.fields(cls))
        init_names = {name for name, is_init in fields if is_init}
        params: Mapping[str, inspect.Parameter]
        try:
            params = inspect.signature(cls).parameters
        except (TypeError, ValueError):
            params = {}
        var_kw = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
        keywords = {n for n, p in params.items() if p.kind not in (p.POSITIONAL_ONLY, p.VAR_POSITIONAL)}
        required = [
            n
            for n, p in params.items()
            if p.default is p.empty
            and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
            and n not in init_names
        ]
        missing = sorted(init_names - keywords) if params and not var_kw else []
        if required or missing:
            what = f"requires {required[0]!r}, which is not a field (an InitVar?)" if required else ""
            what = what or f"does not accept its field {missing[0]!r}"
            return f"its __init__ {what}, so it could not be re-created on load; {_FIX}"
        return fields

    def pydantic_payload(self, model: Any) -> list[Any]:
        """[class path, model_dump(mode="python")] of an allowed pydantic model."""
        cls = type(model)
        self.allow.check(cls)
        try:
            data = model.model_dump(mode="python")
        except Exception as exc:  # noqa: BLE001 - the model's own serializers may raise anything
            raise Refused(model, f"its model_dump() failed ({type(exc).__name__}: {exc})") from None
        return [class_path(cls), data]

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
                parts += [(f"[<key {_type_name(key)}>]", key), (f"[{key!r}]", item)]
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
        if _is_pydantic(value):
            data = self.pydantic_payload(value)[1]
            if type(data) is dict:
                return [(f".{name}", item) for name, item in data.items()]
            return [(".model_dump()", data)]
        raise _unsupported(value)

    # -- loading ---------------------------------------------------------------------------

    def _user_class(self, path: object, check: Callable[[type], bool], kind: str) -> type:
        if type(path) is not str:
            raise TypeError("class path is not a string")
        cls = self.allow.resolve(path)
        if not check(cls):
            raise SerializationError(f"the stored data names {path!r} as {kind}, but it is not one now")
        return cls

    def _load_enum(self, items: list[Any]) -> Any:
        path, value = items
        cls = self._user_class(path, lambda c: issubclass(c, enum.Enum), "an enum")
        return _rebuild(path, lambda: cls(value))

    def _load_dataclass(self, items: list[Any]) -> Any:
        path, init, other = items
        cls = self._user_class(path, dataclasses.is_dataclass, "a dataclass")
        init, other = _dict(init), _dict(other)
        settable = {field.name for field in dataclasses.fields(cls) if not field.init}
        if not settable.issuperset(other):
            raise SerializationError(
                f"the stored {path!r} sets unknown fields {sorted(set(other) - settable)}; "
                f"the data is damaged"
            )

        def build() -> Any:
            obj = cls(**init)
            for name, item in other.items():
                object.__setattr__(obj, name, item)
            return obj

        return _rebuild(path, build)

    def _load_pydantic(self, items: list[Any]) -> Any:
        path, fields = items
        cls: Any = self._user_class(path, _is_pydantic_class, "a pydantic model")
        return _rebuild(path, lambda: cls.model_validate(fields))


def _rebuild(path: object, build: Callable[[], Any]) -> Any:
    try:
        return build()
    except Exception as exc:
        raise SerializationError(
            f"could not re-create {path!r} from the stored data ({type(exc).__name__}: {exc}); "
            f"did the class change since the data was saved?"
        ) from exc


def _is_pydantic_class(cls: type) -> bool:
    return callable(getattr(cls, "model_dump", None)) and callable(getattr(cls, "model_validate", None))


def _is_pydantic(value: object) -> bool:
    return _is_pydantic_class(type(value))


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
        f"its tzinfo of type {_type_name(tz)} cannot be saved; use datetime.timezone or "
        f"zoneinfo.ZoneInfo (by key), {_FIX}",
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
    days, seconds, micros, name = _list(fields, 4)
    offset = dt.timedelta(days, seconds, micros)
    return dt.timezone(offset) if name is None else dt.timezone(offset, name)


def _datetime_fields(d: dt.datetime) -> list[Any]:
    tz = _tz_fields(d.tzinfo)
    return [d.year, d.month, d.day, d.hour, d.minute, d.second, d.microsecond, d.fold, tz]


def _make_datetime(fields: list[Any]) -> dt.datetime:
    year, month, day, hour, minute, second, micro, fold, tz = fields
    return dt.datetime(year, month, day, hour, minute, second, micro, tzinfo=_make_tz(tz), fold=fold)


def _time_fields(t: dt.time) -> list[Any]:
    return [t.hour, t.minute, t.second, t.microsecond, t.fold, _tz_fields(t.tzinfo)]


def _make_time(fields: list[Any]) -> dt.time:
    hour, minute, second, micro, fold, tz = fields
    return dt.time(hour, minute, second, micro, tzinfo=_make_tz(tz), fold=fold)
