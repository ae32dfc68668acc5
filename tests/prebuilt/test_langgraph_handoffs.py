"""LangGraph's multi-agent guides rewritten for actorgraph: tools that hand off, and tools that update state.

The code is the guides' (`create_handoff_tool`, the supervisor, a tool returning
`Command(update=...)`), with langchain-core's `@tool` and fake chat models and
the imports changed. Before, a `ToolNode` turned a tool's `Command` into a tool
message's text and the run ended `done`: a silent wrong result.
"""

from __future__ import annotations

from typing import Annotated, Any, NotRequired

import pytest

pytest.importorskip("langchain_core")

from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import BaseTool, InjectedToolCallId, tool
from pydantic import BaseModel

import actorgraph as ag
from actorgraph import END, START, Command, Graph, interrupt
from actorgraph.checkpoint import MemoryCheckpointer
from actorgraph.messages import MessagesState
from actorgraph.prebuilt import InjectedState, ToolNode, create_react_agent

pytestmark = pytest.mark.threads_only(
    "the langchain fake models keep their script in this process's memory (a lock cannot be pickled)"
)


class ScriptedModel(FakeMessagesListChatModel):
    """langchain-core's fake chat model, bound to tools as a real one is."""

    def bind_tools(self, tools: list[Any], **kwargs: Any) -> ScriptedModel:  # noqa: ARG002 - langchain's
        return self


def asks(*calls: tuple[str, dict[str, Any], str], content: str = "") -> AIMessage:
    return AIMessage(content, tool_calls=[{"name": n, "args": a, "id": i} for n, a, i in calls])


# -- "Multi-agent supervisor": hand-off tools -----------------------------------------------------


def create_handoff_tool(*, agent_name: str, description: str | None = None) -> Any:
    name = f"transfer_to_{agent_name}"
    description = description or f"Transfer to {agent_name}"

    @tool(name, description=description)
    def handoff_tool(
        state: Annotated[MessagesState, InjectedState],
        tool_call_id: Annotated[str, InjectedToolCallId],
    ) -> Command:
        tool_message = {
            "role": "tool",
            "content": f"Successfully transferred to {agent_name}",
            "name": name,
            "tool_call_id": tool_call_id,
        }
        return Command(
            goto=agent_name,
            update={"messages": state["messages"] + [tool_message]},
            graph=Command.PARENT,
        )

    return handoff_tool


assign_to_research_agent = create_handoff_tool(
    agent_name="research_agent", description="Assign task to a researcher agent."
)
assign_to_math_agent = create_handoff_tool(
    agent_name="math_agent", description="Assign task to a math agent."
)


def supervisor_graph(supervisor_replies: list[AIMessage], math_replies: list[AIMessage]) -> Graph[Any]:
    research_agent = create_react_agent(
        ScriptedModel(responses=[AIMessage("no research")]), [], name="research_agent"
    )
    math_agent = create_react_agent(ScriptedModel(responses=math_replies), [], name="math_agent")
    supervisor_agent = create_react_agent(
        model=ScriptedModel(responses=supervisor_replies),
        tools=[assign_to_research_agent, assign_to_math_agent],
        prompt="You are a supervisor managing two agents.",
        name="supervisor",
    )
    supervisor: Graph[Any] = (
        Graph(state=MessagesState)
        .add_vertex(supervisor_agent, destinations=("research_agent", "math_agent", END))
        .add_vertex(research_agent)
        .add_vertex(math_agent)
        .add_edge(START, "supervisor")
        .add_edge("research_agent", "supervisor")
        .add_edge("math_agent", "supervisor")
    )
    return supervisor


def test_a_hand_off_tool_routes_to_another_agent_of_the_parent_graph(compile_graph: Any) -> None:
    handing_off = asks(("transfer_to_math_agent", {}, "c1"))
    supervisor = compile_graph(supervisor_graph([handing_off, AIMessage("all done")], [AIMessage("4")]))
    result = supervisor.invoke({"messages": [{"role": "user", "content": "what is 2 + 2?"}]})
    messages = result["messages"]
    assert [(type(m).__name__, m.content, m.name) for m in messages] == [
        ("HumanMessage", "what is 2 + 2?", None),
        ("AIMessage", "", "supervisor"),
        ("ToolMessage", "Successfully transferred to math_agent", "transfer_to_math_agent"),
        ("AIMessage", "4", "math_agent"),
        ("AIMessage", "all done", "supervisor"),
    ]
    assert messages[2].tool_call_id == "c1"
    assert len({m.id for m in messages}) == 5


