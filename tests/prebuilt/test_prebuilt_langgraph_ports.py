"""LangGraph's prebuilt tests (libs/prebuilt/tests: test_tool_node.py, test_react_agent.py), ported.

Each test's docstring names the LangGraph test it ports. LangGraph's tests use
langchain-core messages and a `FakeToolCallingModel` whose reply echoes the
contents it was given, joined by "-", with the id of its call number;
`EchoModel` below does the same over our message dicts. Where our behaviour
differs on purpose, the test asserts ours and the docstring says why.
"""

from __future__ import annotations

import json
import threading
from typing import Annotated, Any, TypedDict

import pytest

from actorgraph import END, START, Command, ConfigError, Graph, VertexError, interrupt
from actorgraph.checkpoint import MemoryCheckpointer
from actorgraph.messages import MessagesState, add_messages
from actorgraph.prebuilt import (
    InjectedState,
    InjectedStore,
    InjectedToolCallId,
    ToolCallError,
    ToolNode,
    create_react_agent,
    tools_condition,
)
from actorgraph.store import MemoryStore

pytestmark = pytest.mark.threads_only(
    "the fake models and counting tools keep their script and counts in this process's memory"
)

Compile = Any


class EchoModel:
    """LangGraph's FakeToolCallingModel: the reply joins the contents it was given; tool calls by plan."""

    def __init__(self, tool_calls: list[list[dict[str, Any]]] | None = None) -> None:
        self.tool_calls = tool_calls or []
        self.index = 0
        self.bound: list[Any] = []
        self._lock = threading.Lock()

    def bind_tools(self, tools: list[Any]) -> EchoModel:
        self.bound = list(tools)
        return self

    def invoke(self, messages: list[dict[str, Any]]) -> dict[str, Any]:
        with self._lock:
            index, self.index = self.index, self.index + 1
        calls = self.tool_calls[index % len(self.tool_calls)] if self.tool_calls else []
        reply = {"role": "assistant", "content": "-".join(m["content"] for m in messages), "id": str(index)}
        return {**reply, "tool_calls": list(calls)} if calls else reply


def tool1(some_val: int, some_other_val: str) -> str:
    """Tool 1 docstring."""
    if some_val == 0:
        raise ValueError("Test error")
    return f"{some_val} - {some_other_val}"


async def tool2(some_val: int, some_other_val: str) -> str:
    """Tool 2 docstring."""
    if some_val == 0:
        raise KeyError("Test error")
    return f"tool2: {some_val} - {some_other_val}"


def tool3(some_val: int, some_other_val: str) -> list[dict[str, Any]]:
    """Tool 3 docstring."""
    return [{"key_1": some_val, "key_2": "foo"}, {"key_1": some_other_val, "key_2": "baz"}]


def asks(*calls: dict[str, Any]) -> dict[str, Any]:
    return {"role": "assistant", "content": "hi?", "tool_calls": list(calls)}


def call(name: str, id: str = "some 0", **args: Any) -> dict[str, Any]:  # noqa: A002 - a tool call's id
    return {"name": name, "args": args, "id": id}


def last(result: dict[str, Any]) -> dict[str, Any]:
    message: dict[str, Any] = result["messages"][-1]
    return message


def tool_graph(node: ToolNode, state: type = MessagesState) -> Graph[Any]:
    g: Graph[Any] = Graph(state=state)
    g.add_vertex("tools", node)
    g.add_edge(START, "tools")
    g.add_edge("tools", END)
    return g


# -- ToolNode (test_tool_node.py) -----------------------------------------------------------------


def test_tool_node() -> None:
    """Ports test_tool_node: a call's result becomes its tool message; an async tool is awaited.

    A list result is JSON text, as LangGraph's. Its `tool4` returns content blocks
    kept as a list; ours makes every non-string result text (JSON for lists), on
    purpose: a tool message's content is text the model reads.
    """
    message = last(
        ToolNode([tool1]).invoke({"messages": [asks(call("tool1", some_val=1, some_other_val="foo"))]})
    )
    assert (message["role"], message["content"], message["tool_call_id"]) == ("tool", "1 - foo", "some 0")
    message = last(
        ToolNode([tool2]).invoke({"messages": [asks(call("tool2", some_val=2, some_other_val="bar"))]})
    )
    assert message["content"] == "tool2: 2 - bar"
    message = last(
        ToolNode([tool3]).invoke(
            {"messages": [asks(call("tool3", "some 2", some_val=2, some_other_val="bar"))]}
        )
    )
    assert message["content"] == '[{"key_1": 2, "key_2": "foo"}, {"key_1": "bar", "key_2": "baz"}]'
    assert message["tool_call_id"] == "some 2"


