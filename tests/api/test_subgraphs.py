"""Subgraphs: a `Graph` or a `CompiledGraph` as a vertex, its run recorded in the parent's thread.

The exactness of resumption across the boundary (random graphs, SIGKILL, an
answer from another process) is in `test_subgraph_exactness.py`; this file
covers each capability and its errors, on every store where a store matters.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest
from shared import SharedDict, SharedEvent, SharedList

import actorgraph as ag
from actorgraph.checkpoint import MemoryCheckpointer, SqliteCheckpointer
from actorgraph.events import RunFinished, SuperstepCommitted, TaskFinished
from actorgraph.merge import add, append, by_key

Compile = Callable[..., ag.CompiledGraph[Any]]


def counted(ran: SharedDict, name: str, key: str | None = None) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """A vertex that counts its runs in `ran` and sets `key` (default: its name) to that count."""

    def run(state: dict[str, Any]) -> dict[str, Any]:
        return {**state, key or name: ran.add(name)}

    return run


def line(ran: SharedDict, *names: str, name: str = "inner") -> ag.Graph:
    """START -> names[0] -> ... -> END, each vertex counted in `ran`."""
    g: ag.Graph = ag.Graph(name=name)
    for vertex in names:
        g.add_vertex(vertex, counted(ran, vertex))
    for a, b in zip((ag.START, *names), (*names, ag.END), strict=True):
        g.add_edge(a, b)
    return g


def around(child: Any, name: str = "outer", merge: Any = None, **options: Any) -> ag.Graph:
    """START -> pre -> research (the subgraph) -> post -> END."""
    g: ag.Graph = ag.Graph(name=name, merge=merge)
    g.add_vertex("pre", lambda s: {**s, "pre": True})
    g.add_vertex("research", child, **options)
    g.add_vertex("post", lambda s: {**s, "post": True})
    g.add_edge(ag.START, "pre")
    g.add_edge("pre", "research")
    g.add_edge("research", "post")
    g.add_edge("post", ag.END)
    return g


def asking(name: str = "ask") -> Callable[[dict[str, Any]], dict[str, Any]]:
    def ask(state: dict[str, Any]) -> dict[str, Any]:
        return {**state, name: ag.interrupt(f"{name}?")}

    return ask


# -- a graph as a vertex ----------------------------------------------------------------


@pytest.mark.parametrize("compiled", [False, True], ids=["Graph", "CompiledGraph"])
def test_a_graph_or_a_compiled_graph_runs_as_a_vertex(compile_graph: Compile, compiled: bool) -> None:
    ran = SharedDict()
    inner = line(ran, "a", "b")
    child = compile_graph(inner) if compiled else inner
    app = compile_graph(around(child))
    result = app.invoke({"x": 1})
    assert result.state == {"x": 1, "pre": True, "a": 1, "b": 1, "post": True}
    assert result.step == 3, "the subgraph's supersteps are its own: the parent's research is one"
    assert ran == {"a": 1, "b": 1}


def test_input_and_output_map_the_parent_state_to_the_child_and_an_update_back(
    compile_graph: Compile,
) -> None:
    inner: ag.Graph = ag.Graph(name="answerer")
    inner.add_vertex("answer", lambda s: {**s, "a": s["q"].upper(), "notes": ["looked it up"]})
    inner.add_edge(ag.START, "answer")
    inner.add_edge("answer", ag.END)
    outer = around(
        inner,
        input=lambda parent: {"q": parent["question"]},
        output=lambda final: {"answer": final["a"], "notes": final["notes"]},
        merge=by_key({"notes": append}),
    )
    result = compile_graph(outer).invoke({"question": "why", "notes": ["asked"]})
    assert result.state == {
        "question": "why",
        "notes": ["asked", "looked it up"],
        "pre": True,
        "answer": "WHY",
        "post": True,
    }, "the output is an update of the parent's state, through its reducers"


def test_in_an_update_graph_a_subgraph_returns_its_final_state_counted_once(compile_graph: Compile) -> None:
    """The child's final state holds the parent's list: returned as an update it would double."""
    inner: ag.Graph = ag.Graph(name="inner", merge=by_key({"log": append}), returns="update")
    inner.add_vertex("a", lambda s: {"log": ["a"]})
    inner.add_edge(ag.START, "a")
    inner.add_edge("a", ag.END)
    outer: ag.Graph = ag.Graph(name="outer", merge=by_key({"log": append}), returns="update")
    outer.add_vertex("first", lambda s: {"log": ["first"]})
    outer.add_vertex("sub", inner)
    outer.add_edge(ag.START, "first")
    outer.add_edge("first", "sub")
    outer.add_edge("sub", ag.END)
    assert compile_graph(outer).invoke({"log": []}).state == {"log": ["first", "a"]}


def test_parallel_subgraph_tasks_merge_like_any_branches(compile_graph: Compile) -> None:
    inner: ag.Graph = ag.Graph(name="inner", merge=by_key({"hits": add}))
    inner.add_vertex("hit", lambda s: {**s, "hits": s["hits"] + 1})
    inner.add_edge(ag.START, "hit")
    inner.add_edge("hit", ag.END)
    outer: ag.Graph = ag.Graph(name="outer", merge=by_key({"hits": add}))
    outer.add_vertex("fan", lambda s: s)
    outer.add_conditional_edges("fan", lambda s: [ag.Send("sub", dict(s)) for _ in range(6)], ["sub"])
    outer.add_vertex("sub", inner)
    outer.add_edge(ag.START, "fan")
    outer.add_edge("sub", ag.END)
    assert compile_graph(outer).invoke({"hits": 10}).state == {"hits": 16}


# -- the child's run in the parent's thread ----------------------------------------------


def test_the_child_run_is_kept_in_the_parents_thread_under_its_namespace(
    compile_graph: Compile, store: Any
) -> None:
    ran = SharedDict()
    app = compile_graph(around(line(ran, "a", "b")), checkpointer=store)
    app.invoke({}, thread_id="t")
    app.invoke({}, thread_id="u")
    assert sorted(t.thread_id for t in store.threads()) == ["t", "u"], "subgraph threads are not listed"
    first = app.get_state("t", app.get_history("t")[-2].checkpoint_id, subgraphs=True)
    assert first.next == ("research",)
    ((namespace, child),) = first.subgraphs.items()
    assert namespace.startswith("research@2~")
    assert child.thread_id == f"t|{namespace}"
    assert (child.status, child.step, child.state) == ("done", 2, {"pre": True, "a": 1, "b": 1})
    history = app.get_history("t", namespace=namespace)
    assert [s.step for s in history] == [2, 1, 0]
    assert app.get_state("t", namespace=namespace).state == child.state
    assert app.get_state("t", subgraphs=True).subgraphs == {}, "nothing runs after the last checkpoint"
    store.delete_thread("t")
    assert store.get(f"t|{namespace}") is None, "deleting a thread deletes its subgraphs' threads"
    assert [t.thread_id for t in store.threads()] == ["u"]


def test_an_unknown_namespace_is_refused_naming_the_ones_there_are(compile_graph: Compile) -> None:
    app = compile_graph(around(line(SharedDict(), "a")), checkpointer=MemoryCheckpointer())
    app.invoke({}, thread_id="t")
    (namespace,) = app.get_state("t", app.get_history("t")[-2].checkpoint_id, subgraphs=True).subgraphs
    with pytest.raises(
        ag.ThreadNotFoundError, match=rf"no subgraph run 'research@9~x'; its subgraph runs: {namespace}"
    ):
        app.get_history("t", namespace="research@9~x")
    app.invoke({}, thread_id="early", interrupt_before="research")
    with pytest.raises(ag.ThreadNotFoundError, match="its subgraph runs: none"):
        app.get_history("early", namespace=namespace)


def test_a_thread_id_with_the_namespace_separator_is_refused(compile_graph: Compile) -> None:
    app = compile_graph(line(SharedDict(), "a"), checkpointer=MemoryCheckpointer())
    with pytest.raises(ag.ConfigError, match=r"thread_id 'a\|b' contains '\|'"):
        app.invoke({}, thread_id="a|b")


# -- interrupts across the boundary ------------------------------------------------------


def test_an_interrupt_in_the_child_pauses_the_parent_and_an_answer_reaches_it(
    compile_graph: Compile, store: Any
) -> None:
    ran = SharedDict()
    inner: ag.Graph = ag.Graph(name="approval")
    inner.add_vertex("prep", counted(ran, "prep"))
    inner.add_vertex("ask", asking())
    inner.add_edge(ag.START, "prep")
    inner.add_edge("prep", "ask")
    inner.add_edge("ask", ag.END)
    app = compile_graph(around(inner), checkpointer=store)
    paused = app.invoke({}, thread_id="t")
    assert paused.status == "interrupted"
    ((interrupt),) = paused.interrupts
    assert (interrupt.vertex, interrupt.value, interrupt.task_id) == ("research/ask", "ask?", "research")
    snap = app.get_state("t", subgraphs=True)
    assert (snap.status, snap.next, snap.interrupts) == ("interrupted", ("research",), paused.interrupts)
    assert snap.superstep.results["research"].status == "interrupt"
    ((child),) = snap.subgraphs.values()
    assert (child.status, child.next, child.state) == ("interrupted", ("ask",), {"pre": True, "prep": 1})
    assert [i.vertex for i in child.interrupts] == ["ask"]
    assert [t.thread_id for t in store.threads(status="interrupted")] == ["t"]
    done = app.invoke(ag.Command(resume="yes"), thread_id="t")
    assert done.state == {"pre": True, "prep": 1, "ask": "yes", "post": True}
    assert ran == {"prep": 1}, "the child continued where it paused"
    assert store.threads(status="interrupted") == []


def test_interrupts_of_several_child_runs_are_answered_by_id(compile_graph: Compile) -> None:
    inner: ag.Graph = ag.Graph(name="ask-one", merge=by_key({"answers": append}))
    inner.add_vertex("ask", lambda s: {**s, "answers": [*s["answers"], ag.interrupt(s["who"])]})
    inner.add_edge(ag.START, "ask")
    inner.add_edge("ask", ag.END)
    outer: ag.Graph = ag.Graph(name="ask-all", merge=by_key({"answers": append, "who": lambda a, b: a}))
    outer.add_vertex("fan", lambda s: s)
    outer.add_conditional_edges(
        "fan", lambda s: [ag.Send("sub", {**s, "who": who}) for who in ("ann", "bob")], ["sub"]
    )
    outer.add_vertex("sub", inner)
    outer.add_edge(ag.START, "fan")
    outer.add_edge("sub", ag.END)
    app = compile_graph(outer, checkpointer=MemoryCheckpointer())
    paused = app.invoke({"answers": [], "who": ""}, thread_id="t")
    asked = {i.value: i for i in paused.interrupts}
    assert sorted(asked) == ["ann", "bob"]
    assert {i.vertex for i in paused.interrupts} == {"sub/ask"}
    with pytest.raises(ag.ResumeError, match="2 interrupts are pending"):
        app.invoke(ag.Command(resume="x"), thread_id="t")
    half = app.invoke(ag.Command(resume={asked["bob"].id: "B"}), thread_id="t")
    assert [i.value for i in half.interrupts] == ["ann"]
    done = app.invoke(ag.Command(resume={asked["ann"].id: "A"}), thread_id="t")
    assert sorted(done.state["answers"]) == ["A", "B"]


def test_breakpoints_name_inner_vertices_by_path(compile_graph: Compile, store: Any) -> None:
    ran = SharedDict()
    app = compile_graph(
        around(line(ran, "fetch", "write")),
        checkpointer=store,
        interrupt_before=["research/write"],
        interrupt_after=["research/fetch"],
    )
    after = app.invoke({}, thread_id="t")
    assert [(i.vertex, i.kind) for i in after.interrupts] == [("research/fetch", "after")]
    before = app.invoke(None, thread_id="t")
    assert [(i.vertex, i.kind) for i in before.interrupts] == [("research/write", "before")]
    assert ran == {"fetch": 1}
    done = app.invoke(ag.Command(resume=None), thread_id="t")
    assert done.status == "done"
    assert ran == {"fetch": 1, "write": 1}


def test_a_compiled_subgraphs_own_breakpoints_hold_and_star_paths_cover_a_subgraph(
    compile_graph: Compile,
) -> None:
    ran = SharedDict()
    child = compile_graph(line(ran, "fetch", "write"), interrupt_before="write")
    app = compile_graph(around(child), checkpointer=MemoryCheckpointer())
    assert [i.vertex for i in app.invoke({}, thread_id="t").interrupts] == ["research/write"]
    every = compile_graph(around(line(ran, "fetch", "write")), checkpointer=MemoryCheckpointer())
    paused = every.invoke({}, thread_id="t", interrupt_before="research/*")
    assert [i.vertex for i in paused.interrupts] == ["research/fetch"]


def test_breakpoint_paths_are_checked(compile_graph: Compile) -> None:
    outer = around(line(SharedDict(), "fetch"))
    with pytest.raises(ag.ConfigError, match=r"unknown vertex 'research/nope' \(vertices of research: fetch"):
        outer.compile(interrupt_before=["research/nope"])
    with pytest.raises(ag.ConfigError, match="'pre' is not a subgraph vertex"):
        outer.compile(interrupt_after=["pre/x"])
    app = compile_graph(outer, checkpointer=MemoryCheckpointer())
    with pytest.raises(ag.ConfigError, match="research/nope"):
        app.invoke({}, thread_id="t", interrupt_before="research/nope")


# -- errors across the boundary -----------------------------------------------------------


def flaky(ran: SharedDict, name: str, failures: int) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """A vertex that raises ConnectionError on its first `failures` runs (counted in `ran`)."""

    def run(state: dict[str, Any]) -> dict[str, Any]:
        count = ran.add(name)
        if count <= failures:
            msg = f"{name} is down"
            raise ConnectionError(msg)
        return {**state, name: count}

    return run


def flaky_line(ran: SharedDict, failures: int) -> ag.Graph:
    g: ag.Graph = ag.Graph(name="inner")
    g.add_vertex("plan", counted(ran, "plan"))
    g.add_vertex("fetch", flaky(ran, "fetch", failures))
    g.add_vertex("write", counted(ran, "write"))
    g.add_edge(ag.START, "plan")
    g.add_edge("plan", "fetch")
    g.add_edge("fetch", "write")
    g.add_edge("write", ag.END)
    return g


def test_an_inner_failure_names_its_path_and_invoke_none_reruns_only_the_failed_task(
    compile_graph: Compile, store: Any
) -> None:
    ran = SharedDict()
    app = compile_graph(around(flaky_line(ran, 1)), checkpointer=store)
    with pytest.raises(ag.VertexError) as raised:
        app.invoke({}, thread_id="t")
    error = raised.value
    assert error.vertex == "research/fetch"
    assert isinstance(error.__cause__, ConnectionError)
    assert "research/fetch" in str(error)
    snap = app.get_state("t", subgraphs=True)
    assert snap.status == "error"
    assert snap.superstep.results["research"].error.type == "actorgraph.VertexError"
    assert [c.status for c in snap.subgraphs.values()] == ["error"]
    assert [t.thread_id for t in store.threads(status="error")] == ["t"]
    done = app.invoke(None, thread_id="t")
    assert done.state == {"pre": True, "plan": 1, "fetch": 2, "write": 1, "post": True}
    assert ran == {"plan": 1, "fetch": 2, "write": 1}


def test_retry_on_the_subgraph_vertex_retries_by_the_inner_cause_and_keeps_the_childs_progress(
    compile_graph: Compile, store: Any
) -> None:
    ran = SharedDict()
    policy = ag.RetryPolicy(max_attempts=3, initial_interval=0.001, retry_on=ConnectionError)
    app = compile_graph(around(flaky_line(ran, 2), retry=policy), checkpointer=store)
    events: list[Any] = []
    result = app.invoke({}, thread_id="t", listeners=[events.append])
    assert result.state["fetch"] == 3
    assert ran == {"plan": 1, "fetch": 3, "write": 1}, "a retry continues the child's thread"
    retried = [e for e in events if type(e).__name__ == "RetryScheduled" and not e.namespace]
    assert [e.vertex for e in retried] == ["research", "research"]


def test_retry_of_a_subgraph_vertex_without_a_checkpointer_runs_the_child_again(
    compile_graph: Compile,
) -> None:
    ran = SharedDict()
    app = compile_graph(around(flaky_line(ran, 1), retry=ag.RetryPolicy(initial_interval=0.001)))
    assert app.invoke({}).state["fetch"] == 2
    assert ran == {"plan": 2, "fetch": 2, "write": 1}, "the default retry_on sees the cause"


def test_on_error_of_the_subgraph_vertex_handles_the_inner_failure(compile_graph: Compile) -> None:
    seen = SharedList()  # the type and vertex of each error: a VertexError cannot be unpickled

    def handler(state: dict[str, Any], error: BaseException) -> dict[str, Any]:
        seen.append((type(error), getattr(error, "vertex", None)))
        return {**state, "fallback": True}

    app = compile_graph(around(flaky_line(SharedDict(), 5), on_error=handler))
    assert app.invoke({}).state == {"pre": True, "fallback": True, "post": True}
    ((kind, vertex),) = seen
    assert issubclass(kind, ag.VertexError)
    assert vertex == "research/fetch"


@pytest.mark.slow
def test_a_subgraph_vertex_timeout_cancels_its_child(compile_graph: Compile) -> None:
    release = SharedEvent()
    started = SharedEvent()

    def slow(state: dict[str, Any]) -> dict[str, Any]:
        started.set()
        release.wait(10)
        return state

    inner: ag.Graph = ag.Graph(name="slow")
    inner.add_vertex("wait", slow)
    inner.add_vertex("after", lambda s: {**s, "after": True})
    inner.add_edge(ag.START, "wait")
    inner.add_edge("wait", "after")
    inner.add_edge("after", ag.END)
    app = compile_graph(around(inner, timeout=0.2), checkpointer=MemoryCheckpointer())
    events: list[Any] = []
    try:
        with pytest.raises(ag.VertexError) as raised:
            app.invoke({}, thread_id="t", listeners=[events.append])
        assert raised.value.vertex == "research"
        assert raised.value.error_type == "actorgraph.VertexTimeoutError"
        assert started.is_set()
    finally:
        release.set()
    time.sleep(0.1)
    assert not [
        e for e in events if isinstance(e, TaskFinished) and e.namespace and e.result.vertex == "after"
    ]


# -- handoffs: Command(graph=PARENT) --------------------------------------------------------


def agent_team(name: str, other: str) -> ag.Graph:
    """An agent subgraph: think, then hand the turn to `other` (or to finish after four turns)."""

    def act(state: dict[str, Any]) -> ag.Command:
        turns = [*state["turns"], name]
        target = "finish" if len(turns) >= 4 else other
        return ag.Command(update={"turns": turns}, goto=target, graph=ag.PARENT)

    g: ag.Graph = ag.Graph(name=name)
    g.add_vertex("think", lambda s: {**s, "thought": name})
    g.add_vertex("act", act)
    g.add_edge(ag.START, "think")
    g.add_edge("think", "act")
    g.add_edge("act", ag.END)
    return g


def supervisor() -> ag.Graph:
    g: ag.Graph = ag.Graph(name="supervisor", returns="update")
    g.add_vertex("alice", agent_team("alice", "bob"), destinations=("bob", "finish"))
    g.add_vertex("bob", agent_team("bob", "alice"), destinations=("alice", "finish"))
    g.add_vertex("finish", lambda s: {"done": True})
    g.add_edge(ag.START, "alice")
    g.add_edge("finish", ag.END)
    return g


def test_command_graph_parent_routes_in_the_parent(compile_graph: Compile, store: Any) -> None:
    app = compile_graph(supervisor(), checkpointer=store)
    result = app.invoke({"turns": []}, thread_id="t")
    assert result.state == {"turns": ["alice", "bob", "alice", "bob"], "done": True}
    assert "thought" not in result.state, "the parent receives the handoff's update alone"
    vertices = [s.next for s in reversed(app.get_history("t"))]
    assert vertices[:5] == [("alice",), ("bob",), ("alice",), ("bob",), ("finish",)]


def test_command_graph_parent_errors(compile_graph: Compile) -> None:
    top: ag.Graph = ag.Graph(name="top")
    top.add_vertex("a", lambda s: ag.Command(goto="a", graph=ag.PARENT))
    top.add_edge(ag.START, "a")
    top.add_edge("a", ag.END)
    with pytest.raises(ag.InvalidUpdateError, match="its graph is not a subgraph: there is no parent"):
        compile_graph(top).invoke({})
    inner: ag.Graph = ag.Graph(name="inner")
    inner.add_vertex("a", lambda s: ag.Command(goto="nowhere", graph=ag.PARENT))
    inner.add_edge(ag.START, "a")
    inner.add_edge("a", ag.END)
    with pytest.raises(ag.RoutingError, match="'nowhere', which is not a vertex of the graph"):
        compile_graph(around(inner)).invoke({})
    named: ag.Graph = ag.Graph(name="named")
    named.add_vertex("a", lambda s: ag.Command(goto="post", graph="elsewhere"))
    named.add_edge(ag.START, "a")
    named.add_edge("a", ag.END)
    with pytest.raises((ag.InvalidUpdateError, ag.VertexError), match="the only graph to name is PARENT"):
        compile_graph(around(named)).invoke({})


# -- streaming and events ---------------------------------------------------------------------


def one_vertex() -> ag.Graph:
    g: ag.Graph = ag.Graph(name="one")
    g.add_vertex("a", lambda s: {**s, "a": 1})
    g.add_edge(ag.START, "a")
    g.add_edge("a", ag.END)
    return g


def test_stream_with_subgraphs_tags_items_with_their_namespace(compile_graph: Compile) -> None:
    app = compile_graph(around(one_vertex()))
    plain = list(app.stream({}, mode="updates"))
    assert plain == [
        {"pre": {"pre": True}},
        {"research": {"pre": True, "a": 1}},
        {"post": {"pre": True, "a": 1, "post": True}},
    ]
    tagged = list(app.stream({}, mode="updates", subgraphs=True))
    (namespace,) = {ns for ns, _ in tagged if ns}
    assert namespace[0].startswith("research@2~")
    assert tagged == [
        ((), {"pre": {"pre": True}}),
        (namespace, {"a": {"pre": True, "a": 1}}),
        ((), {"research": {"pre": True, "a": 1}}),
        ((), {"post": {"pre": True, "a": 1, "post": True}}),
    ]
    modes = list(app.stream({}, mode=["values", "updates"], subgraphs=True))
    assert (namespace, "values", {"pre": True, "a": 1}) in modes
    assert all(len(item) == 3 for item in modes)


def test_events_of_nested_runs_carry_the_namespace_path(compile_graph: Compile) -> None:
    mid = around(line(SharedDict(), "a"), name="mid")
    app = compile_graph(around(mid, name="top"))
    events: list[Any] = []
    app.invoke({}, listeners=[events.append])
    finished = [e for e in events if isinstance(e, RunFinished)]
    depths = sorted(len(e.namespace.split("|")) if e.namespace else 0 for e in finished)
    assert depths == [0, 1, 2]
    deepest = next(e for e in finished if e.namespace.count("|") == 1)
    outer_ns, inner_ns = deepest.namespace.split("|")
    assert outer_ns.startswith("research@2~") and inner_ns.startswith("research@2~")
    assert [
        e.step for e in events if isinstance(e, SuperstepCommitted) and e.namespace == deepest.namespace
    ] == [0, 1]


def test_astream_with_subgraphs(compile_graph: Compile) -> None:
    app = compile_graph(around(one_vertex()))

    async def collect() -> list[Any]:
        return [item async for item in app.astream({}, mode="updates", subgraphs=True)]

    items = asyncio.run(collect())
    assert [ns for ns, _ in items].count(()) == 3
    assert len(items) == 4


# -- the actor model: bounded pools, no deadlock, no thread per waiting child ------------------


class Gauge:
    """Counts how many calls are inside a section at once, and the most there ever were.

    Shared by the processes the calls run in: `inside` is the count now, `counts`
    every count a call saw as it entered.
    """

    def __init__(self) -> None:
        self.inside = SharedDict({"now": 0})
        self.counts = SharedList()

    @property
    def most(self) -> int:
        """The most calls that were ever inside at once."""
        return max(self.counts, default=0)

    def vertex(self, pause: float = 0.0) -> Callable[[dict[str, Any]], dict[str, Any]]:
        def run(state: dict[str, Any]) -> dict[str, Any]:
            self.counts.append(self.inside.add("now"))
            time.sleep(pause)
            self.inside.add("now", -1)
            return {**state, "hits": state["hits"] + 1}

        return run


def until(condition: Callable[[], bool], timeout: float) -> bool:
    """Whether `condition` holds within `timeout` seconds (polled)."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.005)
    return True


