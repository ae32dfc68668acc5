"""State schemas: `Graph(state=TypedDict | dataclass | pydantic model)` checks every state.

A schema is optional. Given one, the run's input, every vertex's output and
every update are checked against it: required keys present, no unknown keys,
each value of the declared type where the annotation says so (container types
are checked, not their items), pydantic models validated by pydantic. A state
that does not fit fails the task that made it with an `InvalidUpdateError`
naming the vertex, the keys and what was expected, so a dropped key is never
silent. A `dict` returned into a dataclass or pydantic graph becomes an
instance of the declared class, so states always have their declared type.

`Annotated[list, append]` (or LangGraph's `Annotated[list, operator.add]`)
declares a key's reducer: a graph with a schema and no `merge=` merges with
those reducers.
"""

from __future__ import annotations

import collections.abc
import dataclasses
import inspect
import sys
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal, NotRequired, Required, Union

from actorgraph._model.errors import GraphValidationError, InvalidUpdateError
from actorgraph._model.managed import managed_kind
from actorgraph._model.sameness import unchanged

__all__ = ["Schema"]

Kind = Literal["typeddict", "dataclass", "pydantic"]
_NUMBERS: dict[type, tuple[type, ...]] = {float: (float, int), complex: (complex, float, int)}


class Schema:
    """A state schema, read once from its class when the graph is compiled.

    Attributes:
        cls: the schema class.
        kind: "typeddict", "dataclass" or "pydantic".
        annotations: key -> declared type (`Annotated`, `Required` and `NotRequired` removed).
        required: the keys every state must have.
        reducers: key -> reducer declared with `Annotated[type, reducer]`.
        role: which of the graph's schemas it is: "state", "input" or "output".
    """

    def __init__(self, cls: type, *, role: str = "state") -> None:
        """Read `cls`, the graph's `role` schema ("state", "input" or "output"), named so in messages.

        Raises:
            GraphValidationError: `cls` is not a TypedDict, a dataclass or a pydantic model.
        """
        self.cls = cls
        self.role = role
        self.kind = _kind(cls, role)
        hints = _hints(cls)
        self.annotations: dict[str, Any] = {}
        self.reducers: dict[str, Callable[[Any, Any], Any]] = {}
        self.managed: dict[str, str] = {}  # key -> the managed value the engine fills (`managed.py`)
        marked: dict[str, bool] = {}  # key -> Required[...] (True) or NotRequired[...] (False)
        for key, hint in hints.items():
            if key.startswith("_") and self.kind != "typeddict":
                continue
            if (kind := managed_kind(_bare_annotated(hint))) is not None:
                self.managed[key] = self._managed(key, kind)
                continue
            bare, reducer, required = _unwrap(hint)
            self.annotations[key] = bare
            if reducer is not None:
                self.reducers[key] = reducer
            if required is not None:
                marked[key] = required
        self.required = self._required(marked)

    def _managed(self, key: str, kind: str) -> str:
        if self.kind != "typeddict":
            msg = (
                f"{self.name}.{key} is a managed value ({kind}), which the engine fills in a TypedDict "
                f"state only; a vertex of a {self.kind} state reads ctx.remaining_steps instead"
            )
            raise GraphValidationError(msg)
        return kind

    def _required(self, marked: dict[str, bool]) -> frozenset[str]:
        if self.kind == "typeddict":
            # __required_keys__ misses NotRequired[...] written as a string annotation (Python 3.11)
            declared = set(getattr(self.cls, "__required_keys__", self.annotations))
            return frozenset(k for k in self.annotations if marked.get(k, k in declared))
        if self.kind == "dataclass":
            return frozenset(
                f.name
                for f in dataclasses.fields(self.cls)
                if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
            )
        return frozenset(name for name, f in self.cls.model_fields.items() if f.is_required())  # type: ignore[attr-defined]

    @property
    def name(self) -> str:
        """The schema class's name, for messages."""
        return self.cls.__name__

    def check(self, state: Any, who: str, *, base: Any = None) -> Any:
        """`state` if it fits, as an instance of the schema class for dataclasses and pydantic.

        Args:
            state: the state to check.
            who: what made it, for messages ("vertex 'draft'", "the input").
            base: the checked state `state` was made from, if any. A pydantic
                model then validates only the values that changed since (each
                value is validated once, when it enters the state, so a validator
                that transforms a value does not apply twice).

        Raises:
            InvalidUpdateError: naming `who`, the keys and what was expected.
        """
        if self.kind == "pydantic":
            return self._validated(state, who, base)
        if self.kind == "dataclass" and isinstance(state, self.cls):
            values: Mapping[str, Any] = {f.name: getattr(state, f.name) for f in dataclasses.fields(self.cls)}
        elif isinstance(state, Mapping):
            values = state
        else:
            raise self._refusal(who, [f"it is a {type(state).__name__}, not a mapping"])
        problems = self._key_problems(values) + self._type_problems(values)
        if problems:
            raise self._refusal(who, problems)
        if self.kind == "dataclass" and not isinstance(state, self.cls):
            return self.cls(**values)
        return state

    def check_update(self, update: Mapping[str, Any] | Sequence[tuple[str, Any]], who: str) -> None:
        """Refuse an update naming keys the schema does not have, or values of the wrong type.

        `update` is a mapping, or the `(key, value)` writes of `Command(update=[...])`.
        A key whose reducer has `checks_updates = False` (`add_messages`: one
        message for a list of them) is not type-checked here; the state the
        reducer makes is.

        Raises:
            InvalidUpdateError: naming `who`, the keys and what was expected.
        """
        writes = list(update.items()) if isinstance(update, Mapping) else list(update)
        problems = self._unknown(dict(writes))
        if self.kind != "pydantic":
            for key, value in writes:
                if key in self.annotations and self._typed_update(key):
                    problems += self._type_problems({key: value})
        if problems:
            msg = f"{who}: the update does not fit the {self.role} schema {self.name}: {'; '.join(problems)}"
            raise InvalidUpdateError(msg)

    def _typed_update(self, key: str) -> bool:
        """Whether an update's value for `key` must have the key's type (unless its reducer says not)."""
        return getattr(self.reducers.get(key), "checks_updates", True) is not False

    def _key_problems(self, values: Mapping[str, Any]) -> list[str]:
        missing = sorted(self.required - set(values))
        return ([f"missing required key(s) {missing}"] if missing else []) + self._unknown(values)

    def _unknown(self, values: Mapping[str, Any]) -> list[str]:
        managed = sorted(str(k) for k in values if k in self.managed)
        if managed:
            return [f"key(s) {managed} are filled by the engine for the vertices; leave them out"]
        unknown = sorted(str(k) for k in values if k not in self.annotations)
        return [f"unknown key(s) {unknown} ({self.name} has {sorted(self.annotations)})"] if unknown else []

    def _type_problems(self, values: Mapping[str, Any]) -> list[str]:
        return [
            f"key {key!r} should be {_describe(self.annotations[key])}, got {type(value).__name__}"
            for key, value in values.items()
            if key in self.annotations and not fits(value, self.annotations[key])
        ]

    def _validated(self, state: Any, who: str, base: Any = None) -> Any:
        from pydantic import ValidationError  # noqa: PLC0415 - only pydantic schemas need it

        if isinstance(state, self.cls):
            data: Any = {name: getattr(state, name) for name in self.cls.model_fields}  # type: ignore[attr-defined]
        elif isinstance(state, Mapping):
            data = state
        else:
            raise self._refusal(who, [f"it is a {type(state).__name__}, not a mapping or a {self.name}"])
        unknown = self._unknown(data)
        if unknown:
            raise self._refusal(who, unknown)
        try:
            changed = self._changed(data, base)
            if changed is None:
                return self.cls.model_validate(data)  # type: ignore[attr-defined]
            validated = base.model_copy()
            for name, value in changed.items():  # only the values entering the state now
                self.cls.__pydantic_validator__.validate_assignment(validated, name, value)  # type: ignore[attr-defined]
            return validated  # noqa: TRY300 - the refusal below is for both ways
        except ValidationError as exc:
            problems = [
                f"key {'.'.join(map(str, e['loc']))!r}: {e['msg']} (got {e['input']!r})" for e in exc.errors()
            ]
            raise self._refusal(who, problems) from None

    def _changed(self, data: Mapping[str, Any], base: Any) -> dict[str, Any] | None:
        """The values of `data` that differ from `base`'s, or None when all must be validated.

        All are validated when there is no validated `base` to start from, the
        model is frozen (its copy cannot be assigned to), or `data` leaves out a
        field `base` has (the full validation then says what is missing).
        """
        if not isinstance(base, self.cls) or self.cls.model_config.get("frozen"):  # type: ignore[attr-defined]
            return None
        old = {name: getattr(base, name) for name in self.cls.model_fields}  # type: ignore[attr-defined]
        if not old.keys() <= data.keys():
            return None
        return {k: v for k, v in data.items() if not unchanged(old.get(k, _ABSENT), v)}

    def _refusal(self, who: str, problems: list[str]) -> InvalidUpdateError:
        made = "made a state that does not fit" if self.role == "state" else "does not fit"
        msg = f"{who} {made} the {self.role} schema {self.name}: {'; '.join(problems)}"
        return InvalidUpdateError(msg)