def test_tool_node_async_tool_in_a_graph(compile_graph: Compile) -> None:
    """Ports the async half of test_tool_node: an `async def` tool runs as its call's task in a graph."""
    app = compile_graph(tool_graph(ToolNode([tool1, tool2])))
    calls = [
        call("tool2", "a", some_val=2, some_other_val="bar"),
        call("tool1", "b", some_val=1, some_other_val="x"),
    ]
    messages = app.invoke({"messages": [asks(*calls)]}).state["messages"]
    assert [m["content"] for m in messages[1:]] == ["tool2: 2 - bar", "1 - x"]


def test_tool_node_tool_call_input() -> None:
    """Ports test_tool_node_tool_call_input: `invoke` takes a list of tool calls instead of a state.

    LangGraph's unknown-tool text is "Error: tool2 is not a valid tool, try one of
    [tool1]."; ours names the tool and lists the ones there are, in our words.
    """
    first, second = (
        call("tool1", "some 0", some_val=1, some_other_val="foo"),
        call("tool1", "some 1", some_val=2, some_other_val="bar"),
    )
    assert [m["content"] for m in ToolNode([tool1]).invoke([first])["messages"]] == ["1 - foo"]
    both = ToolNode([tool1]).invoke([first, second])["messages"]
    assert [(m["content"], m["tool_call_id"], m["name"]) for m in both] == [
        ("1 - foo", "some 0", "tool1"),
        ("2 - bar", "some 1", "tool1"),
    ]
    unknown = ToolNode([tool1]).invoke([first, {**first, "name": "tool2"}])["messages"]
    assert unknown[0]["content"] == "1 - foo"
    assert unknown[1]["status"] == "error"
    assert "'tool2', which is not one of: tool1" in unknown[1]["content"]


def test_tool_node_error_handling_default_invocation() -> None:
    """Ports test_tool_node_error_handling_default_invocation: unfit arguments are an error message."""
    result = ToolNode([tool1]).invoke({"messages": [asks(call("tool1", invalid=0, args="foo"))]})
    message = last(result)
    assert (message["role"], message["status"]) == ("tool", "error")
    assert "unknown argument 'invalid'" in message["content"]
    assert "missing argument 'some_val'" in message["content"]


def test_tool_node_error_handling_default_exception() -> None:
    """Ports test_tool_node_error_handling_default_exception, which expects the tool's ValueError raised.

    Ours differs on purpose: by default (`handle_tool_errors=True`) any error left
    when the call's retries are spent is told to the model, so it can correct
    itself; `handle_tool_errors=False` raises (see the test below).
    """
    message = last(
        ToolNode([tool1]).invoke({"messages": [asks(call("tool1", some_val=0, some_other_val="foo"))]})
    )
    assert message["status"] == "error"
    assert message["content"] == "Error: ValueError: Test error\n Please fix your mistakes."


def test_tool_node_error_handling() -> None:
    """Ports test_tool_node_error_handling (its `handle_tool_errors=True` case).

    Each failed call gets its own error message with its call id; invalid
    arguments name the missing field. The texts are "Error: <type>: <text>"
    rather than the exception's repr. LangGraph's tuple of exception types and
    its handlers typed by exception are not ported: our handler gets every error.
    """
    calls = [
        call("tool1", "some id", some_val=0, some_other_val="foo"),
        call("tool2", "some other id", some_val=0, some_other_val="bar"),
        call("tool3", "another id", some_val=0),
    ]
    messages = ToolNode([tool1, tool2, tool3], handle_tool_errors=True).invoke({"messages": [asks(*calls)]})[
        "messages"
    ]
    assert all(m["role"] == "tool" and m["status"] == "error" for m in messages)
    assert messages[0]["content"] == "Error: ValueError: Test error\n Please fix your mistakes."
    assert messages[1]["content"] == "Error: KeyError: 'Test error'\n Please fix your mistakes."
    assert "some_other_val" in messages[2]["content"]
    assert [m["tool_call_id"] for m in messages] == ["some id", "some other id", "another id"]


