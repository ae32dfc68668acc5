"""LangGraph's `create_react_agent` tests of models, tools and hand-offs, ported with langchain-core.

Each test's docstring names the LangGraph test it ports (libs/prebuilt/tests:
test_react_agent.py, test_tool_node.py). They run on langchain-core messages, a
scripted `BaseChatModel` (`FakeToolCallingModel`, as LangGraph's: its reply
joins the contents it was given with "-", its id is its call number, its tool
calls come from a plan) and `@tool` tools, written as LangGraph's tests write
them, but for `invoke`'s `RunResult` (read as `result["messages"]`). The
hand-off tests are in test_langgraph_handoffs.py. Not ported, for features we
lack: `response_format` and model hooks (`pre_model_hook`, `post_model_hook`),
prompts given `config` and `store`, and the checks of a model bound to other
tools than the agent's (`_should_bind_tools`); `version="v1"` (we run each tool
call as a task of its own, as v2).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import pytest

pytest.importorskip("langchain_core")

from langchain_core.language_models import BaseChatModel
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolCall, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import RunnableLambda
from langchain_core.tools import tool as dec_tool

from actorgraph import END, START, Command, Graph, RemainingSteps, get_stream_writer, interrupt
from actorgraph.checkpoint import MemoryCheckpointer
from actorgraph.messages import MessagesState
from actorgraph.prebuilt import ToolNode, create_react_agent

pytestmark = pytest.mark.threads_only(
    "the fake models keep their script and call count in this process's memory"
)


class FakeToolCallingModel(BaseChatModel):
    """LangGraph's test model: the reply joins the contents it was given; tool calls by plan."""

    tool_calls: list[list[ToolCall]] | None = None
    index: int = 0

    def _generate(self, messages: list[BaseMessage], *_: Any, **__: Any) -> ChatResult:
        content = "-".join(m.content if isinstance(m.content, str) else str(m.content) for m in messages)
        calls = self.tool_calls[self.index % len(self.tool_calls)] if self.tool_calls else []
        message = AIMessage(content=content, id=str(self.index), tool_calls=list(calls))
        self.index += 1
        return ChatResult(generations=[ChatGeneration(message=message)])

    @property
    def _llm_type(self) -> str:
        return "fake-tool-call-model"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Any:
        names = [t["name"] if isinstance(t, dict) else t.name for t in tools]
        return self.bind(tools=[{"type": "function", "function": {"name": n}} for n in names], **kwargs)


class AnyId:
    """Equal to the message it wraps whatever its id (LangGraph's `_AnyIdHumanMessage`)."""

    def __init__(self, message: BaseMessage) -> None:
        self.message = message

    def __eq__(self, other: object) -> bool:
        return isinstance(other, BaseMessage) and other.model_copy(update={"id": None}) == self.message

    __hash__ = None  # type: ignore[assignment]


def test_no_prompt() -> None:
    """Ports test_no_prompt: the reply is the model's AIMessage; the thread holds the conversation."""
    checkpointer = MemoryCheckpointer()
    agent = create_react_agent(FakeToolCallingModel(), [], checkpointer=checkpointer)
    inputs = [HumanMessage("hi?")]
    thread = {"configurable": {"thread_id": "123"}}
    with agent:
        response = agent.invoke({"messages": inputs}, thread)
        assert response["messages"] == [AnyId(inputs[0]), AIMessage(content="hi?", id="0")]
        saved = agent.get_state("123")
    assert saved.state["messages"] == response["messages"]
    assert (saved.source, saved.step) == ("loop", 1)


def test_no_prompt_async() -> None:
    """Ports test_no_prompt_async."""
    agent = create_react_agent(FakeToolCallingModel(), [], checkpointer=MemoryCheckpointer())
    inputs = [HumanMessage("hi?")]
    with agent:
        response = asyncio.run(agent.ainvoke({"messages": inputs}, {"configurable": {"thread_id": "123"}}))
    assert response["messages"] == [AnyId(inputs[0]), AIMessage(content="hi?", id="0")]


@pytest.mark.parametrize("prompt", [SystemMessage(content="Foo"), "Foo"])
def test_system_message_prompt(prompt: Any) -> None:
    """Ports test_system_message_prompt and test_string_prompt."""
    inputs = [HumanMessage("hi?")]
    with create_react_agent(FakeToolCallingModel(), [], prompt=prompt) as agent:
        response = agent.invoke({"messages": inputs})
    assert response["messages"] == [AnyId(inputs[0]), AIMessage(content="Foo-hi?", id="0", tool_calls=[])]