def fanning(gauge: Gauge, width: int) -> ag.Graph:
    """A child that fans out `width` Sends to a worker, and counts them with `hits`."""
    g: ag.Graph = ag.Graph(name="fanning", merge=by_key({"hits": add}))
    g.add_vertex("split", lambda s: s)
    g.add_conditional_edges("split", lambda s: [ag.Send("work", dict(s)) for _ in range(width)], ["work"])
    g.add_vertex("work", gauge.vertex(0.002))
    g.add_edge(ag.START, "split")
    g.add_edge("work", ag.END)
    return g


def test_a_subgraph_vertex_with_concurrency_one_runs_children_that_fan_out_one_at_a_time(
    compile_graph: Compile,
) -> None:
    inner_gauge, outer_gauge = Gauge(), Gauge()
    child = fanning(inner_gauge, 8)
    outer: ag.Graph = ag.Graph(name="outer", merge=by_key({"hits": add}))
    outer.add_vertex("fan", lambda s: s)
    outer.add_conditional_edges("fan", lambda s: [ag.Send("sub", {"hits": 0}) for _ in range(5)], ["sub"])
    outer.add_vertex("sub", child, concurrency=1, input=lambda s: outer_gauge.vertex()(s) and s)
    outer.add_edge(ag.START, "fan")
    outer.add_edge("sub", ag.END)
    app = compile_graph(outer, checkpointer=MemoryCheckpointer())
    assert app.invoke({"hits": 0}, thread_id="t", timeout=30).state == {"hits": 40}
    assert inner_gauge.most <= 8
    assert outer_gauge.most == 1