_ABSENT = object()


def _hints(cls: type) -> dict[str, Any]:
    """The resolved annotations of `cls`.

    Raises:
        GraphValidationError: an annotation that cannot be resolved (a name that
            does not exist where the class is defined), naming the field: left
            as a string it would lose its reducer without a word.
    """
    try:
        return typing.get_type_hints(cls, include_extras=True)
    except Exception as exc:  # any failure is reported with the field that caused it
        field, cause = _unresolvable(cls, exc)
        msg = (
            f"the state schema {cls.__name__} has a field {field!r} whose annotation cannot be resolved "
            f"({type(cause).__name__}: {cause}); define or import that name in the module of "
            f"{cls.__name__} (annotations written as strings, or under `from __future__ import "
            "annotations`, are resolved there), or the field's reducer and type would be lost"
        )
        raise GraphValidationError(msg) from exc


def _unresolvable(cls: type, error: Exception) -> tuple[str, Exception]:
    """The first field of `cls` (or its bases) whose annotation does not resolve, with the error."""
    for klass in reversed(cls.__mro__):
        for name, annotation in inspect.get_annotations(klass).items():
            namespace = {"__annotations__": {name: annotation}, "__module__": klass.__module__}
            probe = type("_Probe", (), namespace)
            try:
                typing.get_type_hints(probe, include_extras=True)
            except Exception as exc:  # noqa: BLE001 - this is the field
                return name, exc
    return "?", error


