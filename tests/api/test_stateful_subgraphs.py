"""Stateful subgraphs (`compile(checkpointer=True)`) and a subgraph's state changed by its namespace.

A stateful subgraph keeps one state per thread of its parent, under its vertex's
name: each call continues it (the call's input applied as an update), turn
after turn, and a call stopped by an interrupt, an error or a crash continues
its own run. `update_state(..., namespace=...)` corrects a subgraph's run, a
waiting one or a stateful one between turns. LangGraph's own tests of both are
ported in `test_langgraph_stateful_subgraphs.py`; the crash test is
`tests/actors/test_stateful_subgraph_crash.py`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from shared import SharedDict, SharedList

import actorgraph as ag
from actorgraph.checkpoint import MemoryCheckpointer
from actorgraph.func import entrypoint
from actorgraph.merge import append, by_key

Compile = Callable[..., ag.CompiledGraph[Any]]


def chat(ran: SharedList | None = None, *, pause: bool = False) -> ag.Graph:
    """An agent that answers the last message of its log (asking first, with `pause`)."""

    def reply(state: dict[str, Any]) -> dict[str, Any]:
        heard = state["log"][-1]
        if pause:
            heard = f"{heard}+{ag.interrupt(f'answer {heard}?')}"
        if ran is not None:
            ran.append(heard)
        return {"log": [f"re:{heard}"]}

    g: ag.Graph = ag.Graph(name="chat", merge=by_key({"log": append}), returns="update")
    g.add_vertex("reply", reply)
    g.add_edge(ag.START, "reply")
    g.add_edge("reply", ag.END)
    return g


def host(agent: Any, **options: Any) -> ag.Graph:
    """START -> agent -> END; the agent hears the turn's question and its whole log comes back."""
    g: ag.Graph = ag.Graph(name="host")
    g.add_vertex(
        "agent",
        agent,
        input=lambda s: {"log": [s["q"]]},
        output=lambda final: {"log": final["log"]},
        **options,
    )
    g.add_edge(ag.START, "agent")
    g.add_edge("agent", ag.END)
    return g


def test_a_stateful_subgraph_remembers_its_conversation_turn_after_turn(
    compile_graph: Compile, store: Any
) -> None:
    app = compile_graph(host(chat().compile(checkpointer=True)), checkpointer=store)
    assert app.invoke({"q": "hi"}, thread_id="t").state["log"] == ["hi", "re:hi"]
    assert app.invoke({"q": "again"}, thread_id="t").state["log"] == ["hi", "re:hi", "again", "re:again"]
    assert app.invoke({"q": "new"}, thread_id="other").state["log"] == ["new", "re:new"]  # per thread
    assert app.get_state("t", namespace="agent").state == {"log": ["hi", "re:hi", "again", "re:again"]}
    turns = [(s.source, s.step) for s in app.get_history("t", namespace="agent")]
    assert turns == [("loop", 1), ("input", 0), ("loop", 1), ("input", 0)]
    assert {t.thread_id for t in store.threads()} == {"other", "t"}  # the subgraph's thread is the parent's


@pytest.mark.parametrize("checkpointer", [None, False])
def test_none_and_false_run_the_subgraph_afresh_for_each_task(
    compile_graph: Compile, store: Any, checkpointer: Any
) -> None:
    app = compile_graph(host(chat().compile(checkpointer=checkpointer)), checkpointer=store)
    app.invoke({"q": "hi"}, thread_id="t")
    assert app.invoke({"q": "again"}, thread_id="t").state["log"] == ["again", "re:again"]


def test_a_stateful_vertex_in_a_loop_continues_its_state_from_superstep_to_superstep(
    compile_graph: Compile,
) -> None:
    def counter() -> ag.Graph:
        g: ag.Graph = ag.Graph(name="counter", returns="update")
        g.add_vertex("count", lambda s: {"n": s.get("n", 0) + 1})
        g.add_edge(ag.START, "count")
        g.add_edge("count", ag.END)
        return g

    g: ag.Graph = ag.Graph(name="loop")
    g.add_vertex(
        "tick", counter().compile(checkpointer=True), input=lambda s: {}, output=lambda f: {"n": f["n"]}
    )
    g.add_edge(ag.START, "tick")
    g.add_conditional_edges("tick", lambda s: "tick" if s["n"] < 3 else ag.END)
    app = compile_graph(g, checkpointer=MemoryCheckpointer())
    assert app.invoke({}, thread_id="t").state == {"n": 3}
    assert app.invoke({}, thread_id="t").state == {"n": 4}  # the counter remembers: one more tick