def test_a_child_that_contains_the_same_compiled_graph_twice(compile_graph: Compile) -> None:
    gauge = Gauge()
    shared = compile_graph(fanning(gauge, 3))
    middle: ag.Graph = ag.Graph(name="middle", merge=by_key({"hits": add}))
    middle.add_vertex("one", shared)
    middle.add_vertex("two", shared)
    middle.add_edge(ag.START, "one")
    middle.add_edge(ag.START, "two")
    middle.add_edge("one", ag.END)
    middle.add_edge("two", ag.END)
    top: ag.Graph = ag.Graph(name="top", merge=by_key({"hits": add}))
    top.add_vertex("middle", middle, concurrency=1)
    top.add_edge(ag.START, "middle")
    top.add_edge("middle", ag.END)
    app = compile_graph(top, checkpointer=MemoryCheckpointer())
    assert app.invoke({"hits": 0}, thread_id="t", timeout=30).state == {"hits": 6}


def test_fifty_parent_runs_wait_for_their_children_without_a_thread_each(compile_graph: Compile) -> None:
    """Fifty children wait at once for a vertex bounded to two actors: threads stay bounded."""
    release = SharedEvent()
    waiting = SharedDict({"n": 0})

    def gate(state: dict[str, Any]) -> dict[str, Any]:
        waiting.add("n")
        release.wait(30)
        return {**state, "hits": state["hits"] + 1}

    inner: ag.Graph = ag.Graph(name="gated")
    inner.add_vertex("gate", gate, concurrency=2)
    inner.add_edge(ag.START, "gate")
    inner.add_edge("gate", ag.END)
    outer: ag.Graph = ag.Graph(name="outer")
    outer.add_vertex("sub", inner, concurrency=64)
    outer.add_edge(ag.START, "sub")
    outer.add_edge("sub", ag.END)
    app = compile_graph(outer, checkpointer=MemoryCheckpointer())
    before = threading.active_count()
    handles = [app.start({"hits": 0}, thread_id=f"t{i}") for i in range(50)]
    try:
        assert until(lambda: waiting["n"] >= 2, timeout=20), "two children never reached the gate"
        during = threading.active_count() - before
    finally:
        release.set()
    assert [h.result(30).state for h in handles] == [{"hits": 1}] * 50
    # 4 coordinators, 2 actors of the gate, a timer at most: nothing per waiting child
    assert during <= 7, f"{during} threads for 50 waiting children"