def test_callable_prompt() -> None:
    """Ports test_callable_prompt."""

    def prompt(state: dict[str, Any]) -> list[Any]:
        modified_message = f"Bar {state['messages'][-1].content}"
        return [HumanMessage(content=modified_message)]

    inputs = [HumanMessage("hi?")]
    with create_react_agent(FakeToolCallingModel(), [], prompt=prompt) as agent:
        response = agent.invoke({"messages": inputs})
    assert response["messages"] == [AnyId(inputs[0]), AIMessage(content="Bar hi?", id="0")]


def test_runnable_prompt() -> None:
    """Ports test_runnable_prompt: a langchain-core Runnable makes the model's input."""
    prompt = RunnableLambda(lambda state: [HumanMessage(content=f"Baz {state['messages'][-1].content}")])
    inputs = [HumanMessage("hi?")]
    with create_react_agent(FakeToolCallingModel(), [], prompt=prompt) as agent:
        response = agent.invoke({"messages": inputs})
    assert response["messages"] == [AnyId(inputs[0]), AIMessage(content="Baz hi?", id="0")]


def test_model_with_tools() -> None:
    """Ports test_model_with_tools: the agent's tools vertex answers both calls with ToolMessages."""

    @dec_tool
    def tool1(some_val: int) -> str:
        """Tool 1 docstring."""
        return f"Tool 1: {some_val}"

    @dec_tool
    def tool2(some_val: int) -> str:
        """Tool 2 docstring."""
        return f"Tool 2: {some_val}"

    calls = [
        {"name": "tool1", "args": {"some_val": 2}, "id": "some 1"},
        {"name": "tool2", "args": {"some_val": 2}, "id": "some 2"},
    ]
    model = FakeToolCallingModel(tool_calls=[calls, []])
    with create_react_agent(model, [tool1, tool2]) as agent:
        result = agent.invoke({"messages": [HumanMessage("hi?")]})
    tool_messages = result["messages"][2:4]
    for tool_message in tool_messages:
        assert tool_message.type == "tool"
        assert tool_message.content in {"Tool 1: 2", "Tool 2: 2"}
        assert tool_message.tool_call_id in {"some 1", "some 2"}
    result = ToolNode([tool1, tool2]).invoke({"messages": [AIMessage("hi?", tool_calls=calls)]})
    assert [m.content for m in result["messages"]] == ["Tool 1: 2", "Tool 2: 2"]


def test_react_agent_parallel_tool_calls() -> None:
    """Ports test_react_agent_parallel_tool_calls (v2): the finished call does not run again.

    LangGraph's v2 streams the finished call's message while paused; ours adds a
    step's tool messages together, when every call has finished. The input is a
    `HumanMessage` (LangGraph's `("user", query)`): a pair is a message dict here
    until the agent first calls a langchain-core model, which turns the
    conversation's dicts into messages, so the first item would show a dict.
    """
    counts = {"human": 0, "weather": 0}

    @dec_tool
    def human_assistance(query: str) -> str:
        """Request assistance from a human."""
        human_response = interrupt({"query": query})
        counts["human"] += 1
        return str(human_response["data"])

    @dec_tool
    def get_weather(location: str) -> str:
        """Use this tool to get the weather."""
        counts["weather"] += 1
        return "It's sunny!"

    tool_calls = [
        [
            {"args": {"location": "sf"}, "id": "1", "name": "get_weather"},
            {"args": {"query": "request help"}, "id": "2", "name": "human_assistance"},
        ],
        [],
    ]
    model = FakeToolCallingModel(tool_calls=tool_calls)
    agent = create_react_agent(model, [human_assistance, get_weather], checkpointer=MemoryCheckpointer())
    config = {"configurable": {"thread_id": "1"}}
    query = "Get user assistance and also check the weather"
    with agent:
        message_types = [
            [m.type for m in event["messages"]]
            for event in agent.stream({"messages": [HumanMessage(query)]}, config, stream_mode="values")
        ]
        assert message_types == [["human"], ["human", "ai"], ["human", "ai"]]  # the last: the pause
        message_types = [
            [m.type for m in event["messages"]]
            for event in agent.stream(Command(resume={"data": "Hello"}), config, stream_mode="values")
        ]
    assert message_types == [
        ["human", "ai"],
        ["human", "ai", "tool", "tool"],
        ["human", "ai", "tool", "tool", "ai"],
    ]
    assert counts == {"human": 1, "weather": 1}


