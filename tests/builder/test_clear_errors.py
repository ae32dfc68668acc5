"""Clear errors where users stumble: each names what was wrong and gives advice that works there."""

from __future__ import annotations

import threading
import warnings
from typing import Any

import pytest

import actorgraph as ag
from actorgraph.merge import by_key, replace


def routed(router: Any, path_map: Any = None) -> ag.Graph:
    g: ag.Graph = ag.Graph()
    g.add_vertex("a", lambda s: {**s, "a": 1})
    g.add_vertex("b", lambda s: {**s, "b": 1})
    g.add_edge(ag.START, "a")
    g.add_conditional_edges("a", router, path_map)
    g.add_edge("b", ag.END)
    return g


def test_a_router_returning_none_is_a_routing_error_that_names_it_and_says_end(compile_graph) -> None:
    app = compile_graph(routed(lambda s: None, ["b", ag.END]))
    with pytest.raises(ag.RoutingError, match=r"the router of 'a' returned None; return END"):
        app.invoke({})


def test_a_router_that_raises_is_a_routing_error_at_start_and_at_a_vertex(compile_graph) -> None:
    def boom(state: Any) -> str:
        raise KeyError("missing")

    app = compile_graph(routed(boom, ["b", ag.END]))
    with pytest.raises(ag.RoutingError, match=r"the router of 'a' raised KeyError") as at_vertex:
        app.invoke({})
    assert isinstance(at_vertex.value.__cause__, KeyError)

    g: ag.Graph = ag.Graph()
    g.add_vertex("a", lambda s: s)
    g.add_conditional_edges(ag.START, boom, ["a"])
    g.add_edge("a", ag.END)
    with pytest.raises(ag.RoutingError, match=r"the router of START raised KeyError") as at_start:
        compile_graph(g).invoke({})
    assert isinstance(at_start.value.__cause__, KeyError)


def test_a_state_routed_nowhere_still_reaches_the_result(compile_graph) -> None:
    g: ag.Graph = ag.Graph(merge=by_key({"done": replace}))
    g.add_vertex("split", lambda s: {**s, "split": True})
    g.add_vertex("work", lambda s: {**s, "done": s["item"]})
    g.add_edge(ag.START, "split")
    g.add_conditional_edges(
        "split", lambda s: [ag.Send("work", {**s, "item": i}) for i in s["items"]], ["work"]
    )
    g.add_edge("work", ag.END)
    assert compile_graph(g).invoke({"items": []}).state == {"items": [], "split": True}


@pytest.mark.parametrize("returned", [["a", "list"], "text", 42])
def test_a_non_mapping_returned_into_a_keyed_graph_fails_at_that_vertex(compile_graph, returned) -> None:
    g: ag.Graph = ag.Graph(merge=by_key({"n": replace}))
    g.add_vertex("ok", lambda s: {**s, "n": 1})
    g.add_vertex("wrong", lambda s: returned)
    for name in ("ok", "wrong"):
        g.add_edge(ag.START, name)
        g.add_edge(name, ag.END)
    with pytest.raises(ag.InvalidUpdateError, match=rf"vertex 'wrong' returned a {type(returned).__name__}"):
        compile_graph(g).invoke({"n": 0})


def test_whole_states_without_keys_still_merge_as_before(compile_graph) -> None:
    g: ag.Graph = ag.Graph()
    g.add_vertex("inc", lambda n: n + 1)
    g.add_edge(ag.START, "inc")
    g.add_edge("inc", ag.END)
    assert compile_graph(g).invoke(1).state == 2


def test_a_vertex_requiring_three_arguments_is_refused_at_compile() -> None:
    g: ag.Graph = ag.Graph()
    g.add_vertex("three", lambda state, ctx, extra: state)
    g.add_edge(ag.START, "three")
    g.add_edge("three", ag.END)
    with pytest.raises(
        ag.GraphValidationError, match=r"vertex 'three' requires the arguments \(state, ctx, extra\)"
    ):
        g.compile()


def test_defaults_and_keyword_only_arguments_are_checked_too() -> None:
    def fine(state: Any, ctx: Any = None, *, tag: str = "x") -> Any:
        return state

    def needs_keyword(state: Any, *, tag: str) -> Any:
        return state

    for fn, ok in ((fine, True), (needs_keyword, False)):
        g: ag.Graph = ag.Graph()
        g.add_vertex("v", fn)
        g.add_edge(ag.START, "v")
        g.add_edge("v", ag.END)
        if ok:
            g.compile().close()
        else:
            with pytest.raises(ag.GraphValidationError, match=r"\*, tag"):
                g.compile()


def test_an_on_error_handler_with_the_wrong_arguments_is_refused_at_compile() -> None:
    g: ag.Graph = ag.Graph()
    g.add_vertex("v", lambda s: s, on_error=lambda state: state)
    g.add_edge(ag.START, "v")
    g.add_edge("v", ag.END)
    with pytest.raises(
        ag.GraphValidationError, match=r"on_error handler of vertex 'v'.*handler\(state, error\)"
    ):
        g.compile()


@pytest.mark.threads_only(
    "close() waits for and names the vertex actor threads still running a call; a Ray vertex runs in a "
    "worker process, and close() neither waits for nor warns about its call"
)
@pytest.mark.slow
def test_close_says_which_vertices_it_waits_for_and_honours_its_timeout() -> None:
    entered, release = threading.Event(), threading.Event()
    workers: list[threading.Thread] = []
    g: ag.Graph = ag.Graph()
    g.add_vertex(
        "stuck", lambda s: (workers.append(threading.current_thread()), entered.set(), release.wait(30), s)[3]
    )
    g.add_edge(ag.START, "stuck")
    g.add_edge("stuck", ag.END)
    app = g.compile()
    handle = app.start({})
    assert entered.wait(5)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            app.close(timeout=0.7)
        messages = [str(w.message) for w in caught if issubclass(w.category, ag.StuckVertexWarning)]
        assert len(messages) == 2, messages
        assert "vertex 'stuck' still running a task" in messages[0] and "close(timeout=...)" in messages[0]
        assert "gave up waiting for vertex 'stuck'" in messages[1]
        assert all(w.filename == __file__ for w in caught)  # shown at the caller's line
        with pytest.raises(ag.ActorGraphError, match="closed"):
            handle.result(5)
    finally:
        release.set()
        workers[0].join(5)  # the abandoned actor ends once its call returns