def test_an_interrupted_stateful_subgraph_resumes_and_the_next_turn_builds_on_it(
    compile_graph: Compile, store: Any
) -> None:
    heard = SharedList()
    app = compile_graph(host(chat(heard, pause=True).compile(checkpointer=True)), checkpointer=store)
    paused = app.invoke({"q": "hi"}, thread_id="t")
    assert [(i.vertex, i.value) for i in paused.interrupts] == [("agent/reply", "answer hi?")]
    assert app.invoke(ag.Command(resume="yes"), thread_id="t").state["log"] == ["hi", "re:hi+yes"]
    app.invoke({"q": "more"}, thread_id="t")
    done = app.invoke(ag.Command(resume="sure"), thread_id="t")
    assert done.state["log"] == ["hi", "re:hi+yes", "more", "re:more+sure"]
    assert list(heard) == ["hi+yes", "more+sure"]


def test_a_retried_stateful_subgraph_continues_its_own_run_and_takes_its_input_once(
    compile_graph: Compile,
) -> None:
    tries = SharedDict()

    def flaky(state: dict[str, Any]) -> dict[str, Any]:
        if tries.add("flaky") == 1:
            raise ConnectionError("down")
        return {"log": ["fetched"]}

    inner: ag.Graph = ag.Graph(name="fetcher", merge=by_key({"log": append}), returns="update")
    for name, fn in (("note", lambda s: {"log": ["noted"]}), ("fetch", flaky)):
        inner.add_vertex(name, fn)
    for edge in ((ag.START, "note"), ("note", "fetch"), ("fetch", ag.END)):
        inner.add_edge(*edge)
    app = compile_graph(host(inner.compile(checkpointer=True)), checkpointer=MemoryCheckpointer())
    with pytest.raises(ag.VertexError, match="agent/fetch"):
        app.invoke({"q": "go"}, thread_id="t")
    assert app.invoke(None, thread_id="t").state["log"] == ["go", "noted", "fetched"]
    retried = compile_graph(
        host(inner.compile(checkpointer=True), retry=ag.RetryPolicy(initial_interval=0)),
        checkpointer=MemoryCheckpointer(),
    )
    tries["flaky"] = 0
    assert retried.invoke({"q": "go"}, thread_id="t").state["log"] == ["go", "noted", "fetched"]


def test_two_tasks_of_a_stateful_vertex_in_one_superstep_are_refused(compile_graph: Compile) -> None:
    g: ag.Graph = ag.Graph(name="fan", merge=by_key({"log": append}))
    g.add_vertex("agent", chat().compile(checkpointer=True))
    g.add_conditional_edges(
        ag.START, lambda s: [ag.Send("agent", {"log": [q]}) for q in ("a", "b")], ["agent"]
    )
    g.add_edge("agent", ag.END)
    app = compile_graph(g, checkpointer=MemoryCheckpointer())
    with pytest.raises(ag.RoutingError, match=r"stateful subgraph vertex 'agent' got 2 tasks in superstep 1"):
        app.invoke({"log": []}, thread_id="t")
    assert app.get_state("t").superstep.results["agent:1"].error.type.endswith("RoutingError")  # recorded
    g2: ag.Graph = ag.Graph(name="one", merge=by_key({"log": append}))
    g2.add_vertex("agent", chat().compile(checkpointer=True))
    g2.add_conditional_edges(ag.START, lambda s: [ag.Send("agent", {"log": ["a"]})], ["agent"])
    g2.add_edge("agent", ag.END)
    one = compile_graph(g2, checkpointer=MemoryCheckpointer())
    assert one.invoke({"log": []}, thread_id="t").state["log"] == ["a", "re:a"]  # one Send is fine


def test_a_subgraph_compiled_with_another_checkpointer_is_refused_at_the_parents_compile() -> None:
    own = MemoryCheckpointer()
    with pytest.raises(ag.GraphValidationError, match="checkpointer of its own"):
        host(chat().compile(checkpointer=own)).compile(MemoryCheckpointer())


