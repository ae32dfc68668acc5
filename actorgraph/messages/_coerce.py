"""Messages in the common chat format: what a message-like value means, and how to read one.

A message is a plain dict: `role` (user, assistant, system or tool), `content`
(a string, or a list of content blocks), and as needed `id`, `tool_calls`
(`[{"id", "name", "args"}]`), `tool_call_id` and `name`. A string is a user
message, a `(role, content)` pair is a message, LangGraph's roles `human` and
`ai` are read as user and assistant, and OpenAI's tool calls
(`{"function": {"name", "arguments"}}`) are read as the common form.
langchain-core message objects are kept as they are (a chunk becomes its
message); that package is never imported here: an object of its classes can
only exist once the program imported it.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping, Sequence
from typing import Any, Final

from actorgraph._model.errors import InvalidUpdateError
from actorgraph.messages._remove import RemoveMessage

__all__ = [
    "coerce_message",
    "content_of",
    "id_of",
    "is_langchain",
    "last_message",
    "message",
    "role_of",
    "tool_calls_of",
    "tool_message",
]

ROLES: Final = frozenset({"user", "assistant", "system", "tool"})
_ALIASES: Final = {"human": "user", "ai": "assistant"}
_LANGCHAIN_ROLES: Final = {"human": "user", "ai": "assistant", "system": "system", "tool": "tool"}
_SHOWN: Final = 80  # characters of a refused value quoted in an error
_CONTENT: Final = frozenset({str, list})
_CALL_KEYS: Final = frozenset({"id", "name", "args"})
_HELP: Final = (
    "give a message dict ({'role': 'user', 'content': 'hi'}), a string (a user message), a "
    "(role, content) pair, a RemoveMessage, or a langchain-core message"
)


_langchain: list[tuple[Any, ...]] = []  # langchain-core's classes, once the program has imported it


def _langchain_classes() -> tuple[Any, ...] | None:
    """(BaseMessage, RemoveMessage, BaseMessageChunk, message_chunk_to_message) of langchain-core.

    None until the program imports langchain-core (never imported here); looked
    up once, as its module resolves these names lazily.
    """
    if not _langchain:
        module = sys.modules.get("langchain_core.messages")
        if module is None:
            return None
        classes = (module.BaseMessage, module.RemoveMessage, module.BaseMessageChunk)
        _langchain.append((*classes, module.message_chunk_to_message))
    return _langchain[0]


kept_types: set[type] = set()
"""The langchain-core message classes seen so far whose objects are kept as they are (not chunks)."""


def is_langchain(value: Any) -> bool:
    """Whether `value` is a langchain-core message object (False when that package is not loaded)."""
    classes = _langchain_classes()
    return classes is not None and isinstance(value, classes[0])


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= _SHOWN else text[: _SHOWN - 3] + "..."


def coerce_message(value: Any) -> Any:
    """The message `value` stands for: a message dict in the common form, or a langchain-core message.

    Args:
        value: a message dict (roles `human` / `ai` accepted), a string (a user
            message), a `(role, content)` tuple or 2-list, a langchain-core
            message (kept; a chunk becomes its message), or a removal
            (`RemoveMessage`, `{"role": "remove", "id": ...}`, langchain-core's
            `RemoveMessage`), returned as a `RemoveMessage`.

    Returns:
        A new dict (the given one when it is already in the common form), the
        langchain-core object, or a `RemoveMessage`.

    Raises:
        InvalidUpdateError: `value` is none of these, or a dict with an unknown
            role, malformed tool calls, or a tool message without `tool_call_id`.
    """
    if type(value) is dict:
        return _from_dict(value)
    if type(value) in kept_types:
        return value
    if isinstance(value, RemoveMessage):
        return value
    if isinstance(value, str):
        return {"role": "user", "content": value}
    if isinstance(value, (tuple, list)) and len(value) == 2 and isinstance(value[0], str):  # noqa: PLR2004 - a pair
        return _from_dict({"role": value[0], "content": value[1]})
    classes = _langchain_classes()
    if classes is not None and isinstance(value, classes[0]):
        _, removal, chunk, to_message = classes
        if isinstance(value, removal):
            return RemoveMessage(value.id)
        if isinstance(value, chunk):
            return to_message(value)
        kept_types.add(type(value))
        return value
    if isinstance(value, Mapping):
        return _from_dict(dict(value))
    msg = f"{_shown(value)} (a {type(value).__name__}) is not a message; {_HELP}"
    raise InvalidUpdateError(msg)


def _from_dict(value: dict[str, Any]) -> Any:
    if canonical(value):
        return value
    role: Any = value.get("role", value.get("type"))
    if role == "remove":
        return RemoveMessage(value.get("id"))  # type: ignore[arg-type]  # RemoveMessage says what is wrong
    role = _ALIASES.get(role, role) if isinstance(role, str) else role  # a list or dict is no key
    if not isinstance(role, str) or role not in ROLES:
        msg = (
            f"the message {_shown(value)} has role {role!r}; a message's role is one of "
            f"{sorted(ROLES)} (or LangGraph's 'human' / 'ai')"
        )
        raise InvalidUpdateError(msg)
    content = value.get("content")
    out: dict[str, Any] = {"role": role, "content": "" if content is None else content}
    used = ("role", "content") if "role" in value else ("role", "type", "content")
    out.update((k, v) for k, v in value.items() if k not in used)
    calls = out.get("tool_calls")
    if calls is None:
        out.pop("tool_calls", None)
    else:
        out["tool_calls"] = [_tool_call(call, value) for call in _sequence(calls, "tool_calls", value)]
    _check(out, value)
    return out


def canonical(value: dict[str, Any]) -> bool:
    """Whether a dict already is a message in the common form (then it is kept, not copied)."""
    role = value.get("role")
    if type(role) is not str or role not in ROLES or type(value.get("content")) not in _CONTENT:
        return False
    if value.get("id") is not None and type(value["id"]) is not str:
        return False
    if role == "tool" and type(value.get("tool_call_id")) is not str:
        return False
    if "tool_calls" not in value:
        return True
    calls = value["tool_calls"]
    return type(calls) is list and all(
        type(c) is dict and c.keys() == _CALL_KEYS and type(c["args"]) is dict and isinstance(c["name"], str)
        for c in calls
    )


def _sequence(value: Any, what: str, message: Any) -> Sequence[Any]:
    if isinstance(value, (list, tuple)):
        return value
    msg = f"the message {_shown(message)} has {what} of type {type(value).__name__}; give a list"
    raise InvalidUpdateError(msg)


def _tool_call(call: Any, message: Any) -> dict[str, Any]:
    """One tool call in the common form `{"id", "name", "args"}` (OpenAI's form is read too)."""
    if not isinstance(call, Mapping):
        msg = f"the message {_shown(message)} has a tool call that is a {type(call).__name__}, not a dict"
        raise InvalidUpdateError(msg)
    function = call.get("function")
    if isinstance(function, Mapping):  # OpenAI: {"id", "type": "function", "function": {"name", "arguments"}}
        name, args = function.get("name"), function.get("arguments", {})
        if isinstance(args, str):
            try:
                args = json.loads(args) if args.strip() else {}
            except ValueError as exc:
                msg = f"the tool call {_shown(call)} has arguments that are not JSON ({exc})"
                raise InvalidUpdateError(msg) from None
    else:
        name, args = call.get("name"), call.get("args", {})
    if not isinstance(name, str) or not name:
        msg = f"the tool call {_shown(call)} has no name; a tool call is {{'id', 'name', 'args'}}"
        raise InvalidUpdateError(msg)
    if not isinstance(args, Mapping):
        msg = f"the tool call {_shown(call)} has args of type {type(args).__name__}; args is a dict"
        raise InvalidUpdateError(msg)
    return {"id": call.get("id"), "name": name, "args": dict(args)}


def _check(out: dict[str, Any], given: Any) -> None:
    if not isinstance(out["content"], (str, list)):
        msg = (
            f"the message {_shown(given)} has content of type {type(out['content']).__name__}; "
            "content is a string or a list of content blocks"
        )
        raise InvalidUpdateError(msg)
    if out.get("id") is not None and not isinstance(out["id"], str):
        msg = (
            f"the message {_shown(given)} has an id of type {type(out['id']).__name__}; an id is a "
            "string (leave it out and one is given)"
        )
        raise InvalidUpdateError(msg)
    if out["role"] == "tool" and not isinstance(out.get("tool_call_id"), str):
        msg = (
            f"the tool message {_shown(given)} has no tool_call_id; a tool message answers one tool "
            "call and names its id (tool_message(content, tool_call_id, name) makes one)"
        )
        raise InvalidUpdateError(msg)


# -- making and reading messages ------------------------------------------------------


def message(role: str, content: Any, **fields: Any) -> dict[str, Any]:
    """A message dict in the common form: `message("assistant", "hi", tool_calls=[...])`.

    Args:
        role: user, assistant, system or tool (`human` / `ai` accepted).
        content: a string or a list of content blocks.
        **fields: `id`, `tool_calls`, `tool_call_id`, `name`, or any other key to keep.

    Raises:
        InvalidUpdateError: an unknown role, malformed tool calls, or a tool message without `tool_call_id`.
    """
    made = _from_dict({"role": role, "content": content, **fields})
    if not isinstance(made, dict):
        msg = f"message() makes messages; role {role!r} is a removal: use RemoveMessage(id) instead"
        raise InvalidUpdateError(msg)
    return made


def tool_message(content: Any, tool_call_id: str, name: str | None = None) -> dict[str, Any]:
    """The message answering one tool call: `{"role": "tool", "content", "tool_call_id", "name"}`.

    Args:
        content: the tool's result as text (or a list of content blocks).
        tool_call_id: the id of the call it answers.
        name: the tool's name (left out when None).
    """
    fields: dict[str, Any] = {"tool_call_id": tool_call_id}
    if name is not None:
        fields["name"] = name
    return message("tool", content, **fields)


def _read(value: Any) -> Any:
    """A message to read: dicts and langchain objects as they are, anything else coerced."""
    if type(value) is dict or is_langchain(value):
        return value
    return coerce_message(value)


def role_of(value: Any) -> str:
    """The role of a message: user, assistant, system or tool ("remove" for a `RemoveMessage`).

    Reads dicts, langchain-core messages (`human` is user, `ai` is assistant)
    and anything `coerce_message` accepts.
    """
    found = _read(value)
    if isinstance(found, RemoveMessage):
        return "remove"
    if isinstance(found, dict):
        role: Any = found.get("role", found.get("type"))
        if role is not None and not isinstance(role, str):
            coerce_message(found)  # refuses it, naming the message (a list or dict role is no role)
        return str(_ALIASES.get(role, role))
    kind = found.type
    if kind == "chat":
        return _ALIASES.get(found.role, found.role)  # type: ignore[no-any-return]
    return _LANGCHAIN_ROLES.get(kind, kind)  # type: ignore[no-any-return]


def content_of(value: Any) -> Any:
    """The content of a message (a string or a list of content blocks; "" when it has none)."""
    found = _read(value)
    if isinstance(found, RemoveMessage):
        return ""
    if isinstance(found, dict):
        content = found.get("content")
        return "" if content is None else content
    return found.content


def id_of(value: Any) -> str | None:
    """The id of a message, or None when it has none yet."""
    found = _read(value)
    if isinstance(found, dict):
        return found.get("id")
    return found.id  # type: ignore[no-any-return]


def tool_calls_of(value: Any) -> list[dict[str, Any]]:
    """The tool calls of a message as `[{"id", "name", "args"}]` ([] for none).

    Works for message dicts (OpenAI's form included) and langchain-core
    messages (an `AIMessage`'s `tool_calls`).
    """
    found = _read(value)
    if isinstance(found, RemoveMessage):
        return []
    if isinstance(found, dict):
        calls = found.get("tool_calls") or []
        return [_tool_call(call, found) for call in _sequence(calls, "tool_calls", found)]
    return [
        {"id": call.get("id"), "name": call["name"], "args": dict(call.get("args") or {})}
        for call in getattr(found, "tool_calls", None) or []
    ]


def last_message(state_or_list: Any, key: str = "messages") -> Any:
    """The last message of a state's conversation (its `key`, "messages" by default) or of a list.

    Args:
        state_or_list: a state (a mapping, dataclass or pydantic model with the
            key), or a list of messages.
        key: the state's key that holds the messages.

    Raises:
        InvalidUpdateError: no messages there.
    """
    found = state_or_list
    if isinstance(found, Mapping):
        found = found.get(key)
    elif not isinstance(found, (list, tuple)):
        found = getattr(found, key, None)
    if not isinstance(found, (list, tuple)) or not found:
        msg = (
            f"there is no last message: {_shown(state_or_list)} holds no messages under {key!r}; "
            "give a state with a non-empty list of messages, or the list itself"
        )
        raise InvalidUpdateError(msg)
    return found[-1]
