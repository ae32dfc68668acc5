"""A store given to `compile(store=...)`: vertices of one thread write through `ctx.store`, another reads."""

from __future__ import annotations

from typing import Any

import pytest
from store_kinds import at_once

import actorgraph as ag
from actorgraph.checkpoint import SqliteCheckpointer
from actorgraph.store import MemoryStore, SqliteStore


def remember(state: dict[str, Any], ctx: ag.Context[Any]) -> dict[str, Any]:
    ctx.store.put(("notes", state["user"]), ctx.thread_id, {"text": state["text"], "step": ctx.step})
    return state


def recall(state: dict[str, Any], ctx: ag.Context[Any]) -> dict[str, Any]:
    found = ctx.store.search(("notes", state["user"]), limit=100)
    return {**state, "known": sorted(item.value["text"] for item in found)}


def graph() -> ag.Graph:
    g = ag.Graph(name="notes")
    g.add_vertex("remember", remember)
    g.add_vertex("recall", recall)
    g.add_edge(ag.START, "remember")
    g.add_edge("remember", "recall")
    g.add_edge("recall", ag.END)
    return g


@pytest.fixture(
    params=[
        pytest.param("memory", marks=pytest.mark.threads_only("a MemoryStore stays in this process")),
        "sqlite",
    ]
)
def store(request, tmp_path):
    made = MemoryStore() if request.param == "memory" else SqliteStore(tmp_path / "store.db")
    yield made
    made.close()


def test_what_one_thread_writes_another_thread_reads(store, compile_graph, tmp_path):
    with SqliteCheckpointer(tmp_path / "runs.db") as checkpointer:
        app = compile_graph(graph(), checkpointer=checkpointer, store=store)

        def run(i: int) -> None:
            app.invoke({"user": "ada", "text": f"note {i}"}, thread_id=f"writer-{i}")

        assert at_once(run, 4) == []
        result = app.invoke({"user": "ada", "text": "reader"}, thread_id="reader")
    assert result.state["known"] == ["note 0", "note 1", "note 2", "note 3", "reader"]
    item = store.get(("notes", "ada"), "writer-2")
    assert item.value == {"text": "note 2", "step": 1}
    assert sorted(i.key for i in store.search(("notes",), limit=10)) == [
        "reader",
        "writer-0",
        "writer-1",
        "writer-2",
        "writer-3",
    ]


@pytest.mark.threads_only("the vertex appends to a list of this process")
def test_a_graph_without_a_store_gives_none(compile_graph):
    seen = []
    g = ag.Graph()
    g.add_vertex("look", lambda s, ctx: seen.append(ctx.store) or s)
    g.add_edge(ag.START, "look")
    g.add_edge("look", ag.END)
    compile_graph(g).invoke({})
    assert seen == [None]