def test_return_direct() -> None:
    """Ports test_return_direct: a return_direct tool's result ends the run."""

    @dec_tool(return_direct=True)
    def tool_return_direct(input: str) -> str:  # noqa: A002 - LangGraph's test's name
        """A tool that returns directly."""
        return f"Direct result: {input}"

    @dec_tool
    def tool_normal(input: str) -> str:  # noqa: A002 - LangGraph's test's name
        """A normal tool."""
        return f"Normal result: {input}"

    tools = [tool_return_direct, tool_normal]
    first_tool_call = [ToolCall(name="tool_return_direct", args={"input": "Test direct"}, id="1")]
    model = FakeToolCallingModel(tool_calls=[first_tool_call, []])
    with create_react_agent(model, tools) as agent:
        result = agent.invoke({"messages": [HumanMessage(content="Test direct", id="hum0")]})
    assert result["messages"] == [
        HumanMessage(content="Test direct", id="hum0"),
        AIMessage(content="Test direct", id="0", tool_calls=first_tool_call),
        ToolMessage(
            content="Direct result: Test direct",
            name="tool_return_direct",
            tool_call_id="1",
            id=result["messages"][2].id,
        ),
    ]
    second_tool_call = [ToolCall(name="tool_normal", args={"input": "Test normal"}, id="2")]
    model = FakeToolCallingModel(tool_calls=[second_tool_call, []])
    with create_react_agent(model, tools) as agent:
        result = agent.invoke({"messages": [HumanMessage(content="Test normal", id="hum1")]})
    assert [m.content for m in result["messages"]] == [
        "Test normal",
        "Test normal",
        "Normal result: Test normal",
        "Test normal-Test normal-Normal result: Test normal",
    ]
    both_tool_calls = [
        ToolCall(name="tool_return_direct", args={"input": "Test both direct"}, id="3"),
        ToolCall(name="tool_normal", args={"input": "Test both normal"}, id="4"),
    ]
    model = FakeToolCallingModel(tool_calls=[both_tool_calls, []])
    with create_react_agent(model, tools) as agent:
        result = agent.invoke({"messages": [HumanMessage(content="Test both", id="hum2")]})
    assert [(m.type, m.content) for m in result["messages"]] == [
        ("human", "Test both"),
        ("ai", "Test both"),
        ("tool", "Direct result: Test both direct"),
        ("tool", "Normal result: Test both normal"),
    ]


def test_tool_node_stream_writer(compile_graph: Any) -> None:
    """Ports test_tool_node_stream_writer: a tool's get_stream_writer() streams as the tools vertex's."""

    @dec_tool
    def streaming_tool(x: int) -> str:
        """Do something with writer."""
        my_writer = get_stream_writer()
        for value in ["foo", "bar", "baz"]:
            my_writer({"custom_tool_value": value})
        return str(x)

    tool_node = ToolNode([streaming_tool])
    graph = compile_graph(
        Graph(state=MessagesState)
        .add_vertex("tools", tool_node)
        .add_edge(START, "tools")
        .add_edge("tools", END)
    )
    tool_call = {"name": "streaming_tool", "args": {"x": 1}, "id": "1", "type": "tool_call"}
    inputs = {"messages": [AIMessage("", tool_calls=[tool_call])]}
    assert list(graph.stream(inputs, stream_mode="custom")) == [
        {"custom_tool_value": "foo"},
        {"custom_tool_value": "bar"},
        {"custom_tool_value": "baz"},
    ]
    items = list(graph.stream(inputs, stream_mode=["custom", "updates"]))
    assert [mode for mode, _ in items] == ["custom", "custom", "custom", "updates"]
    [(_, update)] = [item for item in items if item[0] == "updates"]
    [tool_message] = update["tools"]["messages"][1:]  # our update is the vertex's whole new state
    assert (tool_message.content, tool_message.name, tool_message.tool_call_id) == (
        "1",
        "streaming_tool",
        "1",
    )


def test_dynamic_model_basic() -> None:
    """Ports test_dynamic_model_basic: a function of (state, runtime) picks the model at each call."""

    def dynamic_model(state: dict[str, Any], runtime: Any) -> BaseChatModel:
        return FakeToolCallingModel(tool_calls=[])

    with create_react_agent(dynamic_model, []) as agent:
        result = agent.invoke({"messages": [HumanMessage("hello")]})
        assert len(result["messages"]) == 2
        assert result["messages"][-1].content == "hello"
        result = asyncio.run(agent.ainvoke({"messages": [HumanMessage("urgent help")]}))
    assert result["messages"][-1].content == "urgent help"


