"""What a `ToolNode` step adds to the state: its tool messages, and the `Command`s its tools returned.

A tool's result is its tool message. A tool may return a `Command` instead, as
LangGraph's tools do: `Command(update={...})` updates the state (its messages
must answer the call with a tool message, or the conversation would hold a
call without an answer), `Command(goto=...)` routes besides the vertex's edges,
and `Command(graph=PARENT, goto=..., update=...)` hands off to another agent of
the graph the agent is a subgraph of (LangGraph's hand-off tools). The step's
outcomes combine, in call order, into the vertex's update (or a `Command`);
what cannot be applied is an `InvalidUpdateError` that fails the vertex (never a
result turned into text, never a call dropped without a word).

The messages added keep the conversation's kind: langchain-core objects when
the message asking for the calls is one, message dicts otherwise.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from typing import Any

from actorgraph._model.errors import InvalidUpdateError
from actorgraph._model.records import PARENT, UNSET, Command, Send
from actorgraph.messages import REMOVE_ALL_MESSAGES, RemoveMessage, role_of, tool_message
from actorgraph.messages._coerce import is_langchain
from actorgraph.prebuilt._tools import result_text

__all__ = ["as_objects", "combined", "outcome_of"]

_COMMAND = "command"  # a step's outcome that is a tool's Command, not a message


def outcome_of(result: Any, call_id: str, name: str) -> dict[str, Any]:
    """One call's outcome as the step records it: its tool message, or its `Command` as plain data.

    A `Command` travels (and is checkpointed) as a record of its parts; what
    cannot be applied is recorded as refused, and refused when the step's
    outcomes are combined (`combined`), failing the vertex rather than telling the model.
    """
    if not isinstance(result, Command):
        return tool_message(result_text(result), call_id, name)
    given: Any = result.goto
    goto: tuple[Any, ...] = (given,) if isinstance(given, (str, Send)) else tuple(given)
    record: dict[str, Any] = {
        "update": result.update,
        "goto": [g for g in goto if isinstance(g, str)],
        "graph": result.graph,
    }
    refusal = _refusal(result, goto, name)
    return {
        _COMMAND: record,
        "call": {"id": call_id, "name": name},
        **({"refused": refusal} if refusal else {}),
    }


def _refusal(result: Command[Any], goto: Sequence[Any], name: str) -> str:
    if result.resume is not UNSET:
        return (
            f"tool {name!r} returned Command(resume=...); a tool routes (goto) and updates, it never answers"
        )
    if not all(isinstance(g, str) for g in goto):
        return f"tool {name!r} returned Command(goto=...) with a Send; route to vertices by name"
    if result.graph not in (None, PARENT):
        return f"tool {name!r} returned Command(graph={result.graph!r}); the only graph to name is PARENT"
    if result.update is not None and not isinstance(result.update, Mapping):
        kind = type(result.update).__name__
        return f"tool {name!r} returned Command(update=...) that is a {kind}; give a dict"
    return ""


def is_command(outcome: Any) -> bool:
    """Whether a step's outcome is a tool's `Command` (rather than a tool message)."""
    return type(outcome) is dict and _COMMAND in outcome and "role" not in outcome


def combined(outcomes: Sequence[Any], key: str, *, objects: bool) -> Any:
    """The step's update from its calls' outcomes, in call order: `{key: [messages]}`, or a `Command`.

    Args:
        outcomes: each call's tool message or `Command` record (`outcome_of`).
        key: the state's messages key.
        objects: the conversation holds langchain-core messages: the messages added are too.

    Raises:
        InvalidUpdateError: a `Command` that cannot be applied: its update answers
            no call, it hands off beside calls whose results would be lost, or it is malformed.
    """
    commands = [o for o in outcomes if is_command(o)]
    if not commands:
        return {key: [as_objects(m) if objects else m for m in outcomes]}
    for command in commands:
        if command.get("refused"):
            raise InvalidUpdateError(command["refused"])
    handoffs = [c for c in commands if c[_COMMAND]["graph"] == PARENT]
    if handoffs:
        return _handoff(handoffs, outcomes, key, objects)
    writes: list[tuple[str, Any]] = []
    goto: list[str] = []
    for outcome in outcomes:
        if is_command(outcome):
            update = _answered(outcome, key, objects, required=True)
            writes.extend(update.items())
            goto.extend(outcome[_COMMAND]["goto"])
        else:
            writes.append((key, [as_objects(outcome) if objects else outcome]))
    return Command(update=writes, goto=goto)


def _handoff(handoffs: list[dict[str, Any]], outcomes: Sequence[Any], key: str, objects: bool) -> Any:
    """The hand-off to the parent graph, which applies its update alone: the step's only outcome."""
    if len(handoffs) < len(outcomes):
        names = [c["call"]["name"] for c in handoffs]
        left = [_name_of(o) for o in outcomes if not (is_command(o) and o[_COMMAND]["graph"] == PARENT)]
        msg = (
            f"tool(s) {names} hand off to the parent graph (Command(graph=PARENT)) while the call(s) of "
            f"{left} of the same message stay in this graph: the parent receives the hand-off's update "
            "alone, so their results would be lost; ask for a hand-off in a message of its own (the "
            "model's parallel_tool_calls=False), or put what the other calls found in the hand-off's update"
        )
        raise InvalidUpdateError(msg)
    updates = [_answered(c, key, objects, required=False) for c in handoffs]
    goto = [target for c in handoffs for target in c[_COMMAND]["goto"]]
    if len(updates) == 1:
        return Command(graph=PARENT, update=updates[0] or None, goto=goto)
    return Command(graph=PARENT, update=[w for u in updates for w in u.items()], goto=goto)