def test_cancelling_the_parent_cancels_its_child(compile_graph: Compile) -> None:
    release, started = SharedEvent(), SharedEvent()
    ran = SharedDict()

    def slow(state: dict[str, Any]) -> dict[str, Any]:
        started.set()
        release.wait(10)
        return state

    inner: ag.Graph = ag.Graph(name="slow")
    inner.add_vertex("wait", slow)
    inner.add_vertex("after", counted(ran, "after"))
    inner.add_edge(ag.START, "wait")
    inner.add_edge("wait", "after")
    inner.add_edge("after", ag.END)
    store = MemoryCheckpointer()
    app = compile_graph(around(inner), checkpointer=store)
    handle = app.start({}, thread_id="t")
    assert started.wait(10)
    handle.cancel()
    release.set()
    with pytest.raises(ag.RunCancelledError):
        handle.result(10)
    time.sleep(0.1)
    assert ran == {}, "nothing of the child ran after the cancel"
    child = next(iter(app.get_state("t", subgraphs=True).subgraphs.values()))
    assert child.step == 0, "the child committed nothing after the cancel"


# -- bad input -----------------------------------------------------------------------------------


def test_a_graph_that_contains_itself_is_refused() -> None:
    loop: ag.Graph = ag.Graph(name="loop")
    loop.add_vertex("again", loop)
    loop.add_edge(ag.START, "again")
    loop.add_edge("again", ag.END)
    with pytest.raises(
        ag.GraphValidationError, match=r"runs graph 'loop', which contains it \(loop -> loop\)"
    ):
        loop.compile()
    a: ag.Graph = ag.Graph(name="a")
    b: ag.Graph = ag.Graph(name="b")
    a.add_vertex("to_b", b)
    a.add_edge(ag.START, "to_b")
    a.add_edge("to_b", ag.END)
    b.add_vertex("to_a", a)
    b.add_edge(ag.START, "to_a")
    b.add_edge("to_a", ag.END)
    with pytest.raises(ag.GraphValidationError, match=r"a -> b -> a"):
        a.compile()


