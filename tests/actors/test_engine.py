"""Running graphs on real actors: merges, isolation, concurrency, limits, errors."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import pytest
from shared import SharedBarrier, SharedDict, SharedEvent, SharedList

import actorgraph as ag
from actorgraph.merge import add, append, by_key

Compile = Callable[..., ag.CompiledGraph]


def appender(item: str) -> Callable[[dict[str, Any]], dict[str, Any]]:
    return lambda s: {**s, "items": [*s["items"], item]}


# -- merging without loss -------------------------------------------------------


def test_parallel_increments_merge_to_their_sum(compile_graph: Compile) -> None:
    g: ag.Graph = ag.Graph(merge=by_key({"n": add}))
    g.add_vertex("plus5", lambda s: {"n": s["n"] + 5})
    g.add_vertex("plus3", lambda s: {"n": s["n"] + 3})
    for name in ("plus5", "plus3"):
        g.add_edge(ag.START, name)
        g.add_edge(name, ag.END)
    assert compile_graph(g).invoke({"n": 10}).state == {"n": 18}


def test_twenty_parallel_appends_are_kept_once_each(compile_graph: Compile) -> None:
    g: ag.Graph = ag.Graph(merge=by_key({"items": append}))
    names = [f"b{i:02d}" for i in range(20)]
    for name in names:
        g.add_vertex(name, appender(name))
        g.add_edge(ag.START, name)
        g.add_edge(name, ag.END)
    state = compile_graph(g).invoke({"items": []}).state
    assert sorted(state["items"]) == names and len(state["items"]) == 20


def unequal_branches(meet_at_join: bool) -> ag.Graph:
    """20 branches of length 1..3 that meet at a join, or at END."""
    g: ag.Graph = ag.Graph(merge=by_key({"items": append}))
    ends = []
    for i in range(20):
        chain = [f"b{i:02d}_{k}" for k in range(1 + i % 3)]
        for k, name in enumerate(chain):
            g.add_vertex(name, appender(name) if k == 0 else (lambda s: s))
            g.add_edge(ag.START if k == 0 else chain[k - 1], name)
        ends.append(chain[-1])
    if meet_at_join:
        g.add_vertex("join", appender("join"))
        g.add_edge(ends, "join")
        g.add_edge("join", ag.END)
    else:
        for name in ends:
            g.add_edge(name, ag.END)
    return g


@pytest.mark.parametrize("meet_at_join", [True, False], ids=["join", "end"])
def test_unequal_branches_keep_every_append_once(compile_graph: Compile, meet_at_join: bool) -> None:
    result = compile_graph(unequal_branches(meet_at_join)).invoke({"items": ["start"]})
    items = result.state["items"]
    expected = ["start"] + [f"b{i:02d}_0" for i in range(20)] + (["join"] if meet_at_join else [])
    assert sorted(items) == sorted(expected)
    assert len(items) == len(expected)
    assert result.step == (4 if meet_at_join else 3)


def test_fan_in_without_a_join_keeps_each_path_once(compile_graph: Compile) -> None:
    g: ag.Graph = ag.Graph(merge=by_key({"items": append}))
    g.add_vertex("a", appender("a"))
    g.add_vertex("b", appender("b"))
    g.add_vertex("b2", appender("b2"))
    g.add_vertex("c", appender("c"))
    g.add_edge(ag.START, "a")
    g.add_edge(ag.START, "b")
    g.add_edge("b", "b2")
    g.add_edge("a", "c")
    g.add_edge("b2", "c")
    g.add_edge("c", ag.END)
    items = compile_graph(g).invoke({"items": []}).state["items"]
    assert sorted(items) == ["a", "b", "b2", "c", "c"]  # c ran twice, once per arrival


def test_default_merge_keeps_changes_to_different_keys(compile_graph: Compile) -> None:
    g: ag.Graph = ag.Graph()
    g.add_vertex("left", lambda s: {**s, "left": "L"})
    g.add_vertex("right", lambda s: {**s, "right": "R"})
    g.add_vertex("join", lambda s: {**s, "joined": True})
    g.add_edge(ag.START, "left")
    g.add_edge(ag.START, "right")
    g.add_edge(["left", "right"], "join")
    g.add_edge("join", ag.END)
    state = compile_graph(g).invoke({"x": 1}).state
    assert state == {"x": 1, "left": "L", "right": "R", "joined": True}


def test_default_merge_conflict_names_key_vertices_and_superstep(compile_graph: Compile) -> None:
    g: ag.Graph = ag.Graph()
    g.add_vertex("alpha", lambda s: {"k": 1})
    g.add_vertex("beta", lambda s: {"k": 2})
    g.add_vertex("sink", lambda s: s)
    for name in ("alpha", "beta"):
        g.add_edge(ag.START, name)
        g.add_edge(name, "sink")
    g.add_edge("sink", ag.END)
    with pytest.raises(ag.MergeConflictError) as info:
        compile_graph(g).invoke({"k": 0})
    assert info.value.key == "k"
    assert info.value.vertices == ("alpha", "beta")
    assert info.value.step == 2


def test_send_map_reduce_keeps_every_result(compile_graph: Compile) -> None:
    g: ag.Graph = ag.Graph(merge=by_key({"results": append}))
    g.add_vertex("split", lambda s: s)
    g.add_vertex("work", lambda s: {"items": s["items"], "results": [s["item"] ** 2]}, returns="state")
    g.add_vertex("reduce", lambda s: {**s, "total": sum(s["results"])})
    g.add_edge(ag.START, "split")
    g.add_conditional_edges(
        "split",
        lambda s: [ag.Send("work", {"items": s["items"], "results": [], "item": i}) for i in s["items"]],
        ["work"],
    )
    g.add_edge("work", "reduce")
    g.add_edge("reduce", ag.END)
    state = compile_graph(g).invoke({"items": list(range(100)), "results": []}).state
    assert sorted(state["results"]) == [i * i for i in range(100)]
    assert state["total"] == sum(i * i for i in range(100))


# -- routing ---------------------------------------------------------------------


def test_conditional_loop_and_path_map(compile_graph: Compile) -> None:
    g: ag.Graph = ag.Graph()
    g.add_vertex("inc", lambda s: {"n": s["n"] + 1})
    g.add_edge(ag.START, "inc")
    g.add_conditional_edges(
        "inc", lambda s: "again" if s["n"] < 5 else "stop", {"again": "inc", "stop": ag.END}
    )
    result = compile_graph(g).invoke({"n": 0})
    assert result.state == {"n": 5} and result.step == 5 and result.status == "done"


def test_command_goto_routes_besides_static_edges(compile_graph: Compile) -> None:
    g: ag.Graph = ag.Graph(merge=by_key({"seen": append}))
    g.add_vertex("a", lambda s: ag.Command(update={"seen": [*s["seen"], "a"]}, goto="b"), destinations=["b"])
    g.add_vertex("b", lambda s: {**s, "seen": [*s["seen"], "b"]})
    g.add_edge(ag.START, "a")
    g.add_edge("a", ag.END)
    g.add_edge("b", ag.END)
    assert compile_graph(g).invoke({"seen": []}).state["seen"] == ["a", "b"]


def test_router_on_start(compile_graph: Compile) -> None:
    g: ag.Graph = ag.Graph()
    g.add_vertex("small", lambda s: {**s, "size": "small"})
    g.add_vertex("big", lambda s: {**s, "size": "big"})
    g.add_conditional_edges(ag.START, lambda s: "big" if s["n"] > 10 else "small", ["small", "big"])
    g.add_edge("small", ag.END)
    g.add_edge("big", ag.END)
    app = compile_graph(g)
    assert app.invoke({"n": 50}).state["size"] == "big"
    assert app.invoke({"n": 1}).state["size"] == "small"


def test_a_router_returning_an_unknown_target_is_a_clear_error(compile_graph: Compile) -> None:
    g: ag.Graph = ag.Graph()
    g.add_vertex("a", lambda s: s)
    g.add_edge(ag.START, "a")
    g.add_conditional_edges("a", lambda s: "nowhere")
    with pytest.raises(ag.RoutingError, match="'nowhere', which is not a vertex"):
        compile_graph(g).invoke({})


def test_ctx_gives_context_and_a_private_value_kept_across_supersteps(compile_graph: Compile) -> None:
    def count(state: dict[str, Any], ctx: ag.Context[str]) -> dict[str, Any]:
        ctx.value = (ctx.value or 0) + 1
        return {"n": state["n"] + 1, "calls": ctx.value, "who": ctx.context}

    g: ag.Graph = ag.Graph()
    g.add_vertex("count", count)
    g.add_edge(ag.START, "count")
    g.add_conditional_edges("count", lambda s: "count" if s["n"] < 4 else ag.END)
    state = compile_graph(g).invoke({"n": 0}, context="tester").state
    assert state == {"n": 4, "calls": 4, "who": "tester"}


# -- isolation and concurrency ------------------------------------------------------


def test_a_vertex_cannot_change_what_another_vertex_sees(compile_graph: Compile) -> None:
    seen = SharedDict()
    ready = SharedBarrier(2)  # both vertices arrive before the reader looks: they run at once

    def vandal(state: dict[str, Any]) -> dict[str, Any]:
        state["shared"].append("vandal")
        state["nested"]["k"] = "changed"
        ready.wait(timeout=5)
        return {"v": 1}

    def reader(state: dict[str, Any]) -> dict[str, Any]:
        ready.wait(timeout=5)
        seen["shared"] = list(state["shared"])
        seen["nested"] = dict(state["nested"])
        return {"r": 1}

    g: ag.Graph = ag.Graph(returns="update")
    g.add_vertex("vandal", vandal)
    g.add_vertex("reader", reader)
    for name in ("vandal", "reader"):
        g.add_edge(ag.START, name)
        g.add_edge(name, ag.END)
    given = {"shared": ["orig"], "nested": {"k": "orig"}}
    compile_graph(g).invoke(given)
    assert seen == {"shared": ["orig"], "nested": {"k": "orig"}}
    assert given == {"shared": ["orig"], "nested": {"k": "orig"}}


def test_fifty_concurrent_runs_neither_block_nor_see_each_other(compile_graph: Compile) -> None:
    g: ag.Graph = ag.Graph()
    g.add_vertex("wait", lambda s: (time.sleep(0.05), {"id": s["id"], "n": s["n"] + 1})[1])
    g.add_vertex("double", lambda s: {"id": s["id"], "n": s["n"] * 2})
    g.add_edge(ag.START, "wait")
    g.add_edge("wait", "double")
    g.add_edge("double", ag.END)
    app = compile_graph(g)
    results: dict[int, Any] = {}
    errors: list[BaseException] = []

    def one(i: int) -> None:
        try:
            results[i] = app.invoke({"id": i, "n": i}, timeout=30).state
        except BaseException as exc:
            errors.append(exc)

    callers = [threading.Thread(target=one, args=(i,)) for i in range(50)]
    for t in callers:
        t.start()
    for t in callers:
        t.join(60)
    assert not errors
    assert results == {i: {"id": i, "n": (i + 1) * 2} for i in range(50)}
    # 50 concurrent runs share each vertex's pool: at most 32 actors each, plus coordinators
    assert threading.active_count() <= 1 + 32 * 2 + 4 + 1


def test_thread_count_does_not_grow_with_the_number_of_runs() -> None:
    baseline = threading.active_count()
    g: ag.Graph = ag.Graph()
    for name in ("a", "b", "c"):
        g.add_vertex(name, lambda s: {"n": s["n"] + 1})
    g.add_edge(ag.START, "a")
    g.add_edge("a", "b")
    g.add_edge("b", "c")
    g.add_edge("c", ag.END)
    with g.compile() as app:
        app.invoke({"n": 0})
        after_one = threading.active_count()
        for _ in range(300):
            assert app.invoke({"n": 0}).state == {"n": 3}
        assert threading.active_count() == after_one
    deadline = time.monotonic() + 5
    while threading.active_count() > baseline and time.monotonic() < deadline:
        time.sleep(0.01)
    assert threading.active_count() == baseline


# -- limits, timeouts, cancellation ---------------------------------------------------


def looping_graph(step: Callable[[dict[str, Any]], Any] | None = None) -> ag.Graph:
    g: ag.Graph = ag.Graph()
    g.add_vertex("spin", step or (lambda s: {"n": s["n"] + 1}))
    g.add_edge(ag.START, "spin")
    g.add_conditional_edges("spin", lambda s: "spin")
    return g


def test_recursion_limit(compile_graph: Compile) -> None:
    with pytest.raises(ag.RecursionLimitError, match="recursion limit of 25"):
        compile_graph(looping_graph()).invoke({"n": 0}, recursion_limit=25)


def test_recursion_limit_counts_supersteps_that_ran(compile_graph: Compile) -> None:
    g: ag.Graph = ag.Graph()
    g.add_vertex("inc", lambda s: {"n": s["n"] + 1})
    g.add_edge(ag.START, "inc")
    g.add_conditional_edges("inc", lambda s: "inc" if s["n"] < 10 else ag.END)
    app = compile_graph(g)
    assert app.invoke({"n": 0}, recursion_limit=10).state == {"n": 10}
    with pytest.raises(ag.RecursionLimitError):
        app.invoke({"n": 0}, recursion_limit=9)


def test_bad_recursion_limit(compile_graph: Compile) -> None:
    with pytest.raises(ag.ActorGraphError, match="recursion_limit"):
        compile_graph(looping_graph()).invoke({"n": 0}, recursion_limit=0)


@pytest.mark.slow
def test_timeout_raises_and_stops_the_run(compile_graph: Compile) -> None:
    calls = SharedList()

    def slow(state: dict[str, Any]) -> dict[str, Any]:
        calls.append(state["n"])
        time.sleep(0.05)
        return {"n": state["n"] + 1}

    app = compile_graph(looping_graph(slow))
    with pytest.raises(ag.RunTimeoutError, match="cancelled"):
        app.invoke({"n": 0}, timeout=0.2)
    time.sleep(0.2)
    settled = len(calls)
    time.sleep(0.2)
    assert len(calls) == settled  # nothing runs after the cancel took effect


def test_cancel_stops_between_supersteps(compile_graph: Compile) -> None:
    entered, release = SharedEvent(), SharedEvent()
    ran_after = SharedList()

    def blocker(state: dict[str, Any]) -> dict[str, Any]:
        entered.set()
        release.wait(5)
        return state

    g: ag.Graph = ag.Graph()
    g.add_vertex("blocker", blocker)
    g.add_vertex("after", lambda s: ran_after.append("after"))
    g.add_edge(ag.START, "blocker")
    g.add_edge("blocker", "after")
    g.add_edge("after", ag.END)
    handle = compile_graph(g).start({})
    assert entered.wait(5)
    assert not handle.done()
    assert handle.cancel() is True
    assert handle.done() and handle.cancel() is False
    release.set()
    with pytest.raises(ag.RunCancelledError):
        handle.result(5)
    time.sleep(0.1)
    assert ran_after == []


def test_handle_result_with_timeout_keeps_the_run_going(compile_graph: Compile) -> None:
    release = SharedEvent()
    g: ag.Graph = ag.Graph()
    g.add_vertex("wait", lambda s: (release.wait(5), s)[1])
    g.add_edge(ag.START, "wait")
    g.add_edge("wait", ag.END)
    handle = compile_graph(g).start({"x": 1})
    with pytest.raises(ag.RunTimeoutError, match="still running"):
        handle.result(0.05)
    release.set()
    assert handle.result(5).state == {"x": 1}


# -- errors ----------------------------------------------------------------------------


def test_a_failing_vertex_raises_vertex_error_with_its_cause(compile_graph: Compile) -> None:
    def broken(state: Any) -> Any:
        raise ValueError("bad input")

    g: ag.Graph = ag.Graph()
    g.add_vertex("broken", broken)
    g.add_edge(ag.START, "broken")
    g.add_edge("broken", ag.END)
    with pytest.raises(ag.VertexError) as info:
        compile_graph(g).invoke({})
    err = info.value
    assert (err.vertex, err.step, err.attempts, err.task_id) == ("broken", 1, 1, "broken")
    assert isinstance(err.__cause__, ValueError)
    assert "invoke(None" not in str(err)  # no checkpointer: that advice could not work
    assert "cannot be resumed" in str(err) and "checkpointer" in str(err)


@pytest.mark.parametrize(
    "bad_input",
    [None, ag.Send("a", {}), ag.Command(goto="a"), ag.Command(resume="x"), threading.Lock()],
    ids=["none", "send", "goto", "resume", "uncopyable"],
)
def test_input_of_the_wrong_kind(compile_graph: Compile, bad_input: Any) -> None:
    g: ag.Graph = ag.Graph()
    g.add_vertex("a", lambda s: s)
    g.add_edge(ag.START, "a")
    g.add_edge("a", ag.END)
    with pytest.raises(ag.ActorGraphError):
        compile_graph(g).invoke(bad_input)


def test_a_closed_graph_refuses_runs_and_close_is_idempotent() -> None:
    g: ag.Graph = ag.Graph()
    g.add_vertex("a", lambda s: s)
    g.add_edge(ag.START, "a")
    g.add_edge("a", ag.END)
    app = g.compile()
    app.invoke({})
    app.close()
    app.close()
    assert app.closed
    with pytest.raises(ag.ActorGraphError, match="closed"):
        app.invoke({})


def test_closing_fails_runs_still_going() -> None:
    entered, release = SharedEvent(), SharedEvent()
    g: ag.Graph = ag.Graph()
    g.add_vertex("wait", lambda s: (entered.set(), release.wait(5), s)[2])
    g.add_vertex("next", lambda s: s)
    g.add_edge(ag.START, "wait")
    g.add_edge("wait", "next")
    g.add_edge("next", ag.END)
    app = g.compile()
    handle = app.start({})
    assert entered.wait(5)
    closer = threading.Thread(target=app.close)
    closer.start()
    time.sleep(0.05)
    release.set()
    closer.join(10)
    with pytest.raises(ag.ActorGraphError):
        handle.result(5)


def test_the_graph_survives_pykka_stop_all(compile_graph: Compile) -> None:
    import pykka

    g: ag.Graph = ag.Graph()
    g.add_vertex("a", lambda s: {"n": s["n"] + 1})
    g.add_edge(ag.START, "a")
    g.add_edge("a", ag.END)
    app = compile_graph(g)
    assert app.invoke({"n": 0}).state == {"n": 1}
    pykka.ActorRegistry.stop_all(block=True)
    assert app.invoke({"n": 1}).state == {"n": 2}
