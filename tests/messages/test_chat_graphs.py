"""Chat graphs on `MessagesState`: first inputs converted, turns on one thread, runs resumed from SQLite."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import pytest
from pydantic import BaseModel

import actorgraph as ag
from actorgraph.checkpoint import MemoryCheckpointer, SqliteCheckpointer
from actorgraph.messages import (
    AnyMessage,
    MessagesState,
    RemoveMessage,
    add_messages,
    content_of,
    last_message,
    message,
    role_of,
)


class Chat(MessagesState):
    turns: int


def reply(state: Any) -> dict[str, Any]:
    return {
        "messages": ("assistant", f"echo: {content_of(last_message(state))}"),
        "turns": state["turns"] + 1,
    }


def chat_graph() -> ag.Graph:
    g: ag.Graph = ag.Graph(state=Chat, returns="update")
    g.add_vertex("chat", reply)
    g.add_edge(ag.START, "chat")
    g.add_edge("chat", ag.END)
    return g


def said(state: Any) -> list[tuple[str, str]]:
    return [(role_of(m), content_of(m)) for m in state["messages"]]


def test_a_first_input_of_strings_pairs_and_dicts_is_converted(compile_graph) -> None:
    given = ["hi", ("ai", "hello"), ["system", "be brief"], {"role": "human", "content": "why?"}]
    state = compile_graph(chat_graph()).invoke({"messages": given, "turns": 0}).state
    assert said(state) == [
        ("user", "hi"),
        ("assistant", "hello"),
        ("system", "be brief"),
        ("user", "why?"),
        ("assistant", "echo: why?"),
    ]
    assert all(type(m) is dict and isinstance(m["id"], str) for m in state["messages"])
    assert len({m["id"] for m in state["messages"]}) == 5


def test_a_first_input_of_one_string_is_a_conversation_of_one(compile_graph) -> None:
    state = compile_graph(chat_graph()).invoke({"messages": "hi", "turns": 0}).state
    assert said(state) == [("user", "hi"), ("assistant", "echo: hi")]


def test_a_bad_first_input_is_refused_naming_it(compile_graph) -> None:
    with pytest.raises(ag.InvalidUpdateError, match=r"42 \(a int\) is not a message"):
        compile_graph(chat_graph()).invoke({"messages": [42], "turns": 0})


def test_several_turns_on_one_thread(compile_graph, tmp_path: Path) -> None:
    app = compile_graph(chat_graph(), checkpointer=SqliteCheckpointer(tmp_path / "chat.db"))
    app.invoke({"messages": [message("user", "one", id="u1")], "turns": 0}, thread_id="t")
    app.invoke({"messages": "two"}, thread_id="t")
    state = app.invoke({"messages": [("user", "three")]}, thread_id="t").state
    assert said(state) == [
        ("user", "one"),
        ("assistant", "echo: one"),
        ("user", "two"),
        ("assistant", "echo: two"),
        ("user", "three"),
        ("assistant", "echo: three"),
    ]
    assert state["turns"] == 3 and len({m["id"] for m in state["messages"]}) == 6


def test_update_state_takes_one_message_or_a_removal(compile_graph) -> None:
    app = compile_graph(chat_graph(), checkpointer=MemoryCheckpointer())
    app.invoke({"messages": [message("user", "one", id="u1")], "turns": 0}, thread_id="t")
    app.update_state("t", {"messages": ("user", "extra")})
    app.update_state("t", {"messages": RemoveMessage("u1")})
    assert said(app.get_state("t").state) == [("assistant", "echo: one"), ("user", "extra")]
    app.update_state("t", {"messages": ["fresh"], "turns": 0}, replace=True)
    fresh = app.get_state("t").state["messages"]
    assert said({"messages": fresh}) == [("user", "fresh")] and isinstance(fresh[0]["id"], str)


# -- a fan-out whose merge gives ids, paused before the join and resumed by another CompiledGraph --


def branching_graph() -> ag.Graph:
    g: ag.Graph = ag.Graph(state=MessagesState)  # whole-state vertices: ids come from the merge
    g.add_vertex("ask", lambda s: {"messages": [*s["messages"], {"role": "assistant", "content": "asking"}]})
    g.add_vertex("left", lambda s: {"messages": [*s["messages"], {"role": "assistant", "content": "left"}]})
    g.add_vertex("right", lambda s: {"messages": [*s["messages"], {"role": "assistant", "content": "right"}]})
    g.add_vertex(
        "answer",
        lambda s: {
            "messages": [*s["messages"], {"role": "assistant", "content": f"{len(s['messages'])} seen"}]
        },
    )
    g.add_edge(ag.START, "ask")
    g.add_edge("ask", "left")
    g.add_edge("ask", "right")
    g.add_edge(["left", "right"], "answer")
    g.add_edge("answer", ag.END)
    return g


def test_a_run_resumed_by_another_compiled_graph_ends_equal_to_one_that_never_stopped(
    compile_graph, tmp_path: Path
) -> None:
    first_input = {"messages": [message("user", "go", id="u")]}
    db = tmp_path / "runs.db"
    paused = compile_graph(branching_graph(), checkpointer=SqliteCheckpointer(db))
    assert paused.invoke(first_input, thread_id="a", interrupt_before=["answer"]).status == "interrupted"
    paused.close()
    resumed = compile_graph(branching_graph(), checkpointer=SqliteCheckpointer(db)).invoke(
        None, thread_id="a"
    )
    straight = compile_graph(branching_graph(), checkpointer=SqliteCheckpointer(db)).invoke(
        first_input, thread_id="b"
    )
    assert said(resumed.state) == [
        ("user", "go"),
        ("assistant", "asking"),
        ("assistant", "left"),
        ("assistant", "right"),
        ("assistant", "4 seen"),
    ]
    assert resumed.state == straight.state, "the same messages with the same ids"


class PydanticChat(BaseModel):
    messages: Annotated[list[AnyMessage], add_messages]


def test_a_pydantic_state_with_add_messages(compile_graph) -> None:
    g: ag.Graph = ag.Graph(state=PydanticChat, returns="update")
    g.add_vertex("foo", lambda s: {"messages": [message("user", "foo")]})
    g.add_edge(ag.START, "foo")
    g.add_edge("foo", ag.END)
    state = compile_graph(g).invoke({"messages": [("user", "meow")]}).state
    assert isinstance(state, PydanticChat)
    assert said({"messages": state.messages}) == [("user", "meow"), ("user", "foo")]
    assert all(isinstance(m["id"], str) for m in state.messages)


def test_ids_given_before_a_pause_are_kept_by_the_resumed_run(compile_graph, tmp_path: Path) -> None:
    g: ag.Graph = ag.Graph(
        state=MessagesState, returns="update"
    )  # update vertices: random ids, recorded once
    for name in ("left", "right"):
        g.add_vertex(name, lambda s, n=name: {"messages": ("assistant", n)})
        g.add_edge(ag.START, name)
    g.add_vertex("answer", lambda s: {"messages": ("assistant", f"{len(s['messages'])} seen")})
    g.add_edge(["left", "right"], "answer")
    g.add_edge("answer", ag.END)
    db = tmp_path / "runs.db"
    first = compile_graph(g, checkpointer=SqliteCheckpointer(db))
    first.invoke({"messages": "go"}, thread_id="t", interrupt_before=["answer"])
    before = first.get_state("t").state["messages"]
    first.close()
    done = compile_graph(g, checkpointer=SqliteCheckpointer(db)).invoke(None, thread_id="t").state["messages"]
    assert [content_of(m) for m in done] == ["go", "left", "right", "3 seen"]
    assert done[:3] == before