def test_a_subgraph_compiled_with_another_checkpointer_is_refused(
    compile_graph: Compile, tmp_path: Any
) -> None:
    own = SqliteCheckpointer(tmp_path / "own.db")
    try:
        child = compile_graph(line(SharedDict(), "a"), checkpointer=own)
        with pytest.raises(
            ag.GraphValidationError, match="'research' was compiled with a checkpointer of its own"
        ):
            around(child).compile(checkpointer=MemoryCheckpointer())
        with pytest.raises(ag.GraphValidationError, match=r"not its parent's \(none\)"):
            around(child).compile()
        deep = around(around(child, name="mid"), name="top")
        with pytest.raises(ag.GraphValidationError, match="'research/research'"):
            deep.compile(checkpointer=MemoryCheckpointer())
        same = compile_graph(around(child), checkpointer=own)
        assert same.invoke({}, thread_id="t").state["a"] == 1
    finally:
        own.close()


def test_subgraph_vertex_names_cannot_hold_path_characters() -> None:
    g: ag.Graph = ag.Graph()
    for bad in ("a/b", "a|b", "a:b"):
        with pytest.raises(ag.GraphValidationError):
            g.add_vertex(bad, lambda s: s)


# -- pictures ----------------------------------------------------------------------------------


def test_pictures_draw_subgraphs_as_clusters_coloured_by_their_runs(compile_graph: Compile) -> None:
    inner: ag.Graph = ag.Graph(name="approval")
    inner.add_vertex("prep", lambda s: s)
    inner.add_vertex("ask", asking())
    inner.add_edge(ag.START, "prep")
    inner.add_edge("prep", "ask")
    inner.add_edge("ask", ag.END)
    app = compile_graph(around(inner), checkpointer=MemoryCheckpointer())
    app.invoke({}, thread_id="t")
    mermaid = app.draw_mermaid("t")
    assert '    subgraph v1 ["research"]' in mermaid
    assert "        v1_start --> v1_v0" in mermaid
    assert "    v0 --> v1_start" in mermaid
    assert "    v1_end --> v2" in mermaid
    assert "    class v1_v0 ok" in mermaid
    assert "    class v1_v1 interrupt" in mermaid
    assert "    style v1 stroke:#ff8f00" in mermaid
    dot = app.draw_dot("t")
    assert '    subgraph "cluster_v1" {' in dot
    assert '        "v1_v1" [label="ask", shape=box, style="filled", fillcolor="#ffe8b3"' in dot
    with pytest.raises(ag.ConfigError, match="unknown vertex 'research/nope'"):
        ag.draw.to_mermaid(app.spec, {"research/nope": "ok"})


