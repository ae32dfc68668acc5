"""A tool as the agent sees it: a name, a description, an argument schema, checked arguments.

A tool is a Python function (its name, its docstring as the description, its
parameters' type hints as the argument schema) or a langchain-core tool (an
object with `name`, `description` and `invoke`). Parameters annotated
`InjectedState`, `InjectedStore` or `InjectedToolCallId` are given by the
engine and hidden from the schema the model sees.
"""

from __future__ import annotations

import dataclasses
import inspect
import json
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from actorgraph._model.errors import ConfigError, InvalidUpdateError

__all__ = [
    "InjectedState",
    "InjectedStore",
    "InjectedToolCallId",
    "Tool",
    "ToolCallError",
    "as_tool",
    "result_text",
]


class ToolCallError(InvalidUpdateError):
    """A tool call the model got wrong: an unknown tool name or arguments that do not fit its schema.

    Never retried (the same call would fail the same way); with `handle_tool_errors`
    it becomes a tool message the model can correct itself from.
    """


class InjectedState:
    """Marks a tool parameter that receives the graph's state (or one key of it), hidden from the model.

    `def lookup(q: str, state: Annotated[dict, InjectedState]) -> str`, or
    `Annotated[list, InjectedState("messages")]` for one key.
    """

    def __init__(self, field: str | None = None) -> None:
        """Inject the whole state, or only its `field` key."""
        self.field = field

    def __repr__(self) -> str:
        return f"InjectedState({self.field!r})" if self.field else "InjectedState"


class InjectedStore:
    """Marks a tool parameter that gets the graph's store (`compile(store=...)`), unseen by the model."""


class InjectedToolCallId:
    """Marks a tool parameter that receives the id of the tool call being answered, hidden from the model."""


def _injection(hint: Any) -> Any:
    """The injection marker an `Annotated[...]` hint carries (the class or an instance), or None.

    langchain-core's `InjectedToolCallId` is read as ours (it is the same marker).
    """
    if typing.get_origin(hint) is not typing.Annotated:
        return None
    for meta in hint.__metadata__:
        if meta in (InjectedState, InjectedStore, InjectedToolCallId) or isinstance(meta, InjectedState):
            return meta
        if isinstance(meta, (InjectedStore, InjectedToolCallId)):  # written `InjectedStore()`, as LangGraph's
            return type(meta)
        kind = meta if isinstance(meta, type) else type(meta)
        if kind.__name__ == "InjectedToolCallId" and kind.__module__.startswith("langchain_core"):
            return InjectedToolCallId
    return None


_JSON_TYPES: dict[Any, str] = {str: "string", int: "integer", float: "number", bool: "boolean"}