def test_tool_node_error_handling_callable() -> None:
    """Ports test_tool_node_error_handling_callable: a fixed text, or a function of the error, is the message.

    LangGraph re-raises errors whose type the handler's annotation does not name;
    ours calls the function with every error (it may raise itself to fail the call).
    """
    seen: list[BaseException] = []

    def handle(error: BaseException) -> str:
        seen.append(error)
        return "Value error"

    for handling in ("Value error", handle):
        node = ToolNode([tool1, tool2], handle_tool_errors=handling)
        calls = [
            call("tool1", "a", some_val=0, some_other_val="foo"),
            call("tool2", "b", some_val=0, some_other_val="x"),
        ]
        messages = node.invoke({"messages": [asks(*calls)]})["messages"]
        assert [(m["content"], m["status"]) for m in messages] == [("Value error", "error")] * 2
    assert [type(e) for e in seen] == [ValueError, KeyError]


def test_tool_node_handle_tool_errors_false(compile_graph: Compile) -> None:
    """Ports test_tool_node_handle_tool_errors_false: the tool's error, and a validation error, are raised.

    LangGraph raises `ToolInvocationError` for invalid arguments; ours raises
    `ToolCallError`. In a graph the vertex fails (`VertexError`, the call's error inside).
    """
    node = ToolNode([tool1, tool2], handle_tool_errors=False)
    with pytest.raises(ValueError, match="Test error"):
        node.invoke({"messages": [asks(call("tool1", some_val=0, some_other_val="foo"))]})
    with pytest.raises(KeyError, match="Test error"):
        node.invoke({"messages": [asks(call("tool2", some_val=0, some_other_val="bar"))]})
    with pytest.raises(ToolCallError, match="missing argument 'some_other_val'"):
        node.invoke({"messages": [asks(call("tool1", some_val=0))]})
    app = compile_graph(tool_graph(node))
    with pytest.raises(VertexError, match="Test error"):
        app.invoke({"messages": [asks(call("tool1", some_val=0, some_other_val="foo"))]})


def test_tool_node_individual_tool_error_handling() -> None:
    """Ports test_tool_node_individual_tool_error_handling: a langchain tool's own handler comes first.

    The langchain tool answers its `ToolException` with its `handle_tool_error`
    text, so the node never sees an error: ours keeps that text as a plain tool
    message (LangGraph also marks it `status="error"`, which we cannot know).
    """
    tools = pytest.importorskip("langchain_core.tools")

    @tools.tool
    def tool5(some_val: int) -> str:
        """Tool 5 docstring."""
        raise tools.ToolException("Test error")

    tool5.handle_tool_error = "foo"
    message = last(
        ToolNode([tool5], handle_tool_errors="bar").invoke({"messages": [asks(call("tool5", some_val=0))]})
    )
    assert (message["content"], message["tool_call_id"]) == ("foo", "some 0")


def test_tool_node_incorrect_tool_name() -> None:
    """Ports test_tool_node_incorrect_tool_name: an unknown tool is an error message listing the tools."""
    message = last(
        ToolNode([tool1, tool2]).invoke({"messages": [asks(call("tool3", some_val=1, some_other_val="foo"))]})
    )
    assert (message["role"], message["status"], message["tool_call_id"]) == ("tool", "error", "some 0")
    assert "the model called tool 'tool3', which is not one of: tool1, tool2" in message["content"]


def test_tool_node_node_interrupt(compile_graph: Compile) -> None:
    """Ports test_tool_node_node_interrupt: an interrupt in a tool is never turned into an error message.

    LangGraph raises `GraphBubbleUp` out of `invoke` whatever `handle_tool_errors`
    is; ours pauses the run (status "interrupted") with the tool's question.
    """

    def tool_interrupt(some_val: int) -> str:
        """Tool docstring."""
        return str(interrupt("provide value for foo"))

    for handling in (True, "handled", lambda e: "handled", False):
        app = compile_graph(
            tool_graph(ToolNode([tool_interrupt], handle_tool_errors=handling)),
            checkpointer=MemoryCheckpointer(),
        )
        paused = app.invoke({"messages": [asks(call("tool_interrupt", some_val=0))]}, thread_id="t")
        assert paused.status == "interrupted"
        assert [i.value for i in paused.interrupts] == ["provide value for foo"]
        assert app.invoke(Command(resume="bar"), thread_id="t").state["messages"][-1]["content"] == "bar"


