"""Calling the agent's model, as LangGraph's agent does: invoked, or streamed when someone listens.

A model is a function of the messages, an object with `.invoke(messages)` (and
`.stream(messages)`) such as a langchain-core chat model, or a *dynamic* model:
a function `(state, ctx)` that returns the model to call (LangGraph's
`(state, runtime)`), whose tools are bound each time. A model that streams is
streamed only when someone listens to `stream(mode="messages")`; its pieces then
add up to the message `invoke` would have given, tool-call pieces included.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from typing import Any

from actorgraph._engine.context import Context
from actorgraph._model.errors import ConfigError
from actorgraph.messages import coerce_message

__all__ = ["answer", "bound", "dynamic", "reply_of"]

Binding = Callable[[Any], Any]  # binds the agent's tools to a model


def dynamic(model: Any) -> bool:
    """Whether `model` is a dynamic model: a function `(state, ctx)` returning the model to call."""
    if not inspect.isroutine(model):
        return False
    required = [
        p
        for p in inspect.signature(model).parameters.values()
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.default is p.empty
    ]
    return len(required) == 2  # noqa: PLR2004 - (state, runtime)


def bound(model: Any, tools: list[Any]) -> Any:
    """`model` bound to the tools (`bind_tools`) when it can take them and there are some."""
    bind = getattr(model, "bind_tools", None)
    return bind(tools) if callable(bind) and tools else model


def reply_of(model: Any, messages: list[Any], ctx: Context[Any]) -> Any:
    """The model's reply to `messages`: streamed into `ctx` when someone listens, else invoked.

    Raises:
        ConfigError: a dynamic model that returned no model.
    """
    stream, invoke = getattr(model, "stream", None), getattr(model, "invoke", None)
    plain = inspect.isroutine(model)
    if callable(stream) and (ctx.streams_messages or (not plain and not callable(invoke))):
        import uuid  # noqa: PLC0415 - only streaming models need ids for their pieces

        message_id = f"msg-{uuid.uuid4().hex}"
        pieces = []
        for piece in stream(messages):
            pieces.append(piece)
            ctx.stream_message(piece, id=message_id)
        reply = answer(_joined(pieces))
        return {**reply, "id": message_id} if isinstance(reply, dict) and not reply.get("id") else reply
    if callable(invoke) and not plain:
        return answer(invoke(messages))
    if not callable(model):
        msg = f"the agent's dynamic model returned {type(model).__name__}, not a model; return a chat model"
        raise ConfigError(msg)
    return answer(model(messages))


def answer(reply: Any) -> Any:
    """A model's reply as a message: a string, or a dict without a role, is the assistant's."""
    if isinstance(reply, str):
        return coerce_message({"role": "assistant", "content": reply})
    if isinstance(reply, Mapping) and "role" not in reply:
        return coerce_message({"role": "assistant", **reply})
    return coerce_message(reply)


def _joined(pieces: list[Any]) -> Any:
    """One message from the pieces a model streamed (langchain-core chunks are added up)."""
    if pieces and all(hasattr(p, "content") and hasattr(p, "__add__") for p in pieces):
        total = pieces[0]
        for piece in pieces[1:]:
            total = total + piece
        from langchain_core.messages import message_chunk_to_message  # noqa: PLC0415 - only with langchain

        return message_chunk_to_message(total)
    text: list[str] = []
    calls: list[Any] = []
    first: dict[str, Any] = {}
    for piece in pieces:
        if isinstance(piece, str):
            text.append(piece)
            continue
        first = first or dict(piece)
        text.append(str(piece.get("content") or ""))
        calls.extend(piece.get("tool_calls") or [])
    message = {**first, "role": first.get("role", "assistant"), "content": "".join(text)}
    if calls:
        message["tool_calls"] = calls
    return message
