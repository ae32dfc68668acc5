"""`create_react_agent`: a model that calls tools in a loop until it answers, as a compiled graph.

Vertices `"agent"` (calls the model with the conversation) and `"tools"` (a
`ToolNode`: one task per tool call). The model is a plain function from a list
of messages to an assistant message, an object with `.invoke(messages)` (and
`.stream(messages)`, streamed when someone listens to `stream(mode="messages")`)
such as a langchain-core chat model, whose `bind_tools` is called with the
tools, or a dynamic model choosing the model at each call (`_models.py`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from actorgraph._api.compiled import CompiledGraph
from actorgraph._api.graph import Graph
from actorgraph._engine.context import Context
from actorgraph._model.errors import ConfigError, InvalidUpdateError
from actorgraph._model.records import END, START
from actorgraph.messages import MessagesState, id_of, role_of, tool_calls_of
from actorgraph.messages._coerce import is_langchain
from actorgraph.prebuilt._models import answer, bound, dynamic, reply_of
from actorgraph.prebuilt._outputs import as_objects
from actorgraph.prebuilt._tool_node import ToolNode, tools_condition

__all__ = ["ModelVertex", "create_react_agent"]

Prompt = str | Mapping[str, Any] | Callable[[Any], Sequence[Any]] | None
MORE_STEPS = "Sorry, need more steps to process this request."  # LangGraph's words, for the recursion limit


class ModelVertex:
    """The agent's `"agent"` vertex: call the model with the prompt and the conversation, add its reply."""

    def __init__(
        self,
        model: Any,
        tools: ToolNode,
        prompt: Prompt,
        messages_key: str = "messages",
        name: str | None = None,
    ) -> None:
        """Bind the tools to the model when it can take them (`bind_tools`).

        `name`, when given, names the agent's replies (as LangGraph's agents name theirs).

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
            or callable(getattr(prompt, "invoke", None))
        ):
            msg = (
                f"the agent's prompt must be a system message's text, a message, or a function of the "
                f"state returning the model's messages; got {type(prompt).__name__}"
            )
            raise ConfigError(msg)
        self.tools = [t.fn if t.native else t.spec() for t in tools.tools.values()]  # for bind_tools
        self.dynamic = dynamic(model)  # (state, ctx) -> the model: bound to the tools at each call
        self.model = model if self.dynamic else bound(model, self.tools)
        self.prompt = prompt
        self.messages_key = messages_key
        self.name = name

    def __repr__(self) -> str:
        return f"ModelVertex({self.model!r})"

    def conversation(self, state: Any) -> list[Any]:
        """What the model is given: the prompt, then the state's messages."""
        messages = list(state.get(self.messages_key, []) if isinstance(state, Mapping) else state)
        prompt: Any = self.prompt
        if prompt is None:
            return messages
        if isinstance(prompt, str):
            return [{"role": "system", "content": prompt}, *messages]
        if callable(prompt) and not hasattr(prompt, "content"):
            return list(prompt(state))
        if not isinstance(prompt, Mapping) and callable(getattr(prompt, "invoke", None)):  # a Runnable
            return list(prompt.invoke(state))
        return [prompt, *messages]

    def __call__(self, state: Any, ctx: Context[Any]) -> dict[str, Any]:
        """Call the model and return its reply as an update, as LangGraph's agent node does.

        The model is streamed (its pieces to `stream(mode="messages")`) when someone
        listens to the message pieces, and invoked otherwise. Its reply is of the
        conversation's kind: when the conversation or the reply holds langchain-core
        messages, the reply is one, and the conversation's message dicts become ones
        too (by id, in place). A reply asking for tools when fewer than two supersteps
        are left says so instead (LangGraph's "Sorry, need more steps").

        Raises:
            InvalidUpdateError: the conversation holds a tool call without its answer.
        """
        held = list(state.get(self.messages_key, []) if isinstance(state, Mapping) else state)
        _refuse_unanswered(held)
        model = bound(self.model(state, ctx), self.tools) if self.dynamic else self.model
        reply = self._named(reply_of(model, self.conversation(state), ctx))
        left = ctx.remaining_steps
        if tool_calls_of(reply) and left is not None and left < 2:  # noqa: PLR2004 - the tools, then the model
            reply = answer({"content": MORE_STEPS, "id": id_of(reply)})
        if not (is_langchain(reply) or any(map(is_langchain, held))):
            return {self.messages_key: [reply]}
        converted = [as_objects(m) for m in held if isinstance(m, dict)]  # replaced in place, by id
        return {self.messages_key: [*converted, as_objects(reply)]}

    def _named(self, reply: Any) -> Any:
        """The reply named after the agent, when it has a name and the reply none."""
        if self.name is None or _field(reply, "name"):
            return reply
        if isinstance(reply, dict):
            return {**reply, "name": self.name}
        return reply.model_copy(update={"name": self.name})