class FooState(TypedDict):
    messages: Annotated[list[Any], add_messages]
    foo: str


def test_tool_node_inject_state(compile_graph: Compile) -> None:
    """Ports test_tool_node_inject_state (its TypedDict schema): the whole state, or one key, injected.

    LangGraph fails with KeyError when the injected key is missing; ours gives
    None (the state's `.get`), so a tool can treat the key as optional.
    Pydantic and dataclass schemas are not ported (our states are mappings).
    """

    def whole(some_val: int, state: Annotated[dict[str, Any], InjectedState]) -> str:
        """Tool 1 docstring."""
        return str(state["foo"])

    def made(some_val: int, state: Annotated[dict[str, Any], InjectedState()]) -> str:
        """Tool 2 docstring."""
        return str(state["foo"])

    def keys(
        some_val: int,
        foo: Annotated[str, InjectedState("foo")],
        msgs: Annotated[list[Any], InjectedState("messages")],
    ) -> str:
        """Tool 3 docstring."""
        return str(foo)

    def first(some_val: int, msgs: Annotated[list[Any], InjectedState("messages")]) -> str:
        """Tool 4 docstring."""
        return str(msgs[0]["content"])

    node = ToolNode([whole, made, keys, first])
    for name in ("whole", "made", "keys"):
        assert (
            last(node.invoke({"messages": [asks(call(name, some_val=1))], "foo": "bar"}))["content"] == "bar"
        )
    assert last(node.invoke({"messages": [asks(call("keys", some_val=1))]}))["content"] == "None"
    assert last(node.invoke({"messages": [asks(call("first", some_val=1))], "foo": ""}))["content"] == "hi?"
    app = compile_graph(tool_graph(node, FooState))
    assert (
        last(app.invoke({"messages": [asks(call("whole", some_val=1))], "foo": "baz"}).state)["content"]
        == "baz"
    )
    assert (
        "some_val" in str(node.specs()[0]["parameters"])
        and "state" not in node.specs()[0]["parameters"]["properties"]
    )


def test_tool_node_inject_store(compile_graph: Compile) -> None:
    """Ports test_tool_node_inject_store: the graph's store (and a state key) reach the tool.

    Without a store LangGraph raises ValueError from the graph; ours raises the
    ConfigError that says to give the graph a store (a mistake in the graph,
    not the model's: it is not turned into a tool message).
    """
    store = MemoryStore()
    store.put(("test",), "test_key", {"foo": "bar"})

    def tool1(some_val: int, store: Annotated[Any, InjectedStore()]) -> str:
        """Tool 1 docstring."""
        return f"Some val: {some_val}, store val: {store.get(('test',), 'test_key').value['foo']}"

    def tool3(
        some_val: int, bar: Annotated[str, InjectedState("bar")], store: Annotated[Any, InjectedStore]
    ) -> str:
        """Tool 3 docstring."""
        value = store.get(("test",), "test_key").value["foo"]
        return f"Some val: {some_val}, store val: {value}, state val: {bar}"

    class BarState(MessagesState, total=False):
        bar: str

    node = ToolNode([tool1, tool3])
    app = compile_graph(tool_graph(node, BarState), store=store)
    assert last(node.invoke({"messages": [asks(call("tool1", some_val=1))]}, store=store))["content"] == (
        "Some val: 1, store val: bar"
    )
    assert last(app.invoke({"messages": [asks(call("tool1", some_val=1))]}).state)["content"] == (
        "Some val: 1, store val: bar"
    )
    given = {"messages": [asks(call("tool3", some_val=1))], "bar": "baz"}
    assert last(app.invoke(given).state)["content"] == "Some val: 1, store val: bar, state val: baz"
    without = compile_graph(tool_graph(node, BarState))
    with pytest.raises(ConfigError, match="give the graph one: store="):
        without.invoke(given)
    store.close()


def test_tool_node_ensure_utf8() -> None:
    """Ports test_tool_node_ensure_utf8: non-ASCII results stay readable in the JSON text."""

    def get_day_list(days: list[str]) -> list[str]:
        """choose days"""
        return days

    data = ["星期一", "水曜日", "목요일", "Friday"]
    outputs = ToolNode([get_day_list]).invoke(
        [{"role": "assistant", "content": "", "tool_calls": [call("get_day_list", "test_id", days=data)]}]
    )
    assert outputs["messages"][0]["content"] == json.dumps(data, ensure_ascii=False)