def is_typeddict(cls: Any) -> bool:
    """Whether `cls` is a TypedDict class, `typing`'s or `typing_extensions`' (LangGraph's guides use both).

    `typing_extensions` is never imported here: a class made with it exists only once it was.
    """
    if typing.is_typeddict(cls):
        return True
    extensions = sys.modules.get("typing_extensions")
    return extensions is not None and bool(extensions.is_typeddict(cls))


def _kind(cls: Any, role: str) -> Kind:
    if is_typeddict(cls):
        return "typeddict"
    if isinstance(cls, type) and dataclasses.is_dataclass(cls):
        return "dataclass"
    if isinstance(cls, type) and hasattr(cls, "model_validate") and hasattr(cls, "model_fields"):
        return "pydantic"
    msg = (
        f"Graph({role}=...) takes a TypedDict, a dataclass or a pydantic model class, got {cls!r}; "
        "leave it out to check nothing"
    )
    raise GraphValidationError(msg)


def _bare_annotated(hint: Any) -> Any:
    """`hint` without `Required[...]` / `NotRequired[...]` around it."""
    while typing.get_origin(hint) in (Required, NotRequired):
        hint = typing.get_args(hint)[0]
    return hint


def _unwrap(hint: Any) -> tuple[Any, Callable[[Any, Any], Any] | None, bool | None]:
    """An annotation's bare type, the reducer `Annotated[...]` declares, and `Required`/`NotRequired`."""
    reducer = None
    required = None
    while True:
        origin = typing.get_origin(hint)
        if origin is typing.Annotated:
            reducer = reducer or next((m for m in hint.__metadata__ if callable(m)), None)
            hint = hint.__origin__
        elif origin in (Required, NotRequired):
            required = origin is Required
            hint = typing.get_args(hint)[0]
        else:
            return hint, reducer, required


def fits(value: Any, hint: Any) -> bool:  # noqa: C901 - one case per kind of annotation
    """Whether `value` fits the type `hint` (containers are checked, not their items)."""
    if hint is Any or hint is object or isinstance(hint, (str, typing.ForwardRef, typing.TypeVar)):
        return True
    if hint is None or hint is type(None):
        return value is None
    origin = typing.get_origin(hint)
    if origin is Union or origin is types.UnionType:
        return any(fits(value, arm) for arm in typing.get_args(hint))
    if origin is Literal:
        return value in typing.get_args(hint)
    if origin is typing.Annotated:
        return fits(value, hint.__origin__)
    if origin is collections.abc.Callable:
        return callable(value)
    if isinstance(origin, type):
        return isinstance(value, origin)
    if is_typeddict(hint):
        return isinstance(value, Mapping)
    supertype = getattr(hint, "__supertype__", None)  # NewType
    if supertype is not None:
        return fits(value, supertype)
    if isinstance(hint, type):
        return isinstance(value, _NUMBERS.get(hint, hint))
    return True  # an annotation this check does not understand: trust it


def _path(loc: tuple[Any, ...]) -> str:
    return ".".join(map(str, loc))


def _describe(hint: Any) -> str:
    return hint.__name__ if isinstance(hint, type) else str(hint).replace("typing.", "")
