"""`stream(mode="messages")`: the message pieces vertices make, in order, with where they were made."""

from __future__ import annotations

from typing import Any

import pytest

from actorgraph import END, START, ActorGraphError, Context, Graph
from actorgraph.checkpoint import MemoryCheckpointer

Compile = Any


def _talker(state: dict[str, Any], ctx: Context[Any]) -> dict[str, Any]:
    for word in state["say"].split():
        ctx.stream_message(word + " ")
    return {**state, "said": True}


def _graph() -> Graph[Any]:
    g: Graph[Any] = Graph()
    g.add_vertex("talk", _talker)
    g.add_edge(START, "talk")
    g.add_edge("talk", END)
    return g


def test_pieces_come_in_order_with_one_id_and_their_metadata(compile_graph: Compile) -> None:
    app = compile_graph(_graph(), checkpointer=MemoryCheckpointer())
    items = list(app.stream({"say": "one two three"}, mode="messages", thread_id="t1"))
    assert [chunk["content"] for chunk, _ in items] == ["one ", "two ", "three "]
    assert {chunk["role"] for chunk, _ in items} == {"assistant"}
    assert len({chunk["id"] for chunk, _ in items}) == 1
    meta = items[0][1]
    assert meta == {"vertex": "talk", "step": 1, "task_id": "talk", "thread_id": "t1", "namespace": ""}


def test_messages_beside_other_modes(compile_graph: Compile) -> None:
    app = compile_graph(_graph())
    pairs = list(app.stream({"say": "a b"}, mode=["messages", "updates"]))
    assert [mode for mode, _ in pairs] == ["messages", "messages", "updates"]


def test_pieces_from_a_subgraph_carry_its_namespace_without_subgraphs(compile_graph: Compile) -> None:
    parent: Graph[Any] = Graph()
    parent.add_vertex("inner", _graph())
    parent.add_edge(START, "inner")
    parent.add_edge("inner", END)
    app = compile_graph(parent)
    items = list(app.stream({"say": "x y"}, mode="messages"))
    assert [chunk["content"] for chunk, _ in items] == ["x ", "y "]
    assert all(meta["namespace"].startswith("inner") for _, meta in items)
    tagged = list(app.stream({"say": "x y"}, mode="messages", subgraphs=True))
    assert [path[0].startswith("inner") for path, _ in tagged] == [True, True]


def test_explicit_ids_and_dict_pieces(compile_graph: Compile) -> None:
    def two_messages(state: dict[str, Any], ctx: Context[Any]) -> None:
        ctx.stream_message("first", id="m1")
        ctx.stream_message({"role": "assistant", "content": "second"}, id="m2")
        ctx.stream_message({"role": "tool", "content": "third", "id": "m3"})

    g: Graph[Any] = Graph()
    g.add_vertex("v", two_messages)
    g.add_edge(START, "v")
    g.add_edge("v", END)
    chunks = [c for c, _ in compile_graph(g).stream({}, mode="messages")]
    assert [(c["id"], c["role"], c["content"]) for c in chunks] == [
        ("m1", "assistant", "first"),
        ("m2", "assistant", "second"),
        ("m3", "tool", "third"),
    ]


def test_a_piece_of_the_wrong_kind_fails_the_task_with_a_clear_error(compile_graph: Compile) -> None:
    def bad(state: dict[str, Any], ctx: Context[Any]) -> None:
        ctx.stream_message(42)

    g: Graph[Any] = Graph()
    g.add_vertex("v", bad)
    g.add_edge(START, "v")
    g.add_edge("v", END)
    with pytest.raises(ActorGraphError, match="stream_message"):
        list(compile_graph(g).stream({}, mode="messages"))


def test_no_listener_means_stream_message_costs_nothing_and_fails_nothing(compile_graph: Compile) -> None:
    assert compile_graph(_graph()).invoke({"say": "quiet"}).state == {"say": "quiet", "said": True}