class SubState(TypedDict):
    subgraph_messages: Annotated[list[Any], add_messages]


def test_tool_node_messages_key(compile_graph: Compile) -> None:
    """Ports test_tool_node_messages_key: ToolNode and tools_condition on another messages key."""
    model = EchoModel([[call("add", "test_id", a=1, b=2)]])

    def add(a: int, b: int) -> int:
        """Adds a and b."""
        return a + b

    def call_model(state: SubState) -> dict[str, Any]:
        response = model.invoke(state["subgraph_messages"])
        model.tool_calls = []
        return {"subgraph_messages": [response]}

    g: Graph[Any] = Graph(state=SubState)
    g.add_vertex("agent", call_model, returns="update")
    g.add_vertex("tools", ToolNode([add], messages_key="subgraph_messages"))
    g.add_conditional_edges(
        "agent", lambda s: tools_condition(s, messages_key="subgraph_messages"), ["tools", END]
    )
    g.add_edge(START, "agent")
    g.add_edge("tools", "agent")
    messages = compile_graph(g).invoke({"subgraph_messages": ["hi"]}).state["subgraph_messages"]
    assert [(m["role"], m["content"]) for m in messages] == [
        ("user", "hi"),
        ("assistant", "hi"),
        ("tool", "3"),
        ("assistant", "hi-hi-3"),
    ]
    assert (messages[1]["id"], messages[3]["id"]) == ("0", "1")
    assert messages[1]["tool_calls"] == [call("add", "test_id", a=1, b=2)]
    assert (messages[2]["name"], messages[2]["tool_call_id"]) == ("add", "test_id")


def test_tool_node_injected_state_overwrites_llm_value() -> None:
    """Ports test_tool_node_injected_state_overwrites_llm_value and ..._strips_plain_injected_tool_arg.

    A value the model gives for an injected parameter is never used. LangGraph
    drops it and injects the state's; ours refuses the call (an error message
    naming the argument), so the model learns that the argument is not its to give.
    """

    def read_secret(query: str, auth: Annotated[dict[str, Any], InjectedState("auth")]) -> str:
        """Return secret data based on auth from graph state."""
        return "ADMIN_SECRET" if auth.get("role") == "admin" else "PUBLIC_DATA"

    node = ToolNode([read_secret])
    hostile = asks(call("read_secret", "call-1", query="hello", auth={"role": "admin"}))
    message = last(node.invoke({"messages": [hostile], "auth": {"role": "viewer"}}))
    assert "ADMIN_SECRET" not in message["content"]
    assert message["status"] == "error" and "unknown argument 'auth'" in message["content"]
    honest = asks(call("read_secret", "call-2", query="hello"))
    assert last(node.invoke({"messages": [honest], "auth": {"role": "viewer"}}))["content"] == "PUBLIC_DATA"


# -- create_react_agent (test_react_agent.py) -----------------------------------------------------


def test_no_prompt() -> None:
    """Ports test_no_prompt: the model's reply is added, and the conversation is checkpointed on the thread.

    LangGraph also checks its checkpoint's metadata (source "loop", step 1);
    ours is read back through `get_state`.
    """
    checkpointer = MemoryCheckpointer()
    with create_react_agent(EchoModel(), [], checkpointer=checkpointer) as agent:
        response = agent.invoke({"messages": ["hi?"]}, thread_id="123")
        assert [(m["role"], m["content"]) for m in response.state["messages"]] == [
            ("user", "hi?"),
            ("assistant", "hi?"),
        ]
        assert response.state["messages"][1]["id"] == "0"
        saved = agent.get_state("123")
        assert saved.state["messages"] == response.state["messages"]
        assert (saved.next, saved.status, saved.source) == ((), "done", "loop")


@pytest.mark.parametrize("prompt", ["Foo", {"role": "system", "content": "Foo"}])
def test_system_message_prompt(prompt: Any) -> None:
    """Ports test_system_message_prompt and test_string_prompt: the prompt goes first, and is not saved."""
    with create_react_agent(EchoModel(), [], prompt=prompt) as agent:
        messages = agent.invoke({"messages": ["hi?"]}).state["messages"]
    assert [(m["role"], m["content"]) for m in messages] == [("user", "hi?"), ("assistant", "Foo-hi?")]