@pytest.mark.parametrize(
    ("given", "named"),
    [
        ("runs.db", "got str"),
        (1, "got int"),
        (MemoryCheckpointer, r"got the class MemoryCheckpointer itself \(pass an instance"),
        (object(), "got object"),
    ],
)
def test_a_checkpointer_that_is_none_of_a_store_true_false_or_none_is_refused_at_compile(
    given: Any, named: str
) -> None:
    with pytest.raises(ag.ConfigError, match=f"takes a checkpointer .*True or False.*; {named}"):
        chat().compile(checkpointer=given)
    with pytest.raises(ag.ConfigError, match="takes a checkpointer"):
        entrypoint(checkpointer=given)(lambda value: value)


def test_a_stateful_graph_does_not_run_alone(compile_graph: Compile) -> None:
    app = compile_graph(chat(), checkpointer=True)
    with pytest.raises(ag.ConfigError, match="checkpointer=True, for a stateful subgraph"):
        app.invoke({"log": ["hi"]})


def test_without_a_parent_checkpointer_a_stateful_subgraph_runs_afresh(compile_graph: Compile) -> None:
    app = compile_graph(host(chat().compile(checkpointer=True)))
    app.invoke({"q": "hi"})
    assert app.invoke({"q": "again"}).state["log"] == ["again", "re:again"]


def test_get_state_with_subgraphs_names_a_stateful_run_by_its_vertex(compile_graph: Compile) -> None:
    app = compile_graph(host(chat(pause=True).compile(checkpointer=True)), checkpointer=MemoryCheckpointer())
    app.invoke({"q": "hi"}, thread_id="t")
    (namespace,) = app.get_state("t", subgraphs=True).subgraphs
    assert namespace == "agent"
    assert app.get_state("t", subgraphs=True).subgraphs["agent"].next == ("reply",)


def test_a_parent_replayed_from_before_its_stateful_subgraph_rewinds_it(compile_graph: Compile) -> None:
    """The subgraph starts from its state at the replayed checkpoint (as LangGraph's); its history is kept."""
    app = compile_graph(host(chat().compile(checkpointer=True)), checkpointer=MemoryCheckpointer())
    app.invoke({"q": "one"}, thread_id="t")
    app.invoke({"q": "two"}, thread_id="t")
    before = next(s for s in app.get_history("t") if s.next == ("agent",))
    replayed = app.invoke(None, thread_id="t", checkpoint_id=before.checkpoint_id)
    assert replayed.state["log"] == ["one", "re:one", "two", "re:two"]
    turns = [s.state["log"] for s in app.get_history("t", namespace="agent") if s.source == "loop"]
    assert turns == [replayed.state["log"], replayed.state["log"], ["one", "re:one"]]


# -- update_state by namespace ------------------------------------------------------------


def approval(**compiled: Any) -> ag.CompiledGraph[Any]:
    """review (asks) -> publish; the subgraph of the update tests."""

    def review(state: dict[str, Any]) -> dict[str, Any]:
        return {**state, "verdict": ag.interrupt(f"publish {state['draft']}?"), "reviewed": state["draft"]}

    g: ag.Graph = ag.Graph(name="approval")
    g.add_vertex("review", review)
    g.add_vertex("publish", lambda s: {**s, "published": s["draft"]})
    g.add_edge(ag.START, "review")
    g.add_edge("review", "publish")
    g.add_edge("publish", ag.END)
    return g.compile(**compiled)


def pipeline(child: Any) -> ag.Graph:
    g: ag.Graph = ag.Graph(name="pipeline")
    g.add_vertex("write", lambda s: {**s, "draft": f"{s['topic']} v1"})
    g.add_vertex("approve", child)
    g.add_edge(ag.START, "write")
    g.add_edge("write", "approve")
    g.add_edge("approve", ag.END)
    return g


@pytest.mark.parametrize("stateful", [False, True])
def test_a_waiting_childs_state_is_corrected_and_the_answer_continues_it(
    compile_graph: Compile, store: Any, stateful: bool
) -> None:
    app = compile_graph(pipeline(approval(checkpointer=stateful)), checkpointer=store)
    app.invoke({"topic": "actors"}, thread_id="t")
    parent_before = app.get_state("t")
    (namespace,) = parent_before.subgraphs or app.get_state("t", subgraphs=True).subgraphs
    new_id = app.update_state("t", {"draft": "actors v2"}, namespace=namespace)
    child = app.get_state("t", namespace=namespace)
    assert (child.checkpoint_id, child.source, child.state["draft"]) == (new_id, "update", "actors v2")
    asked = app.get_state("t").superstep.results["approve"].nested
    assert [i.id for i in child.interrupts] == [i.id for i in asked]  # still asked
    assert app.get_state("t").checkpoint_id == parent_before.checkpoint_id  # the parent is untouched
    done = app.invoke(ag.Command(resume="yes"), thread_id="t")
    assert done.state == {
        "topic": "actors",
        "draft": "actors v2",
        "verdict": "yes",
        "reviewed": "actors v2",
        "published": "actors v2",
    }


