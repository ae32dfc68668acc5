"""`ToolNode`: a vertex that runs the tool calls of the last assistant message, each as a task of its own.

Added with `add_vertex("tools", ToolNode(tools))`, it runs as a small subgraph:
one `Send` task per tool call, so the calls run in parallel on actors, each is
retried by the vertex's `RetryPolicy` and bounded by its `timeout`, and each
finished call is checkpointed the moment it finishes. A process killed after
two of three calls re-runs only the third on resume. The tool messages are
added to the state's messages in the order of the calls.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from typing import Any

from actorgraph._api.graph import Graph
from actorgraph._engine.context import Context
from actorgraph._model.errors import ConfigError, GraphValidationError
from actorgraph._model.records import END, START, Send
from actorgraph._model.schema import Schema
from actorgraph.merge import append, by_key
from actorgraph.messages import last_message, tool_calls_of, tool_message
from actorgraph.messages._coerce import is_langchain
from actorgraph.prebuilt._outputs import combined, outcome_of
from actorgraph.prebuilt._tools import InjectedState, Tool, ToolCallError, as_tool, tool_names

__all__ = ["ToolNode", "tools_condition"]

ErrorHandling = bool | str | Callable[[BaseException], str]
_CALL = "call"  # the inner vertex: one task per tool call


def _error_text(error: BaseException) -> str:
    kind = getattr(error, "type", None) or type(error).__name__  # a RecordedError keeps the type's name
    return f"Error: {kind.rpartition('.')[2]}: {error}\n Please fix your mistakes."


class ToolNode:
    """A vertex that runs every tool call of the last assistant message and adds one tool message per call.

    Each call is a task of its own (parallel, retried by the vertex's `retry`,
    bounded by its `timeout`, checkpointed when it finishes). An unknown tool
    name or arguments that do not fit the tool's schema are not retried. When a
    call's retries are spent (or it was not retried), its error becomes a tool
    message with the error's text when `handle_tool_errors` is true, so the
    model can correct itself; otherwise the vertex fails. A tool may call
    `interrupt()` to ask a person before it acts.

    Example:
        ```python
        from actorgraph import START, Graph, RetryPolicy
        from actorgraph.messages import MessagesState
        from actorgraph.prebuilt import ToolNode, tools_condition

        def add(a: int, b: int) -> int:  # its docstring would tell the model what it does
            return a + b

        def call_model(state):  # a stand-in for a model: ask for add(2, 3), then say its result
            last = state["messages"][-1]
            if last["role"] == "tool":
                return {"messages": [{"role": "assistant", "content": f"2 + 3 = {last['content']}"}]}
            call = {"id": "c1", "name": "add", "args": {"a": 2, "b": 3}}
            return {"messages": [{"role": "assistant", "content": "", "tool_calls": [call]}]}

        g = Graph(state=MessagesState)
        g.add_vertex("agent", call_model, returns="update")
        g.add_vertex("tools", ToolNode([add]), retry=RetryPolicy())
        g.add_edge(START, "agent")
        g.add_conditional_edges("agent", tools_condition)
        g.add_edge("tools", "agent")
        with g.compile() as app:
            assert app.invoke({"messages": ["2 + 3?"]})["messages"][-1]["content"] == "2 + 3 = 5"
        ```
    """

    def __init__(
        self,
        tools: Iterable[Any],
        *,
        handle_tool_errors: ErrorHandling = True,
        messages_key: str = "messages",
        name: str = "tools",
    ) -> None:
        """Read the tools.

        Args:
            tools: Python functions (name, docstring and type hints make the tool)
                or langchain-core tools. A tool may return a `Command` (see `_outputs.py`).
            handle_tool_errors: True (the error's text becomes the tool message),
                a fixed message, a function `error -> message`, or False (the vertex fails).
            messages_key: the state key holding the conversation.
            name: the vertex's name when added as `add_vertex(tool_node)`.

        Raises:
            ConfigError: a tool that is not one, or two tools of one name.
        """
        self.tools: dict[str, Tool] = {}
        for tool in map(as_tool, tools):
            if tool.name in self.tools:
                msg = f"two tools are named {tool.name!r}; give each tool a unique name"
                raise ConfigError(msg)
            self.tools[tool.name] = tool
        if not (isinstance(handle_tool_errors, (bool, str)) or callable(handle_tool_errors)):
            msg = "handle_tool_errors must be True, False, a message or a function error -> message"
            raise ConfigError(msg)
        self.handle_tool_errors = handle_tool_errors
        self.messages_key = messages_key
        self.name = name
        self._wants_state = any(  # only then does each call's task carry the state
            m is InjectedState or isinstance(m, InjectedState)
            for t in self.tools.values()
            for m in t.injected.values()
        )

    def __repr__(self) -> str:
        return f"ToolNode([{tool_names(self.tools)}])"

    def specs(self) -> list[dict[str, Any]]:
        """The tools as a model is told about them (`{"name", "description", "parameters"}` each)."""
        return [tool.spec() for tool in self.tools.values()]

    # -- one call ------------------------------------------------------------------------------

    def run_call(self, call: Mapping[str, Any], *, state: Any = None, store: Any = None) -> dict[str, Any]:
        """Run one tool call and return its tool message, or its `Command` as a record (see `_outputs.py`).

        Errors raise (see `error_message`).

        An `async def` tool runs to its end on an event loop of its own here; in
        a graph, its task awaits it on the vertex actor's loop.

        Raises:
            ToolCallError: an unknown tool, or arguments that do not fit its schema.
        """
        message = self._start(call, state=state, store=store)
        if inspect.isawaitable(message):
            import asyncio  # noqa: PLC0415 - asyncio pulls in ssl: only async tools import it

            return asyncio.run(_awaited(message))
        return message

    def _start(self, call: Mapping[str, Any], *, state: Any, store: Any) -> dict[str, Any] | Awaitable[Any]:
        """The call's tool message, or (for an `async def` tool) an awaitable of it."""
        name, call_id = call.get("name"), str(call.get("id") or "")
        tool = self.tools.get(name) if isinstance(name, str) else None
        if tool is None:
            msg = f"the model called tool {name!r}, which is not one of: {tool_names(self.tools)}"
            raise ToolCallError(msg)
        args = call.get("args", {})
        tool.check(args)
        result = tool.call(args, state=state, store=store, call_id=call_id)
        if inspect.isawaitable(result):
            return _message_when_done(result, call_id, tool.name)
        return outcome_of(result, call_id, tool.name)

    def error_message(self, call: Mapping[str, Any], error: BaseException) -> dict[str, Any]:
        """The tool message that reports `error` to the model (by `handle_tool_errors`)."""
        handling = self.handle_tool_errors
        if isinstance(handling, str):
            text = handling
        elif callable(handling) and not isinstance(handling, bool):
            text = str(handling(error))
        else:
            text = _error_text(error)
        message = tool_message(text, str(call.get("id") or ""), str(call.get("name") or ""))
        return {**message, "status": "error"}

    # -- outside a graph -------------------------------------------------------------------------

    def invoke(self, state: Any, *, store: Any = None) -> Any:
        """Run the calls of `state`'s last message (or of `state`, a list of calls) in turn, outside a graph.

        Returns:
            `{messages_key: [tool message, ...]}`, or the `Command` the vertex would
            return when tools returned `Command`s.
        """
        outcomes = []
        for call in self._calls(state):
            try:
                outcomes.append(self.run_call(call, state=state, store=store))
            except Exception as exc:
                if self.handle_tool_errors is False:
                    raise
                outcomes.append(self.error_message(call, exc))
        return combined(outcomes, self.messages_key, objects=self._objects(state))

    __call__ = invoke

    def _calls(self, state: Any) -> list[dict[str, Any]]:
        if isinstance(state, list) and state and all(map(_is_call, state)):  # the tool calls themselves
            return [dict(call) for call in state]
        last = self._asking(state)
        return tool_calls_of(last) if last is not None else []

    def _asking(self, state: Any) -> Any:
        """The message whose tool calls run (the conversation's last), or None for a list of calls."""
        if isinstance(state, list) and state and all(map(_is_call, state)):
            return None
        return last_message(state.get(self.messages_key, []) if isinstance(state, Mapping) else state)

    def _objects(self, state: Any) -> bool:
        """Whether the conversation holds langchain-core messages, so the messages added are too."""
        return is_langchain(self._asking(state))

    # -- inside a graph: a subgraph of one task per call -----------------------------------------

    def as_vertex(self, graph: Any, name: str, options: dict[str, Any]) -> tuple[Graph[Any], dict[str, Any]]:
        """What `add_vertex(name, tool_node, **options)` adds: a subgraph running one task per call.

        `retry`, `timeout` and `concurrency` apply to each call's task.

        Raises:
            GraphValidationError: the graph has no reducer for the messages key, so
                the tool messages would replace the conversation.
        """
        self._check_reducer(graph, name)
        inner_options: dict[str, Any] = {
            k: options.pop(k) for k in ("retry", "timeout", "concurrency") if k in options
        }
        if self.handle_tool_errors is not False:
            inner_options["on_error"] = self._on_error
        inner: Graph[Any] = Graph(
            merge=by_key({"results": append}),
            name=f"{name}.calls",
            retry=inner_options.pop("retry", None) or graph.retry or None,
            returns="state",
        )
        inner.inline = True  # a tool's get_stream_writer() streams as this vertex's, not a subgraph's
        inner.add_vertex(_CALL, self._task, **inner_options)
        inner.add_conditional_edges(START, self._fan_out, {_CALL: _CALL, END: END})
        inner.add_edge(_CALL, END)
        options.setdefault("retry", [])  # each call's task is retried, not the whole step
        options["input"] = self._input
        options["output"] = self._output
        return inner, options

    __actorgraph_vertex__ = as_vertex  # what `Graph.add_vertex` looks for

    def _check_reducer(self, graph: Any, name: str) -> None:
        key = self.messages_key
        reducers = dict(getattr(graph.merge, "reducers", None) or {})
        if graph.state is not None:
            reducers.update(Schema(graph.state).reducers)
        if key not in reducers:
            msg = (
                f"vertex {name!r}: ToolNode adds its tool messages to state[{key!r}] through that key's "
                f"reducer, and the graph declares none, so they would replace the conversation; use "
                f"Graph(state=MessagesState) or merge=by_key({{{key!r}: add_messages}})"
            )
            raise GraphValidationError(msg)

    def _input(self, state: Any) -> dict[str, Any]:
        inner: dict[str, Any] = {"results": [], "calls": self._calls(state), "objects": self._objects(state)}
        if self._wants_state:
            inner["state"] = state
        return inner

    def _output(self, final: Mapping[str, Any]) -> Any:
        return combined(list(final["results"]), self.messages_key, objects=bool(final.get("objects")))

    def _fan_out(self, inner: Mapping[str, Any]) -> Sequence[Send] | str:
        calls = inner["calls"]
        if not calls:
            return END
        return [Send(_CALL, {**inner, "call": call}) for call in calls]  # a whole state: the task returns one

    def _task(self, inner: dict[str, Any], ctx: Context[Any]) -> dict[str, Any] | Awaitable[dict[str, Any]]:
        call = inner["call"]
        try:
            message = self._start(call, state=inner.get("state"), store=getattr(ctx, "store", None))
        except ToolCallError as mistake:  # the model's mistake: never retried, told to the model
            if self.handle_tool_errors is False:
                raise
            message = self.error_message(call, mistake)
        if inspect.isawaitable(message):  # an async tool: the engine awaits the task's coroutine
            return _results_when_done(_without_call(inner), message)
        return {**_without_call(inner), "results": [message]}

    def _on_error(self, inner: dict[str, Any], error: BaseException) -> dict[str, Any]:
        return {**_without_call(inner), "results": [self.error_message(inner["call"], error)]}


async def _awaited(message: Awaitable[dict[str, Any]]) -> dict[str, Any]:
    return await message


async def _message_when_done(result: Awaitable[Any], call_id: str, name: str) -> dict[str, Any]:
    return outcome_of(await result, call_id, name)


async def _results_when_done(inner: dict[str, Any], message: Awaitable[dict[str, Any]]) -> dict[str, Any]:
    return {**inner, "results": [await message]}


def _without_call(inner: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in inner.items() if k != "call"}


def _is_call(item: Any) -> bool:
    """A tool call (`{"name", "args", "id"}`) rather than a message."""
    return isinstance(item, Mapping) and "name" in item and "args" in item and "role" not in item


def tools_condition(state: Any, messages_key: str = "messages") -> str:
    """A router: `"tools"` when the last message asks for tool calls, else `END`.

    `state` is a state mapping (its `messages_key`) or a list of messages.
    """
    messages = state.get(messages_key, []) if isinstance(state, Mapping) else state
    last = last_message(messages)
    return "tools" if last is not None and tool_calls_of(last) else END