def test_callable_prompt() -> None:
    """Ports test_callable_prompt: a function of the state makes the model's whole input."""

    def prompt(state: dict[str, Any]) -> list[Any]:
        return [{"role": "user", "content": f"Bar {state['messages'][-1]['content']}"}]

    with create_react_agent(EchoModel(), [], prompt=prompt) as agent:
        messages = agent.invoke({"messages": ["hi?"]}).state["messages"]
    assert [m["content"] for m in messages] == ["hi?", "Bar hi?"]


def test_model_with_tools() -> None:
    """Ports test_model_with_tools: the model's two tool calls run and each gets its message.

    LangGraph also checks a model bound to other tools than the agent's; ours
    does not look inside a model's bound tools (it calls `bind_tools` itself).
    """

    def first_tool(some_val: int) -> str:
        """Tool 1 docstring."""
        return f"Tool 1: {some_val}"

    def second_tool(some_val: int) -> str:
        """Tool 2 docstring."""
        return f"Tool 2: {some_val}"

    model = EchoModel(
        [[call("first_tool", "some 1", some_val=2), call("second_tool", "some 2", some_val=2)], []]
    )
    with create_react_agent(model, [first_tool, second_tool]) as agent:
        messages = agent.invoke({"messages": ["hi?"]}).state["messages"]
    assert [(m["content"], m["tool_call_id"]) for m in messages[2:4]] == [
        ("Tool 1: 2", "some 1"),
        ("Tool 2: 2", "some 2"),
    ]


def test_should_bind_tools() -> None:
    """Ports test_should_bind_tools: a model with `bind_tools` is bound to the agent's tools.

    Ours binds whenever there are tools (not with none), and gives each function
    tool as its spec (name, description, JSON schema of the parameters).
    """

    def some_tool(some_val: int) -> str:
        """Tool docstring."""
        return "meow"

    bound, unbound = EchoModel(), EchoModel()
    create_react_agent(bound, [some_tool]).close()
    create_react_agent(unbound, []).close()
    assert [t["name"] for t in bound.bound] == ["some_tool"]
    assert bound.bound[0]["parameters"]["properties"] == {"some_val": {"type": "integer"}}
    assert unbound.bound == []


def test_react_agent_parallel_tool_calls() -> None:
    """Ports test_react_agent_parallel_tool_calls (its "v2" case: one task per call).

    One of two parallel calls asks a person; the other finishes. On resume the
    finished call is not run again (each call ran exactly once). LangGraph's v2
    shows the finished call's message while paused; ours adds the tool messages
    when every call of the step has finished, so the paused state ends with the
    assistant's message, and the resumed run's values add both tool messages at once.
    """
    counts = {"human": 0, "weather": 0}

    def human_assistance(query: str) -> str:
        """Request assistance from a human."""
        answer = interrupt({"query": query})
        counts["human"] += 1
        return str(answer["data"])

    def get_weather(location: str) -> str:
        """Use this tool to get the weather."""
        counts["weather"] += 1
        return "It's sunny!"

    model = EchoModel(
        [[call("get_weather", "1", location="sf"), call("human_assistance", "2", query="request help")], []]
    )
    with create_react_agent(
        model, [human_assistance, get_weather], checkpointer=MemoryCheckpointer()
    ) as agent:
        seen = [
            [m["role"] for m in v["messages"]]
            for v in agent.stream({"messages": ["help"]}, thread_id="1", mode="values")
        ]
        assert seen[-1] == ["user", "assistant"]
        resumed = [
            [m["role"] for m in v["messages"]]
            for v in agent.stream(Command(resume={"data": "Hello"}), thread_id="1", mode="values")
        ]
    assert resumed[-2:] == [
        ["user", "assistant", "tool", "tool"],
        ["user", "assistant", "tool", "tool", "assistant"],
    ]
    assert counts == {"human": 1, "weather": 1}


class FooMessages(MessagesState):
    foo: int


