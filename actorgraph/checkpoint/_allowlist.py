"""Which user classes `MsgpackSerializer` may save and load, by name; it never imports what it does not allow.

Also what a refusal says: the supported types, and what to do instead.
"""

from __future__ import annotations

import dataclasses
import enum
import importlib
import sys
from collections.abc import Iterable
from typing import Any

from actorgraph._model.errors import ConfigError, SerializationError

__all__ = [
    "Allowlist",
    "Refused",
    "class_path",
    "is_pydantic",
    "is_pydantic_class",
    "type_name",
    "unsupported",
]

FIX = "or use PickleSerializer() for trusted data"
"""The advice every refusal ends with."""
_SUPPORTED = (
    "MsgpackSerializer saves None, bool, int, float, str, bytes, list, dict, tuple, set, "
    "frozenset, datetime/date/time/timedelta, UUID and Decimal, conversations' messages "
    "(actorgraph.messages, langchain-core), plus enums, dataclasses and "
    "pydantic models whose class is in allowed=[...]"
)


_MESSAGE_CLASSES = frozenset(
    {
        "actorgraph.messages._remove:RemoveMessage",
        *(
            f"langchain_core.messages.{module}:{name}{chunk}"
            for module, name in (
                ("ai", "AIMessage"),
                ("human", "HumanMessage"),
                ("system", "SystemMessage"),
                ("tool", "ToolMessage"),
                ("chat", "ChatMessage"),
                ("function", "FunctionMessage"),
            )
            for chunk in ("", "Chunk")
        ),
        "langchain_core.messages.modifier:RemoveMessage",
    }
)
"""Classes every allowlist holds: conversations (actorgraph.messages, langchain-core's messages).

They are records of plain data (a dataclass, pydantic models), so loading them
runs no code of the data's choosing; langchain-core is imported only to load
data that holds its messages.
"""


def class_path(cls: type) -> str:
    """The stored name of a class: "module:QualName"."""
    return f"{cls.__module__}:{cls.__qualname__}"


def type_name(value: object) -> str:
    cls = type(value)
    return cls.__qualname__ if cls.__module__ == "builtins" else f"{cls.__module__}.{cls.__qualname__}"


class Refused(Exception):  # noqa: N818 - internal signal, never seen by users
    """A value `dumps` refuses; `reason` says why and what to do."""

    def __init__(self, value: object, reason: str) -> None:
        self.value = value
        self.reason = reason
        super().__init__(reason)


_BUILTINS = (bool, dict, list, tuple, set, frozenset, str, bytes, int, float)


def unsupported(value: object) -> Refused:
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
    return Refused(value, f"{hint}, {FIX}. ({_SUPPORTED}.)")


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
                    issubclass(item, enum.Enum) or dataclasses.is_dataclass(item) or is_pydantic_class(item)
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
        self.paths = frozenset(paths | _MESSAGE_CLASSES)
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
            f"{cls.__qualname__}, ...]) (or its module, allowed=[{cls.__module__!r}]), {FIX}"
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


def is_pydantic_class(cls: type) -> bool:
    return callable(getattr(cls, "model_dump", None)) and callable(getattr(cls, "model_validate", None))


def is_pydantic(value: object) -> bool:
    return is_pydantic_class(type(value))
