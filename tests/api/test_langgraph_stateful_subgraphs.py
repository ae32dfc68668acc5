"""LangGraph's tests of stateful subgraphs (`compile(checkpointer=True)`) and subgraph updates, ported.

Each test names the LangGraph test it ports (`libs/langgraph/tests/`). Written
anew on our API: a LangGraph node that calls `subgraph.invoke(...)` becomes a
subgraph vertex with `input=` / `output=` mappers (nested invocation is tested
on its own); `update_state(state.tasks[0].state.config, ...)` becomes
`update_state(thread_id, ..., namespace=...)` with a namespace read from
`get_state(thread_id, subgraphs=True).subgraphs`. A stateful subgraph's
namespace is its vertex's name, as LangGraph's `checkpoint_ns` is.

Replaying or forking the parent from before a stateful subgraph's turn rewinds
the subgraph to its state at that time, as LangGraph's `checkpoint_map` does;
its newer states stay in its history (`get_history(..., namespace=...)`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from shared import SharedList

import actorgraph as ag
from actorgraph.checkpoint import MemoryCheckpointer
from actorgraph.merge import add, append, by_key

Compile = Callable[..., ag.CompiledGraph[Any]]


def values_graph(name: str) -> ag.Graph:
    """A graph over `{"value": [...]}`, appended to, whose vertices return updates (LangGraph's `State`)."""
    return ag.Graph(name=name, merge=by_key({"value": append}), returns="update")


def line(graph: ag.Graph, *vertices: tuple[str, Any]) -> ag.Graph:
    for name, fn in vertices:
        graph.add_vertex(name, fn)
    names = [name for name, _ in vertices]
    for a, b in zip((ag.START, *names), (*names, ag.END), strict=True):
        graph.add_edge(a, b)
    return graph


def test_subgraph_checkpoint_true(compile_graph: Compile, store: Any) -> None:
    """Ports test_pregel.py::test_subgraph_checkpoint_true: a stateful subgraph in a loop keeps its state."""
    inner = line(
        ag.Graph(name="inner", merge=by_key({"my_key": add}), returns="update"),
        ("inner_1", lambda s: {"my_key": " got here", "my_other_key": s["my_key"]}),
        ("inner_2", lambda s: {"my_key": " and there"}),
    )
    g: ag.Graph = ag.Graph(name="outer", returns="update")
    g.add_vertex("inner", inner.compile(checkpointer=True), output=lambda f: {"my_key": f["my_key"]})
    g.add_edge(ag.START, "inner")
    g.add_conditional_edges("inner", lambda s: "inner" if s["my_key"].count("there") < 2 else ag.END)
    app = compile_graph(g, checkpointer=store)
    items = list(app.stream({"my_key": ""}, thread_id="2", mode="updates", subgraphs=True))
    assert [(ns, list(update)) for ns, update in items] == [
        (("inner",), ["inner_1"]),
        (("inner",), ["inner_2"]),
        ((), ["inner"]),
        (("inner",), ["inner_1"]),
        (("inner",), ["inner_2"]),
        ((), ["inner"]),
    ]
    second_inner_1 = items[3][1]["inner_1"]
    assert (
        second_inner_1["my_other_key"] == " got here and there got here and there"
    )  # input added to what it kept
    assert items[-1][1]["inner"] == {"my_key": " got here and there got here and there got here and there"}
    assert len(app.get_history("2")) == 3  # the input and the two supersteps of the parent


def test_subgraph_checkpoint_true_interrupt(compile_graph: Compile, store: Any) -> None:
    """Ports test_pregel.py::test_subgraph_checkpoint_true_interrupt (node_2's call becomes a vertex)."""

    def subgraph_node_1(state: dict[str, Any]) -> dict[str, Any]:
        return {"baz": ag.interrupt("Provide baz value")}

    sub = line(
        ag.Graph(name="subgraph", returns="update"),
        ("subgraph_node_1", subgraph_node_1),
        ("subgraph_node_2", lambda s: {"bar": s["bar"] + s["baz"]}),
    )
    app = compile_graph(two_steps(sub.compile(checkpointer=True)), checkpointer=store)
    paused = app.invoke({"foo": "foo"}, thread_id="1")
    assert paused.state == {"foo": "hi! foo"} and [i.value for i in paused.interrupts] == [
        "Provide baz value"
    ]
    assert app.get_state("1", subgraphs=True).subgraphs["node_2"].state == {"bar": "hi! foo"}
    assert app.invoke(ag.Command(resume="baz"), thread_id="1").state == {"foo": "hi! foobaz"}


def two_steps(sub: ag.CompiledGraph[Any]) -> ag.Graph:
    """START -> node_1 -> node_2 (the subgraph, on `bar`) -> END, over `{"foo": ...}`."""
    g: ag.Graph = ag.Graph(name="parent", returns="update")
    g.add_vertex("node_1", lambda s: {"foo": "hi! " + s["foo"]})
    g.add_vertex("node_2", sub, input=lambda s: {"bar": s["foo"]}, output=lambda f: {"foo": f["bar"]})
    g.add_edge(ag.START, "node_1")
    g.add_edge("node_1", "node_2")
    g.add_edge("node_2", ag.END)
    return g


def test_multiple_subgraphs_checkpointer(compile_graph: Compile, store: Any) -> None:
    """Ports test_pregel.py::test_multiple_subgraphs_checkpointer: a stateful then a fresh subgraph."""
    sub_1 = line(
        ag.Graph(name="sub_1", merge=by_key({"sub_counter": add}), returns="update"),
        ("subgraph_node", lambda s: {"sub_counter": 2}),
    )
    sub_2 = line(
        ag.Graph(name="sub_2", merge=by_key({"other_sub_counter": add}), returns="update"),
        ("other_subgraph_node", lambda s: {"other_sub_counter": 3}),
    )
    g: ag.Graph = ag.Graph(name="parent", returns="update")
    g.add_vertex(
        "first",
        sub_1.compile(checkpointer=True),
        input=lambda s: {"sub_counter": s["parent_counter"]},
        output=lambda f: {"parent_counter": f["sub_counter"]},
    )
    g.add_vertex(
        "second",
        sub_2.compile(),
        input=lambda s: {"other_sub_counter": s["parent_counter"]},
        output=lambda f: {"parent_counter": f["other_sub_counter"]},
    )
    g.add_edge(ag.START, "first")
    g.add_edge("first", "second")
    g.add_edge("second", ag.END)
    app = compile_graph(g, checkpointer=store)
    assert app.invoke({"parent_counter": 0}, thread_id="1").state == {"parent_counter": 5}
    assert app.invoke({"parent_counter": 0}, thread_id="1").state == {"parent_counter": 7}
    items = list(app.stream({"parent_counter": 0}, thread_id="2", mode="updates", subgraphs=True))
    assert [ns[0].partition("@")[0] if ns else "" for ns, _ in items] == ["first", "", "second", ""]
    assert items[0][0] == ("first",)  # the stateful one's namespace is its vertex, in every turn


def test_interrupt_subgraph_reenter_checkpointer_true(compile_graph: Compile) -> None:
    """Ports test_pregel.py::test_interrupt_subgraph_reenter_checkpointer_true (call_subgraph: the vertex)."""
    called, bar_values = SharedList(), SharedList()

    def subnode_1(state: dict[str, Any]) -> dict[str, Any]:
        called.append("subnode_1")
        bar_values.append(state.get("bar"))
        return {"foo": "subgraph_1"}

    def subnode_2(state: dict[str, Any]) -> dict[str, Any]:
        called.append("subnode_2")
        return {"foo": "subgraph_2", "bar": ag.interrupt("Provide value") + "baz"}

    def node(state: dict[str, Any]) -> Any:
        called.append("parent")
        if state["counter"] < 1:
            return ag.Command(goto="call_subgraph", update={"counter": state["counter"] + 1})
        return {"foo": state["foo"] + "|parent"}

    sub = line(ag.Graph(name="sub", returns="update"), ("subnode_1", subnode_1), ("subnode_2", subnode_2))
    g: ag.Graph = ag.Graph(name="parent", returns="update")
    g.add_vertex(
        "call_subgraph",
        sub.compile(checkpointer=True),
        input=lambda s: {"foo": s["foo"]},
        output=lambda f: {"foo": f["foo"]},
    )
    g.add_vertex("node", node, destinations=["call_subgraph", ag.END])
    g.add_edge(ag.START, "call_subgraph")
    g.add_edge("call_subgraph", "node")
    # LangGraph's counts: an answer re-runs the vertex that asked (our fallback path)
    app = compile_graph(g, checkpointer=MemoryCheckpointer(), live_interrupts=None)
    first = app.invoke({"foo": "", "counter": 0}, thread_id="1")
    assert first.state == {"foo": "", "counter": 0} and [i.value for i in first.interrupts] == [
        "Provide value"
    ]
    second = app.invoke(ag.Command(resume="bar"), thread_id="1")
    assert second.state == {"foo": "subgraph_2", "counter": 1} and second.interrupts
    assert app.invoke(ag.Command(resume="qux"), thread_id="1").state == {
        "foo": "subgraph_2|parent",
        "counter": 1,
    }
    assert list(called) == ["subnode_1", "subnode_2", "subnode_2", "parent"] * 2
    again = app.invoke({"foo": "meow", "counter": 0}, thread_id="1")  # a new turn
    assert again.state == {"foo": "meow", "counter": 0} and again.interrupts
    assert list(bar_values) == [None, "barbaz", "quxbaz"]  # the subgraph kept `bar` from the turn before


def chat(prefix: str, *, pause: bool = False) -> ag.CompiledGraph[Any]:
    """LangGraph's stateful echo agent (subgraph_persistence_helpers.py): it remembers its messages."""

    def process(state: dict[str, Any]) -> dict[str, Any]:
        if pause:
            ag.interrupt("continue?")
        return {"value": [f"{prefix}: {state['value'][-1]}"]}

    graph = values_graph(prefix.lower())
    vertices: list[tuple[str, Any]] = [("process", process)]
    if pause:
        vertices.append(("respond", lambda s: {"value": ["Done"]}))
    return line(graph, *vertices).compile(checkpointer=True)


def caller(**agents: ag.CompiledGraph[Any]) -> ag.Graph:
    """The parent: each agent hears its topic; `<agent>_seen` gets its messages, `<agent>_result` the last."""
    g: ag.Graph = ag.Graph(name="parent", returns="update")
    for name, agent in agents.items():
        g.add_vertex(
            name,
            agent,
            input=lambda s, name=name: {"value": [s["topics"][name]]},
            output=lambda f, name=name: {f"{name}_seen": list(f["value"]), f"{name}_result": f["value"][-1]},
        )
        g.add_edge(ag.START, name)
        g.add_edge(name, ag.END)
    return g


def test_stateful_state_accumulates(compile_graph: Compile, store: Any) -> None:
    """Ports test_subgraph_persistence.py::test_stateful_state_accumulates."""
    app = compile_graph(caller(agent=chat("Processing")), checkpointer=store)
    first = app.invoke({"topics": {"agent": "tell me about apples"}}, thread_id="t")
    assert first.state["agent_result"] == "Processing: tell me about apples"
    assert first.state["agent_seen"] == ["tell me about apples", "Processing: tell me about apples"]
    second = app.invoke({"topics": {"agent": "tell me about bananas"}}, thread_id="t")
    assert second.state["agent_seen"] == [
        "tell me about apples",
        "Processing: tell me about apples",
        "tell me about bananas",
        "Processing: tell me about bananas",
    ]


@pytest.mark.parametrize(
    "ported",
    [
        "test_subgraph_persistence.py::test_stateful_state_accumulates_with_interrupt",
        "test_subgraph_persistence.py::test_stateful_interrupt_resume",
    ],
)
def test_stateful_state_accumulates_with_interrupt(compile_graph: Compile, store: Any, ported: str) -> None:
    """Ports both LangGraph tests named by `ported` (one scenario: two turns, each asked and answered)."""
    app = compile_graph(caller(agent=chat("Processing", pause=True)), checkpointer=store)
    seen = []
    for topic in ("apples", "bananas"):
        paused = app.invoke({"topics": {"agent": f"tell me about {topic}"}}, thread_id="t")
        assert [i.value for i in paused.interrupts] == ["continue?"]
        done = app.invoke(ag.Command(resume=True), thread_id="t")
        assert done.state["agent_result"] == "Done"
        seen.append(done.state["agent_seen"])
    assert seen == [
        ["tell me about apples", "Processing: tell me about apples", "Done"],
        [
            "tell me about apples",
            "Processing: tell me about apples",
            "Done",
            "tell me about bananas",
            "Processing: tell me about bananas",
            "Done",
        ],
    ]


def test_stateful_namespace_isolation(compile_graph: Compile, store: Any) -> None:
    """Ports test_subgraph_persistence.py::test_stateful_namespace_isolation (the agents run side by side)."""
    app = compile_graph(caller(fruit_agent=chat("Fruit"), veggie_agent=chat("Veggie")), checkpointer=store)
    for turn in ("round 1", "round 2"):
        done = app.invoke(
            {"topics": {"fruit_agent": f"cherries {turn}", "veggie_agent": f"broccoli {turn}"}},
            thread_id="t",
        )
    assert done.state["fruit_agent_seen"] == [
        "cherries round 1",
        "Fruit: cherries round 1",
        "cherries round 2",
        "Fruit: cherries round 2",
    ]
    assert done.state["veggie_agent_seen"] == [
        "broccoli round 1",
        "Veggie: broccoli round 1",
        "broccoli round 2",
        "Veggie: broccoli round 2",
    ]


def test_checkpointer_false_no_persistence(compile_graph: Compile, store: Any) -> None:
    """Ports test_subgraph_persistence.py::test_checkpointer_false_no_persistence.

    LangGraph's `checkpointer=False` does not record the subgraph at all; ours
    runs it afresh for each task and still records that run (so it resumes exactly).
    """
    echo = line(values_graph("echo"), ("process", lambda s: {"value": [f"Processed: {s['value'][-1]}"]}))
    app = compile_graph(caller(agent=echo.compile(checkpointer=False)), checkpointer=store)
    counts = [
        len(app.invoke({"topics": {"agent": topic}}, thread_id="t").state["agent_seen"])
        for topic in ("apples", "bananas")
    ]
    assert counts == [2, 2]


def ask_human_graph(called: SharedList, **compiled: Any) -> ag.Graph:
    """LangGraph's time-travel graph: router -> subgraph_node (step_a, ask_human, step_b) -> post_process."""

    def step(name: str, value: str) -> Callable[[dict[str, Any]], dict[str, Any]]:
        def run(state: dict[str, Any]) -> dict[str, Any]:
            called.append(name)
            return {"value": [value]}

        return run

    def ask_human(state: dict[str, Any]) -> dict[str, Any]:
        called.append("ask_human")
        return {"value": [f"human:{ag.interrupt('Provide input:')}"]}

    sub = line(
        values_graph("sub"),
        ("step_a", step("step_a", "sub_a")),
        ("ask_human", ask_human),
        ("step_b", step("step_b", "sub_b")),
    )
    g = values_graph("graph")
    g.add_vertex("router", step("router", "routed"))
    g.add_vertex("subgraph_node", sub.compile(**compiled))
    g.add_vertex("post_process", step("post_process", "post"))
    g.add_edge(ag.START, "router")
    g.add_edge("router", "subgraph_node")
    g.add_edge("subgraph_node", "post_process")
    g.add_edge("post_process", ag.END)
    return g


@pytest.mark.parametrize("checkpointer", [True, None])
def test_subgraph_interrupt_full_flow(compile_graph: Compile, store: Any, checkpointer: Any) -> None:
    """Ports test_time_travel.py::test_subgraph_interrupt_full_flow: update a waiting subgraph, then answer.

    LangGraph's update of the subgraph's config forks it and its question is
    asked again on `invoke(None)`; ours keeps the question pending in the new
    checkpoint, so `invoke(None)` leaves it waiting with the same question.
    """
    called = SharedList()
    app = compile_graph(ask_human_graph(called, checkpointer=checkpointer), checkpointer=store)
    assert app.invoke({"value": []}, thread_id="1").status == "interrupted"
    assert list(called) == ["router", "step_a", "ask_human"]
    (namespace,) = app.get_state("1", subgraphs=True).subgraphs
    app.update_state("1", {"value": ["sub_forked"]}, namespace=namespace)
    again = app.invoke(None, thread_id="1")
    assert [i.value for i in again.interrupts] == ["Provide input:"]
    called.clear()
    final = app.invoke(ag.Command(resume="new_answer"), thread_id="1")
    assert list(called) == ["ask_human", "step_b", "post_process"]
    assert final.state["value"] == ["routed", "sub_a", "sub_forked", "human:new_answer", "sub_b", "post"]


def test_stateful_subgraph_loads_state_across_ticks(compile_graph: Compile) -> None:
    """Ports test_time_travel.py::test_stateful_subgraph_loads_state_across_ticks.

    Two turns, then a replay of the parent from before its second turn's node_a:
    the subgraph, which runs two supersteps later, sees its state as of that
    point (`["s"]`), as LangGraph's does; its newer states stay in its history.
    """
    observed = SharedList()

    def sub_step(state: dict[str, Any]) -> dict[str, Any]:
        observed.append(list(state["value"]))
        return {"value": ["s"]}

    sub = line(values_graph("sub"), ("sub_step", sub_step))
    g = ag.Graph(name="graph", merge=by_key({"results": append}), returns="update")
    g.add_vertex("node_a", lambda s: {"results": ["a"]})
    g.add_vertex("node_b", lambda s: {"results": ["b"]})
    g.add_vertex(
        "sub_node", sub.compile(checkpointer=True), input=lambda s: {"value": []}, output=lambda f: {}
    )
    for a, b in ((ag.START, "node_a"), ("node_a", "node_b"), ("node_b", "sub_node"), ("sub_node", ag.END)):
        g.add_edge(a, b)
    app = compile_graph(g, checkpointer=MemoryCheckpointer())
    app.invoke({"results": []}, thread_id="1")
    app.invoke({"results": []}, thread_id="1")
    assert list(observed) == [[], ["s"]]
    before_a_2nd = next(s for s in app.get_history("1") if s.next == ("node_a",))
    app.invoke(None, thread_id="1", checkpoint_id=before_a_2nd.checkpoint_id)
    assert observed[-1] == ["s"]
    kept = [s.state["value"] for s in app.get_history("1", namespace="sub_node") if s.source == "loop"]
    assert kept == [["s", "s"], ["s", "s"], ["s"]]
