"""langchain-core messages: accepted and kept as they are, read by the helpers, stored without pickle."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest

lc = pytest.importorskip("langchain_core.messages")

import actorgraph as ag  # noqa: E402 - after the skip
from actorgraph.checkpoint import MsgpackSerializer, SqliteCheckpointer  # noqa: E402
from actorgraph.messages import (  # noqa: E402
    REMOVE_ALL_MESSAGES,
    MessagesState,
    RemoveMessage,
    add_messages,
    content_of,
    id_of,
    last_message,
    role_of,
    tool_calls_of,
)


def test_langchain_messages_are_kept_and_merged_by_id() -> None:
    left = [lc.HumanMessage(content="Hello", id="1")]
    got = add_messages(left, [lc.AIMessage(content="Hi there!", id="2"), lc.SystemMessage("sys", id="3")])
    assert got == [
        lc.HumanMessage("Hello", id="1"),
        lc.AIMessage("Hi there!", id="2"),
        lc.SystemMessage("sys", id="3"),
    ]
    assert add_messages(got, lc.HumanMessage("Hello again", id="1"))[0] == lc.HumanMessage(
        "Hello again", id="1"
    )


def test_langchain_messages_without_ids_get_uuid4_ids_and_are_not_changed() -> None:
    given = lc.AIMessage(content="Hi there!")
    got = add_messages([lc.HumanMessage("Hello")], [given])
    assert all(uuid.UUID(m.id) for m in got) and given.id is None


def test_langchain_remove_message_and_remove_all() -> None:
    left = [lc.HumanMessage("Hello", id="1"), lc.AIMessage("Hi there!", id="2")]
    assert add_messages(left, lc.RemoveMessage(id="2")) == [lc.HumanMessage("Hello", id="1")]
    assert add_messages(left, RemoveMessage("1")) == [lc.AIMessage("Hi there!", id="2")]
    got = add_messages(left, [lc.RemoveMessage(id=REMOVE_ALL_MESSAGES), lc.HumanMessage("Updated hello")])
    assert [m.content for m in got] == ["Updated hello"]
    with pytest.raises(ag.InvalidUpdateError, match="does not hold"):
        add_messages(left, lc.RemoveMessage(id="9"))


def test_a_chunk_becomes_its_message() -> None:
    (got,) = add_messages([], lc.AIMessageChunk(content="part", id="c"))
    assert type(got) is lc.AIMessage and got.content == "part"


def test_dicts_and_langchain_messages_mix_in_one_conversation() -> None:
    got = add_messages(
        [lc.HumanMessage("hi", id="1")], [("ai", "yo"), {"role": "user", "content": "x", "id": "1"}]
    )
    assert [(role_of(m), content_of(m)) for m in got] == [("user", "x"), ("assistant", "yo")]


def test_the_readers_read_langchain_messages() -> None:
    ai = lc.AIMessage(content="", tool_calls=[{"id": "c1", "name": "add", "args": {"a": 1}}], id="m")
    assert tool_calls_of(ai) == [{"id": "c1", "name": "add", "args": {"a": 1}}]
    assert (role_of(ai), content_of(ai), id_of(ai)) == ("assistant", "", "m")
    assert role_of(lc.HumanMessage("x")) == "user"
    assert role_of(lc.ToolMessage("r", tool_call_id="c1")) == "tool"
    assert role_of(lc.ChatMessage(role="human", content="x")) == "user"
    assert tool_calls_of(lc.HumanMessage("x")) == []
    assert last_message({"messages": [lc.HumanMessage("a"), ai]}) is ai


def test_the_merge_gives_langchain_messages_the_same_ids_twice() -> None:
    base = [lc.HumanMessage("hi", id="u")]
    branches = [[*base, lc.AIMessage("a")], [*base, lc.AIMessage("b")]]
    first, second = add_messages.merge(base, branches), add_messages.merge(base, branches)
    assert [m.content for m in first] == ["hi", "a", "b"] and first == second
    assert all(isinstance(m.id, str) for m in first)


def test_langchain_messages_pass_the_safe_serializer() -> None:
    serializer = MsgpackSerializer()
    value = {
        "messages": [
            lc.HumanMessage("hi", id="1"),
            lc.AIMessage("", tool_calls=[{"id": "c", "name": "f", "args": {"x": [1, 2]}}], id="2"),
            lc.ToolMessage("42", tool_call_id="c", name="f", id="3"),
            lc.SystemMessage("be brief", id="4"),
            lc.AIMessageChunk("par", id="5"),
        ],
        "pending": [RemoveMessage("1"), lc.RemoveMessage(id="2")],
    }
    back = serializer.loads(serializer.dumps(value))
    assert back == value
    assert [type(m) for m in back["messages"]] == [type(m) for m in value["messages"]]


class State(MessagesState):
    steps: int


def agent(state: Any) -> dict[str, Any]:
    question = content_of(last_message(state))
    call = {"id": f"call{state['steps']}", "name": "lookup", "args": {"q": question}}
    return {"messages": [lc.AIMessage(content="", tool_calls=[call])], "steps": state["steps"] + 1}


def tools(state: Any) -> dict[str, Any]:
    (call,) = tool_calls_of(last_message(state))
    return {"messages": lc.ToolMessage(f"found {call['args']['q']}", tool_call_id=call["id"], name="lookup")}


def lc_graph() -> ag.Graph:
    g: ag.Graph = ag.Graph(state=State, returns="update")
    g.add_vertex("agent", agent)
    g.add_vertex("tools", tools)
    g.add_edge(ag.START, "agent")
    g.add_edge("agent", "tools")
    g.add_edge("tools", ag.END)
    return g


def test_a_graph_of_langchain_messages_through_sqlite_resumed_elsewhere(
    compile_graph, tmp_path: Path
) -> None:
    db = tmp_path / "lc.db"
    first = compile_graph(lc_graph(), checkpointer=SqliteCheckpointer(db))
    paused = first.invoke(
        {"messages": [lc.HumanMessage("weather?")], "steps": 0}, thread_id="t", interrupt_before=["tools"]
    )
    assert paused.status == "interrupted"
    first.close()
    again = compile_graph(lc_graph(), checkpointer=SqliteCheckpointer(db))
    done = again.invoke(None, thread_id="t").state
    kinds = [type(m) for m in done["messages"]]
    assert kinds == [lc.HumanMessage, lc.AIMessage, lc.ToolMessage]
    assert done["messages"][2].content == "found weather?" and done["messages"][2].tool_call_id == "call0"
    assert all(isinstance(m.id, str) for m in done["messages"])
    later = again.invoke({"messages": [lc.HumanMessage("and tomorrow?")]}, thread_id="t").state
    assert [m.content for m in later["messages"]][-3:] == ["and tomorrow?", "", "found and tomorrow?"]
    stored = compile_graph(lc_graph(), checkpointer=SqliteCheckpointer(db)).get_state("t").state
    assert stored == later