def _name_of(outcome: Any) -> str:
    return str(outcome["call"]["name"]) if is_command(outcome) else str(_get(outcome, "name") or "?")


def _answered(command: dict[str, Any], key: str, objects: bool, *, required: bool) -> dict[str, Any]:
    """A tool's `Command` update with its messages of the conversation's kind, the call's answer named.

    Raises:
        InvalidUpdateError: `required` and no tool message in the update answers the call (LangGraph's rule).
    """
    update = dict(command[_COMMAND]["update"] or {})
    call = command["call"]
    if key not in update:
        if required and update:
            raise InvalidUpdateError(_unanswered(call, key, []))
        return update
    given = update[key] if isinstance(update[key], list) else [update[key]]
    messages = [_named(as_objects(m) if objects else m, call) for m in given]
    answers = [m for m in messages if _answers(m, call["id"])]
    if required and not answers and not _removes_all(messages):
        raise InvalidUpdateError(_unanswered(call, key, messages))
    update[key] = messages
    return update


def _unanswered(call: Mapping[str, Any], key: str, messages: list[Any]) -> str:
    return (
        f"tool {call['name']!r} returned Command(update=...) without a tool message answering its call "
        f"{call['id']!r} in update[{key!r}] (got {len(messages)} message(s)): every tool call in a "
        "conversation needs its answer; return Command(update={"
        f"{key!r}: [ToolMessage(..., tool_call_id=tool_call_id)], ...}}) with the call's id "
        "(a parameter annotated InjectedToolCallId receives it)"
    )


def _answers(message: Any, call_id: str) -> bool:
    return (
        not isinstance(message, RemoveMessage)
        and _role(message) == "tool"
        and _get(message, "tool_call_id") == call_id
    )


def _removes_all(messages: list[Any]) -> bool:
    """The update clears the conversation (LangGraph asks no answer of it)."""
    return (
        len(messages) == 1
        and isinstance(messages[0], RemoveMessage)
        and messages[0].id == REMOVE_ALL_MESSAGES
    )


def _named(message: Any, call: Mapping[str, Any]) -> Any:
    """The call's answer carries the tool's name (as LangGraph's ToolNode sets it); others as they are."""
    if not _answers(message, call["id"]) or _get(message, "name"):
        return message
    if isinstance(message, dict):
        return {**message, "name": call["name"]}
    return message.model_copy(update={"name": call["name"]}) if is_langchain(message) else message


def _role(message: Any) -> str | None:
    try:
        return role_of(message)
    except InvalidUpdateError:
        return None


def _get(message: Any, field: str) -> Any:
    return message.get(field) if isinstance(message, Mapping) else getattr(message, field, None)


def as_objects(message: Any) -> Any:
    """A message as a langchain-core message object (for a conversation that holds them); objects as they are.

    Only called when the conversation holds a langchain-core message, so the
    program imported langchain-core: it is never imported here.
    """
    if is_langchain(message) or isinstance(message, RemoveMessage):
        return message
    convert = sys.modules["langchain_core.messages"].convert_to_messages
    return convert([message])[0]
