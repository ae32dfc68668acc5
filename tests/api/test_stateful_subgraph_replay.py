"""A stateful subgraph rewinds with its parent: replayed or forked, the parent finds it as it was then.

A stateful subgraph (`compile(checkpointer=True)`) keeps one state per thread of
its parent. When the parent is replayed or forked from an older checkpoint, the
subgraph's next call starts from its state as of that checkpoint (issue 38,
item 18; LangGraph's `checkpoint_map`), so a replayed turn ends as the
uninterrupted run's did, and a line of the parent's history abandoned by a fork
never leaks into another.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

import actorgraph as ag
from actorgraph.checkpoint import MemoryCheckpointer
from actorgraph.merge import append, by_key

Compile = Callable[..., ag.CompiledGraph[Any]]
TURNS = ("one", "two", "three")


def chat() -> ag.Graph:
    """An agent whose reply counts the notes it keeps, so a state kept twice shows."""
    g: ag.Graph = ag.Graph(name="chat", merge=by_key({"log": append}), returns="update")
    g.add_vertex("reply", lambda s: {"log": [f"re:{s['log'][-1]}/{len(s['log'])}"]})
    g.add_edge(ag.START, "reply")
    g.add_edge("reply", ag.END)
    return g


def host() -> ag.Graph:
    """START -> agent (stateful) -> END: the agent hears the turn's question, its whole log comes back."""
    g: ag.Graph = ag.Graph(name="host")
    g.add_vertex(
        "agent",
        chat().compile(checkpointer=True),
        input=lambda s: {"log": [s["q"]]},
        output=lambda final: {"log": final["log"]},
    )
    g.add_edge(ag.START, "agent")
    g.add_edge("agent", ag.END)
    return g


def before_turn(app: ag.CompiledGraph[Any], thread_id: str, question: str) -> str:
    """The checkpoint of the turn that asked `question`, before the agent ran in it."""
    return next(s.checkpoint_id for s in app.get_history(thread_id) if s.next and s.state["q"] == question)


@pytest.mark.parametrize(("durability", "how"), [("sync", "replay"), ("sync", "fork"), ("exit", "fork")])
@pytest.mark.parametrize("turn", range(1, len(TURNS)))
def test_a_replayed_turn_and_the_turns_after_it_end_as_the_uninterrupted_run(
    compile_graph: Compile, store: Any, durability: str, how: str, turn: int
) -> None:
    """Replayed from before the agent ran (or forked from the turn before, which "exit" writes)."""
    app = compile_graph(host(), checkpointer=store, durability=durability)
    straight = [app.invoke({"q": q}, thread_id="straight").state for q in TURNS]
    ends = [app.invoke({"q": q}, thread_id="t").checkpoint_id for q in TURNS]
    if how == "replay":
        again = app.invoke(None, thread_id="t", checkpoint_id=before_turn(app, "t", TURNS[turn]))
    else:
        again = app.invoke({"q": TURNS[turn]}, thread_id="t", checkpoint_id=ends[turn - 1])
    later = [app.invoke({"q": q}, thread_id="t").state for q in TURNS[turn + 1 :]]
    assert [again.state, *later] == straight[turn:]
    assert app.get_state("t", namespace="agent").state["log"] == straight[-1]["log"]


def test_a_fork_with_a_new_input_starts_the_subgraph_from_its_state_then(compile_graph: Compile) -> None:
    app = compile_graph(host(), checkpointer=MemoryCheckpointer())
    first = app.invoke({"q": "one"}, thread_id="t").checkpoint_id
    app.invoke({"q": "two"}, thread_id="t")
    forked = app.invoke({"q": "alt"}, thread_id="t", checkpoint_id=first)
    assert forked.state["log"] == ["one", "re:one/1", "alt", "re:alt/3"]


def test_a_fork_back_to_the_first_line_finds_the_subgraph_as_that_line_left_it(
    compile_graph: Compile,
) -> None:
    app = compile_graph(host(), checkpointer=MemoryCheckpointer())
    first = app.invoke({"q": "one"}, thread_id="t").checkpoint_id
    second = app.invoke({"q": "two"}, thread_id="t")
    assert app.invoke({"q": "alt"}, thread_id="t", checkpoint_id=first).state["log"][-1] == "re:alt/3"
    back = app.invoke({"q": "three"}, thread_id="t", checkpoint_id=second.checkpoint_id)  # not alt's line
    assert back.state["log"] == [*second.state["log"], "three", "re:three/5"]


def test_a_replay_from_before_the_subgraph_ever_ran_starts_it_afresh(compile_graph: Compile) -> None:
    app = compile_graph(host(), checkpointer=MemoryCheckpointer())
    for q in TURNS:
        app.invoke({"q": q}, thread_id="t")
    again = app.invoke(None, thread_id="t", checkpoint_id=before_turn(app, "t", "one"))
    assert again.state["log"] == ["one", "re:one/1"]


@pytest.mark.threads_only("a graph invoked in a vertex nests on threads; on Ray such a vertex is refused")
def test_a_stateful_graph_invoked_in_a_vertex_rewinds_with_the_replayed_parent(
    compile_graph: Compile,
) -> None:
    memory = compile_graph(chat(), checkpointer=True)

    def talk(state: dict[str, Any]) -> dict[str, Any]:
        return {**state, "log": memory.invoke({"log": [state["q"]]}).state["log"]}

    g: ag.Graph = ag.Graph(name="talker")
    g.add_vertex("talk", talk)
    g.add_edge(ag.START, "talk")
    g.add_edge("talk", ag.END)
    app = compile_graph(g, checkpointer=MemoryCheckpointer())
    straight = [app.invoke({"q": q}, thread_id="straight").state for q in TURNS]
    for q in TURNS:
        app.invoke({"q": q}, thread_id="t")
    again = app.invoke(None, thread_id="t", checkpoint_id=before_turn(app, "t", "two"))
    assert [again.state, app.invoke({"q": "three"}, thread_id="t").state] == straight[1:]


@pytest.mark.parametrize("durability", ["sync", "exit"])
def test_a_stateful_vertex_in_a_loop_continues_its_state_whatever_is_written(
    compile_graph: Compile, durability: str
) -> None:
    counter: ag.Graph = ag.Graph(name="counter", returns="update")
    counter.add_vertex("count", lambda s: {"n": s.get("n", 0) + 1})
    counter.add_edge(ag.START, "count")
    counter.add_edge("count", ag.END)
    g: ag.Graph = ag.Graph(name="loop")
    g.add_vertex(
        "tick", counter.compile(checkpointer=True), input=lambda s: {}, output=lambda f: {"n": f["n"]}
    )
    g.add_edge(ag.START, "tick")
    g.add_conditional_edges("tick", lambda s: "tick" if s["n"] % 3 else ag.END)
    app = compile_graph(g, checkpointer=MemoryCheckpointer(), durability=durability)
    assert [app.invoke({}, thread_id="t").state["n"] for _ in range(2)] == [3, 6]