def test_the_hand_off_shows_in_the_parent_s_updates_stream(compile_graph: Any) -> None:
    handing_off = asks(("transfer_to_math_agent", {}, "c1"))
    supervisor = compile_graph(supervisor_graph([handing_off, AIMessage("all done")], [AIMessage("4")]))
    chunks = list(supervisor.stream({"messages": [HumanMessage("2 + 2?")]}, stream_mode="updates"))
    assert [list(chunk) for chunk in chunks] == [["supervisor"], ["math_agent"], ["supervisor"]]


def test_a_hand_off_beside_another_call_is_refused_rather_than_losing_its_result(compile_graph: Any) -> None:
    """LangGraph lets the hand-off win and fails later, calling a model with an unanswered call."""

    @tool
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    both = asks(("add", {"a": 1, "b": 2}, "c0"), ("transfer_to_math_agent", {}, "c1"))
    agent = create_react_agent(
        ScriptedModel(responses=[both]), [add, assign_to_math_agent], name="supervisor"
    )
    parent: Graph[Any] = Graph(state=MessagesState)
    parent.add_vertex(agent, destinations=("math_agent",))
    parent.add_vertex("math_agent", lambda s: s).add_edge(START, "supervisor").add_edge("math_agent", END)
    with pytest.raises(ag.InvalidUpdateError, match=r"hand off to the parent graph .* results would be lost"):
        compile_graph(parent).invoke({"messages": [HumanMessage("2 + 2, then math")]})
    agent.close()


def test_a_hand_off_from_an_agent_that_is_no_subgraph_is_an_error(compile_graph: Any) -> None:
    agent = create_react_agent(
        ScriptedModel(responses=[asks(("transfer_to_math_agent", {}, "c1"))]), [assign_to_math_agent]
    )
    with agent, pytest.raises(ag.InvalidUpdateError, match="its graph is not a subgraph: there is no parent"):
        agent.invoke({"messages": [HumanMessage("hi")]})


# -- "How to update graph state from tools" ----------------------------------------------------------


class State(MessagesState):
    user_name: NotRequired[str]  # the one-line difference: a key the first input does not give


@tool
def get_user_name(tool_call_id: Annotated[str, InjectedToolCallId]) -> Command:
    """Retrieve user name"""
    user_name = interrupt("Please provider user name:")
    return Command(
        update={
            "user_name": user_name,
            "messages": [ToolMessage("Successfully retrieved user name", tool_call_id=tool_call_id)],
        }
    )


def prompt(state: State) -> list[Any]:
    user_name = state.get("user_name")
    if user_name is None:
        return state["messages"]
    system_msg = f"User name is {user_name}"
    return [{"role": "system", "content": system_msg}, *state["messages"]]


def test_a_tool_updates_the_state_with_a_command() -> None:
    """Ports test_react_agent.py::test_react_agent_update_state (its TypedDict schema)."""
    model = ScriptedModel(responses=[asks(("get_user_name", {}, "1")), AIMessage("Hello Archibald")])
    agent = create_react_agent(
        model, [get_user_name], state_schema=State, prompt=prompt, checkpointer=MemoryCheckpointer()
    )
    config = {"configurable": {"thread_id": "1"}}
    with agent:
        # Run until interrupted
        agent.invoke({"messages": [("user", "what's my name")]}, config)
        # supply the value for the interrupt
        response = agent.invoke(Command(resume="Archibald"), config)
    # confirm that the state was updated
    assert response["user_name"] == "Archibald"
    assert len(response["messages"]) == 4
    tool_message: ToolMessage = response["messages"][-2]
    assert tool_message.content == "Successfully retrieved user name"
    assert tool_message.tool_call_id == "1"
    assert tool_message.name == "get_user_name"
    assert [type(m).__name__ for m in response["messages"]] == [
        "HumanMessage",
        "AIMessage",
        "ToolMessage",
        "AIMessage",
    ]


