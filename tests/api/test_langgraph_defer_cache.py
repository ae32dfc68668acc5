"""LangGraph's deferred-node and node-cache examples (its how-to "Use the graph API"), ported.

Each test builds LangGraph's graph as its docs write it, runs it in LangGraph
(when installed: the `bench` extra), and runs our port beside it: the same
vertices see the same states, and the cached vertex is called as often. Where
we differ on purpose, the docstring says so.
"""

from __future__ import annotations

import operator
import threading
from typing import Annotated, Any, TypedDict

import pytest

import actorgraph as ag
from actorgraph.merge import append

pytestmark = pytest.mark.threads_only("the vertices record what they saw in this process's memory")

langgraph = pytest.importorskip("langgraph", reason="LangGraph runs beside us: pip install -e '.[bench]'")

from langgraph.cache.memory import InMemoryCache  # noqa: E402 - after the skip
from langgraph.graph import END, START, StateGraph  # noqa: E402
from langgraph.types import CachePolicy  # noqa: E402


class LangGraphState(TypedDict):
    aggregate: Annotated[list[str], operator.add]


class OurState(TypedDict):
    """Ours: `append` instead of `operator.add` (our built-in reducers count each branch's change once)."""

    aggregate: Annotated[list[str], append]


def recording(seen: list[tuple[str, list[str]]]) -> Any:
    lock = threading.Lock()

    def node(name: str) -> Any:
        def fn(state: Any) -> dict[str, list[str]]:
            with lock:
                seen.append((name, list(state["aggregate"])))
            return {"aggregate": [name.upper()]}

        return fn

    return node


EDGES = [("a", "b"), ("a", "c"), ("b", "b_2"), ("b_2", "d"), ("c", "d")]


def test_defer_node_execution() -> None:
    """LangGraph how-to "Defer node execution": d waits for the longer branch b -> b_2, then runs once."""
    theirs: list[tuple[str, list[str]]] = []
    node = recording(theirs)
    builder = StateGraph(LangGraphState)
    for name in ("a", "b", "b_2", "c"):
        builder.add_node(name, node(name))
    builder.add_node("d", node("d"), defer=True)
    builder.add_edge(START, "a")
    for src, dst in EDGES:
        builder.add_edge(src, dst)
    builder.add_edge("d", END)
    their_state = builder.compile().invoke({"aggregate": []})

    ours: list[tuple[str, list[str]]] = []
    node = recording(ours)
    g: ag.Graph[OurState] = ag.Graph(state=OurState, returns="update")
    for name in ("a", "b", "b_2", "c"):
        g.add_vertex(name, node(name))
    g.add_vertex("d", node("d"), defer=True)
    g.add_edge(ag.START, "a")
    for src, dst in EDGES:
        g.add_edge(src, dst)
    g.add_edge("d", ag.END)
    with g.compile() as app:
        our_state = app.invoke({"aggregate": []}).state

    # Two differences on purpose. LangGraph's b_2 reads the shared channels (c's write
    # included); ours is given the state its message carries: its own branch, a then b.
    # And d merges its inputs in delivery order (c's message from superstep 2, then
    # b_2's from superstep 3), where LangGraph's channel holds writes by superstep.
    def items(runs: list[tuple[str, list[str]]]) -> dict[str, list[str]]:
        return {name: sorted(seen) for name, seen in runs}

    assert items(ours) == {**items(theirs), "b_2": ["A", "B"]}
    assert [name for name, _ in ours].count("d") == [name for name, _ in theirs].count("d") == 1
    assert sorted(our_state["aggregate"]) == sorted(their_state["aggregate"]) == ["A", "B", "B_2", "C", "D"]
    assert our_state["aggregate"] == ["A", "C", "B", "B_2", "D"]


class Numbers(TypedDict, total=False):
    x: int
    result: int


def test_node_caching() -> None:
    """LangGraph how-to "Add node caching": the second invoke with x=5 does not call the node.

    LangGraph marks the hit in stream mode "updates" (`__metadata__: {"cached": True}`);
    we mark it on the `TaskFinished` event (`stream(mode="events")`, listeners).
    """
    calls = {"theirs": 0, "ours": 0}

    def expensive(side: str) -> Any:
        def fn(state: Any) -> dict[str, int]:
            calls[side] += 1
            return {"result": state["x"] * 2}

        return fn

    builder = StateGraph(Numbers)
    builder.add_node("expensive_node", expensive("theirs"), cache_policy=CachePolicy(ttl=3))
    builder.add_edge(START, "expensive_node")
    builder.add_edge("expensive_node", END)
    graph = builder.compile(cache=InMemoryCache())
    their_runs = [list(graph.stream({"x": 5}, stream_mode="updates")) for _ in range(2)]

    g: ag.Graph[Numbers] = ag.Graph(returns="update")
    g.add_vertex("expensive_node", expensive("ours"), cache=ag.CachePolicy(ttl=3))
    g.add_edge(ag.START, "expensive_node")
    g.add_edge("expensive_node", ag.END)
    with g.compile(cache=ag.MemoryCache()) as app:
        our_runs = [list(app.stream({"x": 5}, mode=["updates", "events"])) for _ in range(2)]

    assert calls == {"theirs": 1, "ours": 1}
    assert their_runs[1][0]["__metadata__"] == {"cached": True}
    hits = [e.cached for mode, e in our_runs[1] if mode == "events" and isinstance(e, ag.events.TaskFinished)]
    assert hits == [True]
    updates = [item for mode, item in our_runs[1] if mode == "updates"]
    assert updates == [{"expensive_node": {"x": 5, "result": 10}}]


def test_node_caching_with_a_key_function() -> None:
    """LangGraph's `CachePolicy(key_func=...)` is our `CachePolicy(key=...)`: inputs equal by key hit."""
    calls = {"theirs": 0, "ours": 0}

    def double(side: str) -> Any:
        def fn(state: Any) -> dict[str, int]:
            calls[side] += 1
            return {"result": state["x"] * 2}

        return fn

    builder = StateGraph(Numbers)
    builder.add_node("double", double("theirs"), cache_policy=CachePolicy(key_func=lambda s: str(s["x"] % 2)))
    builder.add_edge(START, "double")
    builder.add_edge("double", END)
    graph = builder.compile(cache=InMemoryCache())
    theirs = [graph.invoke({"x": x})["result"] for x in (1, 3, 2)]

    g: ag.Graph[Numbers] = ag.Graph(returns="update")
    g.add_vertex("double", double("ours"), cache=ag.CachePolicy(key=lambda s: str(s["x"] % 2)))
    g.add_edge(ag.START, "double")
    g.add_edge("double", ag.END)
    with g.compile(cache=ag.MemoryCache()) as app:
        ours = [app.invoke({"x": x}).state["result"] for x in (1, 3, 2)]

    assert ours == theirs == [2, 2, 4]  # 3 is equal to 1 by key: the outcome for 1 is reused
    assert calls == {"theirs": 2, "ours": 2}