def test_a_child_stopped_at_a_breakpoint_continues_as_if_a_vertex_had_run(compile_graph: Compile) -> None:
    app = compile_graph(pipeline(approval(interrupt_before=["review"])), checkpointer=MemoryCheckpointer())
    app.invoke({"topic": "graphs"}, thread_id="t")
    (namespace,) = app.get_state("t", subgraphs=True).subgraphs
    app.update_state(
        "t", {"verdict": "by hand", "reviewed": "skipped"}, namespace=namespace, as_vertex="review"
    )
    assert app.get_state("t", namespace=namespace).next == ("publish",)
    done = app.invoke(None, thread_id="t")
    assert done.state["verdict"] == "by hand" and done.state["published"] == "graphs v1"


def test_an_update_that_would_drop_a_question_the_parent_waits_on_is_refused(compile_graph: Compile) -> None:
    app = compile_graph(pipeline(approval()), checkpointer=MemoryCheckpointer())
    app.invoke({"topic": "x"}, thread_id="t")
    (namespace,) = app.get_state("t", subgraphs=True).subgraphs
    head = app.get_state("t", namespace=namespace).checkpoint_id
    for as_vertex in ("review", ag.END):
        with pytest.raises(ag.InvalidUpdateError, match=r"would drop the question that vertex 'review'"):
            app.update_state("t", {"verdict": "by hand"}, namespace=namespace, as_vertex=as_vertex)
    assert app.get_state("t", namespace=namespace).checkpoint_id == head  # nothing written
    assert app.invoke(ag.Command(resume="yes"), thread_id="t").state["published"] == "x v1"


def test_a_stateful_subgraphs_state_is_corrected_between_turns(compile_graph: Compile, store: Any) -> None:
    app = compile_graph(host(chat().compile(checkpointer=True)), checkpointer=store)
    app.invoke({"q": "hi"}, thread_id="t")
    app.update_state("t", {"log": ["hi", "(forgotten)"]}, namespace="agent", replace=True)
    assert app.invoke({"q": "again"}, thread_id="t").state["log"] == [
        "hi",
        "(forgotten)",
        "again",
        "re:again",
    ]


def test_update_state_by_namespace_reaches_a_nested_run(compile_graph: Compile) -> None:
    middle: ag.Graph = ag.Graph(name="middle")
    middle.add_vertex("approve", approval())
    middle.add_edge(ag.START, "approve")
    middle.add_edge("approve", ag.END)
    app = compile_graph(pipeline(middle), checkpointer=MemoryCheckpointer())
    app.invoke({"topic": "nesting"}, thread_id="t")
    (outer,) = app.get_state("t", subgraphs=True).subgraphs
    (inner,) = app.get_state("t", subgraphs=True).subgraphs[outer].subgraphs
    app.update_state("t", {"draft": "fixed"}, namespace=f"{outer}|{inner}")
    assert app.invoke(ag.Command(resume="ok"), thread_id="t").state["published"] == "fixed"


def test_update_state_by_namespace_refuses_what_does_not_fit(compile_graph: Compile) -> None:
    app = compile_graph(pipeline(approval()), checkpointer=MemoryCheckpointer())
    app.invoke({"topic": "x"}, thread_id="t")
    (namespace,) = app.get_state("t", subgraphs=True).subgraphs
    head = app.get_state("t", namespace=namespace).checkpoint_id
    with pytest.raises(ag.ThreadNotFoundError, match=r"its subgraph runs: approve@2~"):
        app.update_state("t", {"draft": "y"}, namespace="approve@9~00000000")
    with pytest.raises(ag.InvalidUpdateError, match=r"no such vertex \(vertices: review, publish"):
        app.update_state("t", {"draft": "y"}, namespace=namespace, as_vertex="write")
    assert app.get_state("t", namespace=namespace).checkpoint_id == head  # nothing written
