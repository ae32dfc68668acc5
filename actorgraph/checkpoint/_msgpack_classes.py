"""User classes in the msgpack form: enums, dataclasses and pydantic models, saved and loaded by name.

Each is stored as its class path ("module:QualName") and its data. Saving one
needs its class in the allowlist; loading one looks the path up in the
allowlist before anything is imported, and re-creates the value from its data:
an enum from its value, a dataclass through its `__init__`, a pydantic model
from its field values, as they were (its validators ran when it was made).
"""

from __future__ import annotations

import dataclasses
import enum
import inspect
from collections.abc import Callable, Mapping
from typing import Any

from actorgraph._model.errors import SerializationError
from actorgraph.checkpoint._allowlist import FIX, Allowlist, Refused, class_path, is_pydantic_class

__all__ = ["UserClasses"]


def _dict(value: object) -> dict[str, Any]:
    if type(value) is not dict or not all(type(key) is str for key in value):
        raise TypeError(f"expected a dict of names, found {type(value).__name__}")
    return value


class UserClasses:
    """The stored form of user classes' instances, under one allowlist (`Codec`'s saving and loading)."""

    def __init__(self, allow: Allowlist) -> None:
        self.allow = allow
        self._params: dict[type, tuple[tuple[str, bool], ...] | str] = {}

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
            return f"its __init__ {what}, so it could not be re-created on load; {FIX}"
        return fields

    def pydantic_payload(self, model: Any) -> list[Any]:
        """[class path, field values, names of the fields set] of an allowed pydantic model.

        The values are the model's own (nested models, enums and dataclasses
        packed as themselves, so their classes are allowed as any other's), and
        loading puts them back without validating them again: a value is
        validated once, when it enters a state, so a validator that transforms
        its input (prefixes a name) is not applied again on every load.
        """
        cls = type(model)
        self.allow.check(cls)
        try:
            values = {name: getattr(model, name) for name in cls.model_fields}
            values.update(model.__pydantic_extra__ or {})
            fields_set = sorted(model.model_fields_set)
        except Exception as exc:  # noqa: BLE001 - a model's own attribute hooks may raise anything
            raise Refused(model, f"its fields could not be read ({type(exc).__name__}: {exc})") from None
        return [class_path(cls), values, fields_set]

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
        """A model from its stored values, not validated again (`model_dump` data of old: validated)."""
        if len(items) == 2:  # noqa: PLR2004 - [path, model_dump()], as actorgraph stored models before
            path, dumped = items
            cls: Any = self._user_class(path, is_pydantic_class, "a pydantic model")
            return _rebuild(path, lambda: cls.model_validate(dumped))
        path, values, fields_set = items
        cls = self._user_class(path, is_pydantic_class, "a pydantic model")
        values = _dict(values)
        if type(fields_set) is not list or not all(type(name) is str for name in fields_set):
            raise TypeError("the names of the fields set are not a list of strings")
        return _rebuild(path, lambda: cls.model_construct(_fields_set=set(fields_set), **values))


def _rebuild(path: object, build: Callable[[], Any]) -> Any:
    try:
        return build()
    except Exception as exc:
        raise SerializationError(
            f"could not re-create {path!r} from the stored data ({type(exc).__name__}: {exc}); "
            f"did the class change since the data was saved?"
        ) from exc