def _refuse_unanswered(messages: list[Any]) -> None:
    """Refuse a conversation with a tool call no tool message answers (providers refuse it too)."""
    answered = {_field(m, "tool_call_id") for m in messages if role_of(m) == "tool"}
    missing = [call for m in messages if role_of(m) == "assistant" for call in tool_calls_of(m)]
    missing = [call for call in missing if call.get("id") not in answered]
    if missing:
        shown = ", ".join(f"{c['name']} ({c.get('id')!r})" for c in missing[:5])
        msg = (
            f"the conversation holds tool call(s) {shown} that no tool message answers, so the model "
            "cannot be called with it (LangGraph: INVALID_CHAT_HISTORY); answer each call with a tool "
            "message (update_state), or remove the message asking for them (RemoveMessage)"
        )
        raise InvalidUpdateError(msg)


def _after_tools(state: Any, *, direct: frozenset[str], key: str) -> str:
    """Where the agent goes after its tools: END when one of them returns directly, else the model."""
    for message in reversed(state[key]):
        if role_of(message) != "tool":
            break
        if _field(message, "name") in direct:
            return END
    return "agent"


def _field(message: Any, name: str) -> Any:
    return message.get(name) if isinstance(message, Mapping) else getattr(message, name, None)


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
            langchain-core message); an object with `.invoke(messages)` (and
            optionally `.stream(messages)`, streamed when someone listens to
            `stream(mode="messages")`: the joined pieces are saved) such as a
            langchain-core chat model, whose `bind_tools` is called with the tools;
            or a dynamic model, a function `(state, ctx)` returning the model to
            call (LangGraph's `(state, runtime)`).
        tools: Python functions or langchain-core tools (`return_direct` ones end
            the run with their result), or a `ToolNode`. A tool may return a
            `Command`: to update the state, or to hand off to another agent of the
            graph this one is a subgraph of (`Command(graph=Command.PARENT, goto=...)`).
        prompt: a system message's text, a message put first, or a function (or a
            langchain-core Runnable) `state -> messages` that makes the model's whole input.
        state_schema: the state's schema (default `MessagesState`); it needs a
            `messages` key with the `add_messages` reducer (and may declare
            `remaining_steps: RemainingSteps`).
        checkpointer: where runs are recorded (a thread remembers its conversation).
        store: the cross-thread memory store tools receive with `InjectedStore`.
        interrupt_before: pause before these vertices (`["tools"]` to approve tool calls).
        interrupt_after: pause after these vertices.
        name: the graph's name (its vertex's in a graph it is added to), and its replies'.
        **compile_options: other `Graph.compile` options (`durability`, `listeners`, ...).

    Returns:
        The compiled agent, with vertices `"agent"` and `"tools"`.

    Raises:
        ConfigError: a tool or option that cannot be used.
    """
    node = tools if isinstance(tools, ToolNode) else ToolNode(list(tools))
    graph = _agent_graph(ModelVertex(model, node, prompt, node.messages_key, name), node, state_schema, name)
    compile_options.update(interrupt_before=interrupt_before, interrupt_after=interrupt_after)
    compile_options.update({"store": store} if store is not None else {})
    return graph.compile(checkpointer, **compile_options)


def _agent_graph(vertex: ModelVertex, node: ToolNode, schema: type | None, name: str | None) -> Graph[Any]:
    """START -> agent -> (tools -> agent)* -> END, or END after a `return_direct` tool."""
    graph: Graph[Any] = Graph(state=schema or MessagesState, name=name or "agent")
    graph.add_vertex("agent", vertex, returns="update")
    graph.add_vertex("tools", node)
    graph.add_edge(START, "agent")
    route = functools.partial(tools_condition, messages_key=node.messages_key)
    graph.add_conditional_edges("agent", route, {"tools": "tools", END: END})
    direct = frozenset(name for name, tool in node.tools.items() if tool.return_direct)
    if direct:  # a return_direct tool's result is the answer: the run ends after it
        after = functools.partial(_after_tools, direct=direct, key=node.messages_key)
        graph.add_conditional_edges("tools", after, ["agent", END])
    else:
        graph.add_edge("tools", "agent")
    return graph
