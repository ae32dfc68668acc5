"""Values on the wire: states, messages, questions and errors as the LangGraph clients read them.

A state travels as JSON. Messages are LangChain-style dicts (`type`: human / ai /
tool / system, `content`, `id`, `tool_calls`, ...), as `langgraph-sdk` and
`useStream` read them; actorgraph keeps them as `{"role": ...}` dicts (or
langchain-core objects), so every key whose reducer is `add_messages` is turned
into that form on the way out. Anything JSON cannot carry (a dataclass, a
pydantic model, a tuple, a set, a time) is made plain here, with a depth bound,
so that no state can make the server fail while it answers.
"""

from __future__ import annotations

import base64
import dataclasses
import datetime as dt
import enum
import math
import uuid
from collections.abc import Mapping
from typing import Any, Final

import orjson

from actorgraph import ErrorInfo, Interrupt
from actorgraph.merge import add, append, apply_rule
from actorgraph.messages import AddMessages, RemoveMessage

__all__ = [
    "dumps",
    "error_body",
    "interrupt_list",
    "iso",
    "jsonable",
    "message_keys",
    "update_delta",
    "wire_message",
    "wire_state",
]

_DEEPEST: Final = 64  # levels of a value made plain; deeper ones are cut (a state could be cyclic)
_TYPES: Final = {"user": "human", "assistant": "ai", "system": "system", "tool": "tool"}
_OWN: Final = frozenset({"role", "type", "content", "id", "name", "tool_calls", "tool_call_id"})


def iso(seconds: float | None) -> str | None:
    """Wall-clock seconds as the ISO 8601 time the API uses (UTC, with its offset)."""
    if seconds is None:
        return None
    return dt.datetime.fromtimestamp(seconds, dt.UTC).isoformat()


def dumps(value: Any) -> bytes:
    """JSON bytes of a value already made plain (`jsonable`), or of plain data."""
    return orjson.dumps(value, default=_fallback, option=orjson.OPT_NON_STR_KEYS)


def _fallback(value: Any) -> Any:
    return jsonable(value)


def jsonable(value: Any, depth: int = 0) -> Any:  # noqa: C901, PLR0912 - one case per kind of value
    """`value` as plain JSON data: dicts with string keys, lists, strings, finite numbers, booleans, None."""
    if value is None or isinstance(value, (str, bool, int)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if depth >= _DEEPEST:
        return "..."
    if isinstance(value, Mapping):
        return {str(k): jsonable(v, depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [jsonable(v, depth + 1) for v in value]
    if isinstance(value, RemoveMessage):
        return {"type": "remove", "id": value.id, "content": ""}
    if isinstance(value, Interrupt):
        return {"value": jsonable(value.value, depth + 1), "id": value.id}
    if isinstance(value, ErrorInfo):
        return f"{value.type.rsplit('.', 1)[-1]}: {value.message}"
    if isinstance(value, (dt.datetime, dt.date)):
        return value.isoformat()
    if isinstance(value, (uuid.UUID, enum.Enum)):
        return str(value.value if isinstance(value, enum.Enum) else value)
    if isinstance(value, bytes):
        return base64.b64encode(value).decode()
    dump = getattr(value, "model_dump", None)
    if callable(dump) and not isinstance(value, type):
        return jsonable(dump(), depth + 1)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return jsonable({f.name: getattr(value, f.name) for f in dataclasses.fields(value)}, depth + 1)
    return repr(value)


def wire_message(message: Any) -> Any:
    """A message as LangChain's dict form (`type`, `content`, `id`, ...); other values made plain."""
    if not isinstance(message, Mapping) or "role" not in message:
        return jsonable(message)
    role = message.get("role")
    kind = _TYPES.get(str(role), str(role))
    out: dict[str, Any] = {
        "type": kind,
        "content": jsonable(message.get("content", "")),
        "id": message.get("id"),
        "name": message.get("name"),
        "additional_kwargs": {},
        "response_metadata": {},
    }
    if kind == "ai":
        calls = message.get("tool_calls") or []
        out["tool_calls"] = [{**jsonable(call), "type": "tool_call"} for call in calls]
        out["invalid_tool_calls"] = []
        out["usage_metadata"] = None
    if kind == "tool":
        out["tool_call_id"] = message.get("tool_call_id")
        out["status"] = "success"
    out.update((k, jsonable(v)) for k, v in message.items() if k not in _OWN)
    return out


def message_keys(merge: Any, state: Any) -> frozenset[str]:
    """The keys of `state` whose reducer is `add_messages` (their lists are conversations)."""
    if not isinstance(state, Mapping):
        return frozenset()
    return frozenset(k for k in state if isinstance(apply_rule(merge, str(k)), AddMessages))


def wire_state(state: Any, messages: frozenset[str] = frozenset()) -> Any:
    """A state as JSON: the conversations under `messages` in LangChain's form, the rest made plain."""
    if not isinstance(state, Mapping):
        return jsonable(state)
    out = {}
    for key, value in state.items():
        if key in messages and isinstance(value, list):
            out[str(key)] = [wire_message(m) for m in value]
        else:
            out[str(key)] = jsonable(value)
    return out


def interrupt_list(interrupts: Any) -> list[dict[str, Any]]:
    """Questions as the API lists them: `[{"value", "id"}]` (breakpoints, which ask nothing, left out)."""
    return [
        {"value": jsonable(q.value), "id": q.id}
        for q in interrupts
        if isinstance(q, Interrupt) and q.kind == "interrupt"
    ]


def error_body(error: BaseException | ErrorInfo) -> dict[str, str]:
    """An `error` event's data: `{"error": the exception's class name, "message": its text}`."""
    if isinstance(error, ErrorInfo):
        return {"error": error.type.rsplit(".", 1)[-1], "message": error.message}
    cause = error.__cause__
    if cause is not None and type(error).__name__ == "VertexError":
        return {"error": type(cause).__name__, "message": str(cause)}
    return {"error": type(error).__name__, "message": str(error)}


_MISSING: Final = object()


def update_delta(merge: Any, old: Any, new: Any) -> Any:
    """What a vertex changed: `new`'s keys that differ from `old`'s, each as the vertex's update.

    A conversation (`add_messages`) gives the messages added or changed, an
    `append` or `add` list the items appended, an `add` number the increment; any
    other key its new value. A state without keys is its own update.
    """
    if not isinstance(old, Mapping) or not isinstance(new, Mapping):
        return new
    out = {}
    for key, value in new.items():
        before = old.get(key, _MISSING)
        if before is not _MISSING and _same(before, value):
            continue
        out[key] = _changed(apply_rule(merge, str(key)), before, value)
    return out


def _same(a: Any, b: Any) -> bool:
    try:
        return a is b or bool(a == b)
    except Exception:  # noqa: BLE001 - a value whose == fails is taken as changed
        return False


def _changed(rule: Any, before: Any, value: Any) -> Any:
    if before is _MISSING:
        return value
    if isinstance(rule, AddMessages) and isinstance(before, list) and isinstance(value, list):
        known = {m.get("id") if isinstance(m, Mapping) else getattr(m, "id", None): m for m in before}
        return [m for m in value if not _same(known.get(_id(m), _MISSING), m)]
    appended = rule in (append, add) and isinstance(before, list) and isinstance(value, list)
    if appended and value[: len(before)] == before:
        return value[len(before) :]
    if rule is add and isinstance(before, (int, float)) and isinstance(value, (int, float)):
        return value - before
    return value


def _id(message: Any) -> Any:
    return message.get("id") if isinstance(message, Mapping) else getattr(message, "id", None)