def test_create_react_agent_inject_vars() -> None:
    """Ports test_create_react_agent_inject_vars: a custom state schema, the state and the store injected."""
    store = MemoryStore()
    store.put(("test",), "test_key", {"bar": 3})

    def tool1(
        some_val: int, state: Annotated[dict[str, Any], InjectedState], store: Annotated[Any, InjectedStore()]
    ) -> int:
        """Tool 1 docstring."""
        return some_val + state["foo"] + store.get(("test",), "test_key").value["bar"]

    tool_call = call("tool1", "some 0", some_val=1)
    model = EchoModel([[tool_call], []])
    node = ToolNode([tool1], handle_tool_errors=False)
    with create_react_agent(model, node, state_schema=FooMessages, store=store) as agent:
        result = agent.invoke({"messages": [{"role": "user", "content": "hi"}], "foo": 2}).state
    assert [(m["role"], m["content"]) for m in result["messages"]] == [
        ("user", "hi"),
        ("assistant", "hi"),
        ("tool", "6"),
        ("assistant", "hi-hi-6"),
    ]
    assert result["messages"][1]["tool_calls"] == [tool_call]
    assert result["foo"] == 2
    store.close()


def test_react_with_subgraph_tools() -> None:
    """Ports test_react_with_subgraph_tools: tools that run compiled graphs of their own."""

    def graph_of(fn: Any) -> Any:
        g: Graph[Any] = Graph()
        g.add_vertex("op", fn)
        g.add_edge(START, "op")
        g.add_edge("op", END)
        return g.compile()

    adder = graph_of(lambda s: {**s, "result": s["a"] + s["b"]})
    multiplier = graph_of(lambda s: {**s, "result": s["a"] * s["b"]})

    def addition(a: int, b: int) -> int:
        """Add two numbers"""
        return int(adder.invoke({"a": a, "b": b}).state["result"])

    def multiplication(a: int, b: int) -> int:
        """Multiply two numbers"""
        return int(multiplier.invoke({"a": a, "b": b}).state["result"])

    model = EchoModel([[call("addition", "1", a=2, b=3), call("multiplication", "2", a=2, b=3)], []])
    node = ToolNode([addition, multiplication], handle_tool_errors=False)
    try:
        with create_react_agent(model, node, checkpointer=MemoryCheckpointer()) as agent:
            messages = agent.invoke({"messages": ["What's 2 + 3 and 2 * 3?"]}, thread_id="1").state[
                "messages"
            ]
    finally:
        adder.close()
        multiplier.close()
    assert [(m["role"], m.get("name"), m["content"]) for m in messages[2:4]] == [
        ("tool", "addition", "5"),
        ("tool", "multiplication", "6"),
    ]
    assert messages[-1]["content"] == "What's 2 + 3 and 2 * 3?-What's 2 + 3 and 2 * 3?-5-6"


def test_tool_node_node_interrupt_in_the_agent() -> None:
    """Ports test_react_agent.py's test_tool_node_node_interrupt: a tool's interrupt pauses at "tools".

    Like LangGraph's v1, the paused state has no tool message yet (ours adds a
    step's tool messages together); like its v2, the finished call is recorded
    and not run again on resume.
    """
    normal_runs: list[int] = []

    def tool_normal(some_val: int) -> str:
        """Tool docstring."""
        normal_runs.append(some_val)
        return "normal"

    def tool_interrupt(some_val: int) -> str:
        """Tool docstring."""
        return str(interrupt("provide value for foo"))

    model = EchoModel([[call("tool_interrupt", "1", some_val=0), call("tool_normal", "2", some_val=1)], []])
    with create_react_agent(model, [tool_interrupt, tool_normal], checkpointer=MemoryCheckpointer()) as agent:
        paused = agent.invoke({"messages": ["hi?"]}, thread_id="1")
        assert [m["role"] for m in paused.state["messages"]] == ["user", "assistant"]
        state = agent.get_state("1")
        assert state.next == ("tools",)
        assert [i.value for i in state.interrupts] == ["provide value for foo"]
        done = agent.invoke(Command(resume="foo"), thread_id="1").state["messages"]
    assert [m["content"] for m in done[2:4]] == ["foo", "normal"]
    assert normal_runs == [1]


def test_injected_tool_call_id() -> None:
    """Ports the InjectedToolCallId use of test_react_agent_update_state (without its Command return)."""

    def get_user_name(tool_call_id: Annotated[str, InjectedToolCallId]) -> str:
        """Retrieve user name"""
        return f"answered {tool_call_id}"

    with create_react_agent(EchoModel([[call("get_user_name", "1")], []]), [get_user_name]) as agent:
        messages = agent.invoke({"messages": ["what's my name"]}).state["messages"]
    assert (messages[2]["content"], messages[2]["tool_call_id"], messages[2]["name"]) == (
        "answered 1",
        "1",
        "get_user_name",
    )
    assert len(messages) == 4