def _schema_of(hint: Any) -> dict[str, Any]:
    """A JSON schema for a parameter's type hint (`{}` for anything it cannot say)."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if hint in _JSON_TYPES:
        return {"type": _JSON_TYPES[hint]}
    if origin is typing.Literal:
        return {"enum": list(args)}
    if origin in (typing.Union, types.UnionType):
        options = [_schema_of(a) for a in args if a is not type(None)]
        return options[0] if len(options) == 1 else {"anyOf": options}
    if hint is list or origin is list:
        return {"type": "array", "items": _schema_of(args[0])} if args else {"type": "array"}
    if hint is dict or origin is dict:
        return {"type": "object"}
    return {}


def _fits(value: Any, hint: Any) -> bool:  # noqa: C901 - one answer per kind of hint
    """Whether `value` (from the model's JSON) fits the hint; hints it cannot judge accept anything."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if hint in (Any, inspect.Parameter.empty):
        return True
    if hint is bool:
        return isinstance(value, bool)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if hint is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if hint is str:
        return isinstance(value, str)
    if origin is typing.Literal:
        return value in args
    if origin in (typing.Union, types.UnionType):
        return any(_fits(value, a) for a in args)
    if hint is type(None):
        return value is None
    if hint is list or origin is list:
        return isinstance(value, list) and (not args or all(_fits(v, args[0]) for v in value))
    if hint is dict or origin is dict:
        return isinstance(value, dict)
    return True


@dataclass(frozen=True, slots=True)
class Tool:
    """A tool the agent can call.

    Attributes:
        name: what the model calls it.
        description: what the model reads about it.
        schema: its arguments as a JSON schema (injected parameters left out).
        fn: the function, or the langchain-core tool object.
        hints: parameter -> type hint, for the model's arguments.
        required: the parameters without a default.
        injected: parameter -> its injection marker.
        native: True for a langchain-core tool (called with `invoke(args)`).
        return_direct: the agent ends after calling it, its result the answer
            (langchain-core's `@tool(return_direct=True)`).
    """

    name: str
    description: str
    schema: Mapping[str, Any]
    fn: Any
    hints: Mapping[str, Any] = field(default_factory=dict)
    required: frozenset[str] = frozenset()
    injected: Mapping[str, Any] = field(default_factory=dict)
    native: bool = False
    return_direct: bool = False

    def spec(self) -> dict[str, Any]:
        """The tool as a model is told about it: `{"name", "description", "parameters"}`."""
        return {"name": self.name, "description": self.description, "parameters": dict(self.schema)}

    def check(self, args: Any) -> None:
        """Check the model's arguments against the schema.

        Raises:
            ToolCallError: not a mapping, a missing or unknown argument, or a value of the wrong type.
        """
        if self.native:
            self._check_native(args)
            return
        if not isinstance(args, Mapping):
            msg = f"tool {self.name!r} takes its arguments as an object, got {type(args).__name__}"
            raise ToolCallError(msg)
        problems = [f"missing argument {p!r}" for p in sorted(self.required - args.keys())]
        problems += [f"unknown argument {a!r}" for a in args if a not in self.hints]
        for name, value in args.items():
            if name in self.hints and not _fits(value, self.hints[name]):
                want = _schema_of(self.hints[name]) or {"type": repr(self.hints[name])}
                problems.append(f"argument {name!r} must fit {json.dumps(want)}, got {type(value).__name__}")
        if problems:
            msg = f"tool {self.name!r}: " + "; ".join(problems)
            raise ToolCallError(msg)

    def _check_native(self, args: Any) -> None:
        """Check a langchain-core tool's arguments against its `tool_call_schema`, when it has one."""
        validate = getattr(getattr(self.fn, "tool_call_schema", None), "model_validate", None)
        if validate is None:
            return
        try:
            validate(args)
        except Exception as exc:  # pydantic's ValidationError, or a TypeError for a non-mapping
            msg = f"tool {self.name!r}: the arguments do not fit its schema: {exc}"
            raise ToolCallError(msg) from exc

    def call(self, args: Mapping[str, Any], *, state: Any, store: Any, call_id: str) -> Any:
        """Run the tool with the model's arguments and the injected ones.

        Raises:
            ConfigError: the tool takes the store and there is none.
        """
        if self.native:
            return self.fn.invoke(dict(args))
        given = dict(args)
        for name, marker in self.injected.items():
            if marker is InjectedStore:
                if store is None:
                    msg = f"tool {self.name!r} takes the store (InjectedStore); give the graph one: store=..."
                    raise ConfigError(msg)
                given[name] = store
            elif marker is InjectedToolCallId:
                given[name] = call_id
            else:
                key = getattr(marker, "field", None)
                given[name] = state.get(key) if key and isinstance(state, Mapping) else state
        return self.fn(**given)


def _native(obj: Any) -> Tool:
    """A langchain-core tool: called with `invoke(args)`, or through its function when it takes injected ones.

    A tool whose function takes injected arguments (the state, the store, the call's
    id: LangGraph's hand-off tools) is called through that function, as a function
    tool is, so what it returns (a `Command`) reaches the `ToolNode` as it is;
    langchain-core would turn it into a message's text.
    """
    fn = getattr(obj, "func", None) or getattr(obj, "coroutine", None)
    hidden = [] if callable(fn) else _hidden_arguments(obj)
    if hidden:
        msg = (
            f"tool {obj.name!r} takes arguments langchain-core injects ({', '.join(hidden)}), "
            "which it gives only when the tool is invoked with the whole tool call, and then it turns what "
            "the tool returns (a Command) into text; make it a function with @tool, which a ToolNode "
            "calls with the injected arguments itself"
        )
        raise ConfigError(msg)
    if callable(fn) and _takes_injected(fn):
        made = as_tool(fn)
        described = str(obj.description or made.description)
        direct = bool(getattr(obj, "return_direct", False))
        return dataclasses.replace(made, name=str(obj.name), description=described, return_direct=direct)
    schema = getattr(obj, "tool_call_schema", None)
    try:
        parameters = schema.model_json_schema() if schema is not None else {}
    except Exception:  # noqa: BLE001 - a schema the tool cannot describe: the model sees none
        parameters = {}
    parameters.pop("title", None)
    parameters.pop("description", None)
    direct = bool(getattr(obj, "return_direct", False))
    return Tool(str(obj.name), str(obj.description or ""), parameters, obj, native=True, return_direct=direct)


def _hidden_arguments(obj: Any) -> list[str]:
    """The arguments of a langchain-core tool that the model does not give (injected ones)."""
    try:
        given = set(obj.tool_call_schema.model_json_schema().get("properties", {}))
        return sorted(set(obj.get_input_schema().model_json_schema().get("properties", {})) - given)
    except Exception:  # noqa: BLE001 - a tool that cannot describe its arguments hides none we know of
        return []


def _takes_injected(fn: Any) -> bool:
    try:
        hints = typing.get_type_hints(fn, include_extras=True)
    except Exception:  # noqa: BLE001 - hints that cannot be read: the tool is called as langchain-core's
        return False
    return any(_injection(hint) is not None for hint in hints.values())


def as_tool(obj: Any) -> Tool:
    """Read a function (or a langchain-core tool) as a `Tool`.

    Raises:
        ConfigError: neither a function nor a tool object, or a function whose
            parameters cannot be passed by name.
    """
    if isinstance(obj, Tool):
        return obj
    if hasattr(obj, "invoke") and hasattr(obj, "name") and not inspect.isroutine(obj):
        return _native(obj)
    if not callable(obj):
        msg = f"a tool must be a function or a langchain-core tool, got {type(obj).__name__}"
        raise ConfigError(msg)
    name = getattr(obj, "__name__", None) or type(obj).__name__
    try:
        hints = typing.get_type_hints(obj, include_extras=True) if not isinstance(obj, type) else {}
    except NameError as exc:  # `from __future__ import annotations` with a name only a function knows
        msg = (
            f"tool {name!r}: its type hints cannot be read ({exc}); import the names its annotations "
            "use at the top of its module, where the annotations are resolved"
        )
        raise ConfigError(msg) from exc
    params, required, injected = {}, set(), {}
    for p in inspect.signature(obj).parameters.values():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD, p.POSITIONAL_ONLY):
            msg = f"tool {name!r}: parameter {p.name!r} cannot be given by name; tools take named arguments"
            raise ConfigError(msg)
        hint = hints.get(p.name, inspect.Parameter.empty)
        marker = _injection(hint)
        if marker is not None:
            injected[p.name] = marker
            continue
        bare = typing.get_args(hint)[0] if typing.get_origin(hint) is typing.Annotated else hint
        params[p.name] = bare
        if p.default is p.empty:
            required.add(p.name)
    schema = {
        "type": "object",
        "properties": {n: _schema_of(h) for n, h in params.items()},
        "required": sorted(required),
    }
    description = inspect.getdoc(obj) or ""
    return Tool(name, description, schema, obj, params, frozenset(required), injected)


def result_text(result: Any) -> str:
    """A tool's result as a tool message's text: strings as they are, JSON for dicts and lists."""
    if isinstance(result, str):
        return result
    content = getattr(result, "content", None)  # a langchain-core ToolMessage
    if isinstance(content, str):
        return content
    if isinstance(result, (dict, list, tuple, int, float, bool)) or result is None:
        return json.dumps(result, ensure_ascii=False, default=str)
    return str(result)


def tool_names(tools: Mapping[str, Tool]) -> str:
    """The tool names, for an error message."""
    return ", ".join(sorted(tools)) or "none"