@pytest.mark.needs_dot
def test_a_picture_with_subgraphs_renders(compile_graph: Compile, tmp_path: Any) -> None:
    app = compile_graph(supervisor())
    out = app.draw_png(tmp_path / "supervisor.png")
    assert out.read_bytes().startswith(b"\x89PNG")


def test_a_handoff_the_parent_never_recorded_is_found_again_on_resume(
    compile_graph: Compile, store: Any
) -> None:
    """The parent stops right after the child handed off: resumed, it takes the stored handoff."""
    thoughts = SharedDict()
    ready = SharedEvent()

    def team(name: str, other: str) -> ag.Graph:
        def think(state: dict[str, Any]) -> dict[str, Any]:
            ready.wait(10)
            thoughts.add(name)
            return state

        g: ag.Graph = ag.Graph(name=name)
        g.add_vertex("think", think)
        g.add_vertex(
            "act", lambda s: ag.Command(update={"turns": [*s["turns"], name]}, goto=other, graph=ag.PARENT)
        )
        g.add_edge(ag.START, "think")
        g.add_edge("think", "act")
        g.add_edge("act", ag.END)
        return g

    sup: ag.Graph = ag.Graph(name="supervisor", returns="update")
    sup.add_vertex("alice", team("alice", "bob"), destinations=("bob",))
    sup.add_vertex("bob", lambda s: {"turns": [*s["turns"], "bob"]})
    sup.add_edge(ag.START, "alice")
    sup.add_edge("bob", ag.END)
    app = compile_graph(sup, checkpointer=store)
    holder: list[ag.RunHandle[Any]] = []

    def stop_when_the_child_ends(event: Any) -> None:
        if isinstance(event, RunFinished) and event.namespace and holder:
            holder.pop().cancel()

    holder.append(app.start({"turns": []}, thread_id="t", listeners=[stop_when_the_child_ends]))
    handle = holder[0]
    ready.set()
    with pytest.raises(ag.RunCancelledError):
        handle.result(10)
    snap = app.get_state("t", subgraphs=True)
    assert snap.next == ("alice",)
    assert "alice" not in snap.superstep.results, "the parent never recorded the handoff"
    assert [c.status for c in snap.subgraphs.values()] == ["done"]
    result = app.invoke(None, thread_id="t")
    assert result.state == {"turns": ["alice", "bob"]}
    assert thoughts == {"alice": 1}, "the child's finished work was not done again"


def test_an_engine_error_inside_a_subgraph_says_which_subgraph_run_raised_it(compile_graph: Compile) -> None:
    inner: ag.Graph = ag.Graph(name="router")
    inner.add_vertex("a", lambda s: s)
    inner.add_edge(ag.START, "a")
    inner.add_conditional_edges("a", lambda s: None, ["a", ag.END])
    mid = around(inner, name="mid")
    with pytest.raises(ag.RoutingError) as raised:
        compile_graph(around(mid, name="top")).invoke({})
    assert raised.value.__notes__ == [
        "(in the run of subgraph vertex 'research', task 'research')",
        "(in the run of subgraph vertex 'research', task 'research')",
    ]