def test_dynamic_model_with_tools_and_context() -> None:
    """Ports test_dynamic_model_with_tools, test_dynamic_model_with_context and ..._state_dependent_tools.

    The runtime a dynamic model is given is the vertex's `ctx` (its `context`, `store`).
    """

    @dec_tool
    def basic_tool(x: int) -> str:
        """Basic tool."""
        return f"basic: {x}"

    @dec_tool
    def advanced_tool(x: int) -> str:
        """Advanced tool."""
        return f"advanced: {x}"

    def dynamic_model(state: dict[str, Any], runtime: Any) -> BaseChatModel:
        name = "advanced_tool" if "advanced" in state["messages"][-1].content else "basic_tool"
        return FakeToolCallingModel(
            tool_calls=[[{"args": {"x": runtime.context["x"]}, "id": "1", "name": name}], []]
        )

    with create_react_agent(dynamic_model, [basic_tool, advanced_tool]) as agent:
        basic = agent.invoke({"messages": [HumanMessage("basic request")]}, context={"x": 1})
        advanced = agent.invoke({"messages": [HumanMessage("advanced request")]}, context={"x": 2})
    # the model made anew at each call asks for the tool again: LangGraph's test stops at the
    # first tool message (its model's second reply is another call); ours reads that one
    assert (basic["messages"][2].content, basic["messages"][2].name) == ("basic: 1", "basic_tool")
    assert (advanced["messages"][2].content, advanced["messages"][2].name) == ("advanced: 2", "advanced_tool")


def test_dynamic_model_error_handling() -> None:
    """Ports test_dynamic_model_error_handling: the dynamic model's error is the run's."""

    def failing_dynamic_model(state: dict[str, Any], runtime: Any) -> BaseChatModel:
        if "fail" in state["messages"][-1].content:
            raise ValueError("Dynamic model failed")
        return FakeToolCallingModel(tool_calls=[])

    with create_react_agent(failing_dynamic_model, []) as agent:
        assert len(agent.invoke({"messages": [HumanMessage("hello")]})["messages"]) == 2
        with pytest.raises(Exception, match="Dynamic model failed"):
            agent.invoke({"messages": [HumanMessage("fail now")]})


def test_dynamic_model_receives_correct_state() -> None:
    """Ports test_dynamic_model_receives_correct_state: the state, not the model's input."""
    received: list[Any] = []

    class CustomAgentState(MessagesState):
        custom_field: str

    def dynamic_model(state: dict[str, Any], runtime: Any) -> BaseChatModel:
        received.append(state)
        return FakeToolCallingModel(tool_calls=[])

    with create_react_agent(dynamic_model, [], state_schema=CustomAgentState, prompt="system") as agent:
        agent.invoke({"messages": [HumanMessage("hello")], "custom_field": "test_value"})
    [state] = received
    assert state["custom_field"] == "test_value"
    assert [m.content for m in state["messages"]] == ["hello"]


def test_a_generic_fake_chat_model_s_tool_calls_run_when_nobody_streams_its_tokens(
    compile_graph: Any,
) -> None:
    """The agent invokes the model unless someone listens to mode="messages", as LangGraph's does.

    langchain-core's GenericFakeChatModel streams only a reply's text, so before,
    streaming it always lost the tool calls, and the run ended without running them.
    """

    @dec_tool
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    class Scripted(GenericFakeChatModel):
        def bind_tools(self, *_: Any, **__: Any) -> Scripted:
            return self

    planned = [
        AIMessage("let me add", id="m1", tool_calls=[{"name": "add", "args": {"a": 2, "b": 2}, "id": "c1"}]),
        AIMessage("four", id="m2"),
    ]
    with create_react_agent(Scripted(messages=iter(planned)), [add]) as agent:
        result = agent.invoke({"messages": [HumanMessage("2 + 2?")]})
    assert [(m.type, m.content) for m in result["messages"]] == [
        ("human", "2 + 2?"),
        ("ai", "let me add"),
        ("tool", "4"),
        ("ai", "four"),
    ]


def test_the_agent_says_it_needs_more_steps_before_the_recursion_limit() -> None:
    """LangGraph's agent answers "Sorry, need more steps" when a tool call could not be answered in time."""

    @dec_tool
    def lookup(q: str) -> str:
        """Look something up."""
        return q

    model = FakeToolCallingModel(tool_calls=[[{"name": "lookup", "args": {"q": "x"}, "id": "1"}]])
    with create_react_agent(model, [lookup]) as agent:
        result = agent.invoke({"messages": [HumanMessage("loop")]}, {"recursion_limit": 4})
    assert result["messages"][-1].content == "Sorry, need more steps to process this request."
    assert [m.type for m in result["messages"]] == ["human", "ai", "tool", "ai"]


class StepsState(MessagesState):
    remaining_steps: RemainingSteps


def test_remaining_steps_in_the_agent_s_state_schema_is_filled() -> None:
    """LangGraph's AgentState has `remaining_steps: RemainingSteps`; a schema that declares it gets it."""
    seen: list[int] = []

    def model(messages: list[Any]) -> AIMessage:
        return AIMessage("done")

    def prompt(state: dict[str, Any]) -> list[Any]:
        seen.append(state["remaining_steps"])
        return state["messages"]

    with create_react_agent(model, [], state_schema=StepsState, prompt=prompt) as agent:
        result = agent.invoke({"messages": [HumanMessage("hi")]}, {"recursion_limit": 7})
    assert seen == [6]
    assert "remaining_steps" not in result.state