@pytest.mark.parametrize(
    ("returned", "says"),
    [
        (Command(update={"user_name": "X"}), "without a tool message answering its call '1'"),
        (Command(update={"messages": [ToolMessage("foo", tool_call_id="2")]}), "answering its call '1'"),
        (Command(resume="x"), r"returned Command\(resume=...\)"),
        (Command(update=[("user_name", "X")]), r"Command\(update=...\) that is a list"),
    ],
)
def test_a_command_that_cannot_be_applied_fails_the_vertex_and_is_never_text(
    compile_graph: Any, returned: Command, says: str
) -> None:
    """Ports test_tool_node.py::test_tool_node_command's validation (LangGraph raises ValueError)."""

    @tool
    def broken() -> Command:
        """Return a Command that cannot be applied."""
        return returned

    g: Graph[Any] = Graph(state=State)
    g.add_vertex(ToolNode([broken])).add_edge(START, "tools").add_edge("tools", END)
    with pytest.raises(ag.InvalidUpdateError, match=says):
        compile_graph(g).invoke({"messages": [asks(("broken", {}, "1"))]})


def test_tool_node_command_outside_a_graph() -> None:
    """Ports test_tool_node.py::test_tool_node_command (dict input): what the vertex would return.

    LangGraph returns a list of outputs (`[{"messages": [...]}, Command(...)]`); ours
    combines them in call order into the one `Command` the vertex returns.
    """

    @tool
    def transfer_to_bob(tool_call_id: Annotated[str, InjectedToolCallId]) -> Command:
        """Transfer to Bob"""
        return Command(
            update={"messages": [ToolMessage(content="Transferred to Bob", tool_call_id=tool_call_id)]},
            goto="bob",
            graph=Command.PARENT,
        )

    def add(a: int, b: int) -> int:
        """Add two numbers"""
        return a + b

    handed = ToolNode([transfer_to_bob]).invoke({"messages": [asks(("transfer_to_bob", {}, "1"))]})
    assert isinstance(handed, Command)
    assert (handed.graph, handed.goto) == (ag.PARENT, ["bob"])
    [answer] = handed.update["messages"]
    assert (answer.content, answer.tool_call_id, answer.name) == (
        "Transferred to Bob",
        "1",
        "transfer_to_bob",
    )
    with pytest.raises(
        ag.InvalidUpdateError, match=r"\['transfer_to_bob'\] hand off .* call\(s\) of \['add'\]"
    ):
        ToolNode([add, transfer_to_bob]).invoke(
            {"messages": [asks(("add", {"a": 1, "b": 2}, "1"), ("transfer_to_bob", {}, "2"))]}
        )


def test_a_command_updating_this_graph_combines_with_the_other_calls_in_call_order(
    compile_graph: Any,
) -> None:
    @tool
    def remember(name: str, tool_call_id: Annotated[str, InjectedToolCallId]) -> Command:
        """Remember the user's name."""
        return Command(
            update={"user_name": name, "messages": [ToolMessage("noted", tool_call_id=tool_call_id)]}
        )

    @tool
    def shout(text: str) -> str:
        """Shout."""
        return text.upper()

    g: Graph[Any] = Graph(state=State)
    g.add_vertex(ToolNode([remember, shout])).add_edge(START, "tools").add_edge("tools", END)
    calls = asks(("shout", {"text": "hi"}, "a"), ("remember", {"name": "Ada"}, "b"))
    state = compile_graph(g).invoke({"messages": [calls]}).state
    assert state["user_name"] == "Ada"
    assert [(m.content, m.tool_call_id, m.name) for m in state["messages"][1:]] == [
        ("HI", "a", "shout"),
        ("noted", "b", "remember"),
    ]


def test_a_langchain_tool_class_taking_an_injected_call_id_is_refused_when_made() -> None:
    class Schema(BaseModel):
        tool_call_id: Annotated[str, InjectedToolCallId]

    class Custom(BaseTool):
        def _run(self, *_: Any, **__: Any) -> Any:
            return Command(goto="bob", graph=Command.PARENT)

    custom = Custom(name="custom_transfer_to_bob", description="Transfer to bob", args_schema=Schema)
    with pytest.raises(
        ag.ConfigError, match=r"'custom_transfer_to_bob' takes arguments langchain-core injects"
    ):
        ToolNode([custom])
