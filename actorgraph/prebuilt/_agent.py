"""`create_react_agent`: a model that calls tools in a loop until it answers, as a compiled graph.

Vertices `"agent"` (calls the model with the conversation) and `"tools"` (a
`ToolNode`: one task per tool call). The model is a plain function from a list
of messages to an assistant message, or an object with `.invoke(messages)`
(and `.stream(messages)`, whose pieces `stream(mode="messages")` yields) such
as a langchain-core chat model, whose `bind_tools` is called with the tools.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from actorgraph._api.compiled import CompiledGraph
from actorgraph._api.graph import Graph
from actorgraph._engine.context import Context
from actorgraph._model.errors import ConfigError
from actorgraph._model.records import END, START
from actorgraph.messages import MessagesState, coerce_message
from actorgraph.prebuilt._tool_node import ToolNode, tools_condition

__all__ = ["ModelVertex", "create_react_agent"]

Prompt = str | Mapping[str, Any] | Callable[[Any], Sequence[Any]] | None


def _answer(reply: Any) -> Any:
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


class ModelVertex:
    """The agent's `"agent"` vertex: call the model with the prompt and the conversation, add its reply."""

    def __init__(self, model: Any, tools: ToolNode, prompt: Prompt, messages_key: str = "messages") -> None:
        """Bind the tools to the model when it can take them (`bind_tools`).

        Raises:
            ConfigError: the model is neither callable nor has `.invoke()` / `.stream()`, or the
                prompt is none of a string, a message or a function of the state.
        """
        if not (
            callable(model)
            or callable(getattr(model, "invoke", None))
            or callable(getattr(model, "stream", None))
        ):
            msg = f"the agent's model must be a function of the messages or have .invoke(), got {model!r}"
            raise ConfigError(msg)
        if not (
            prompt is None
            or isinstance(prompt, str | Mapping)
            or callable(prompt)
            or hasattr(prompt, "content")
        ):
            msg = (
                f"the agent's prompt must be a system message's text, a message, or a function of the "
                f"state returning the model's messages; got {type(prompt).__name__}"
            )
            raise ConfigError(msg)
        bind = getattr(model, "bind_tools", None)
        if callable(bind) and tools.tools:
            model = bind([t.fn if t.native else t.spec() for t in tools.tools.values()])
        self.model = model
        self.prompt = prompt
        self.messages_key = messages_key

    def __repr__(self) -> str:
        return f"ModelVertex({self.model!r})"

    def conversation(self, state: Any) -> list[Any]:
        """What the model is given: the prompt, then the state's messages."""
        messages = list(state.get(self.messages_key, []) if isinstance(state, Mapping) else state)
        prompt = self.prompt
        if prompt is None:
            return messages
        if isinstance(prompt, str):
            return [{"role": "system", "content": prompt}, *messages]
        if callable(prompt) and not hasattr(prompt, "content"):
            return list(prompt(state))
        return [prompt, *messages]

    def __call__(self, state: Any, ctx: Context[Any]) -> dict[str, Any]:
        """Call the model; stream its pieces when it streams; return the reply as an update."""
        messages = self.conversation(state)
        model = self.model
        stream = getattr(model, "stream", None)
        if callable(stream):
            import uuid  # noqa: PLC0415 - only streaming models need ids for their pieces

            message_id = f"msg-{uuid.uuid4().hex}"
            pieces = []
            for piece in stream(messages):
                pieces.append(piece)
                ctx.stream_message(piece, id=message_id)
            reply = _answer(_joined(pieces))
            if isinstance(reply, dict) and not reply.get("id"):
                reply = {**reply, "id": message_id}
        elif hasattr(model, "invoke") and not _plain_function(model):
            reply = _answer(model.invoke(messages))
        else:
            reply = _answer(model(messages))  # callable: checked when the vertex was made
        return {self.messages_key: [reply]}


def _plain_function(obj: Any) -> bool:
    import inspect  # noqa: PLC0415 - a cheap module, but only this check needs it

    return inspect.isroutine(obj)


def create_react_agent(  # noqa: PLR0913 - LangGraph's signature, all keyword-only after the tools
    model: Any,
    tools: Iterable[Any] | ToolNode,
    *,
    prompt: Prompt = None,
    state_schema: type | None = None,
    checkpointer: Any = None,
    store: Any = None,
    interrupt_before: Sequence[str] | None = None,
    interrupt_after: Sequence[str] | None = None,
    name: str | None = None,
    **compile_options: Any,
) -> CompiledGraph[Any]:
    """A ReAct agent: the model answers or asks for tool calls; the tools run; again, until it answers.

    Args:
        model: a function `messages -> assistant message` (a dict, a string, or a
            langchain-core message), or an object with `.invoke(messages)` (and
            optionally `.stream(messages)`, whose pieces `stream(mode="messages")`
            yields; the joined message is saved). A langchain-core chat model's
            `bind_tools` is called with the tools.
        tools: Python functions or langchain-core tools, or a `ToolNode`.
        prompt: a system message's text, a message put first, or a function
            `state -> messages` that makes the model's whole input.
        state_schema: the state's schema (default `MessagesState`); it needs a
            `messages` key with the `add_messages` reducer.
        checkpointer: where runs are recorded (a thread remembers its conversation).
        store: the cross-thread memory store tools receive with `InjectedStore`.
        interrupt_before: pause before these vertices (`["tools"]` to approve tool calls).
        interrupt_after: pause after these vertices.
        name: the graph's name.
        **compile_options: other `Graph.compile` options (`durability`, `listeners`, ...).

    Returns:
        The compiled agent, with vertices `"agent"` and `"tools"`.

    Raises:
        ConfigError: a tool or option that cannot be used.
    """
    node = tools if isinstance(tools, ToolNode) else ToolNode(list(tools))
    graph: Graph[Any] = Graph(state=state_schema or MessagesState, name=name or "agent")
    graph.add_vertex("agent", ModelVertex(model, node, prompt, node.messages_key), returns="update")
    graph.add_vertex("tools", node)
    graph.add_edge(START, "agent")
    route = functools.partial(tools_condition, messages_key=node.messages_key)
    graph.add_conditional_edges("agent", route, {"tools": "tools", END: END})
    graph.add_edge("tools", "agent")
    compile_options.update(interrupt_before=interrupt_before, interrupt_after=interrupt_after)
    compile_options.update({"store": store} if store is not None else {})
    return graph.compile(checkpointer, **compile_options)
