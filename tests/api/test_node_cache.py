"""The node cache in real runs: `add_vertex(cache=CachePolicy(...))` with `compile(cache=...)`."""

from __future__ import annotations

import threading
import warnings
from pathlib import Path
from typing import Any

import pytest

import actorgraph as ag
from actorgraph.checkpoint import MemoryCheckpointer
from actorgraph.events import TaskFinished
from actorgraph.merge import append, by_key

pytestmark = pytest.mark.threads_only("the vertices count their calls in this process's memory")


class Counted:
    """A vertex function that counts its calls (from any thread)."""

    def __init__(self, fn: Any) -> None:
        self.fn = fn
        self.calls = 0
        self._lock = threading.Lock()

    def __call__(self, state: Any) -> Any:
        with self._lock:
            self.calls += 1
        return self.fn(state)


def doubling(policy: ag.CachePolicy | None = None) -> tuple[ag.Graph, Counted]:
    double = Counted(lambda s: {"n": s["n"] * 2})
    g: ag.Graph = ag.Graph(name="doubling", returns="update")
    g.add_vertex("double", double, cache=policy or ag.CachePolicy())
    g.add_edge(ag.START, "double")
    g.add_edge("double", ag.END)
    return g, double


def test_an_equal_input_reuses_the_outcome_without_a_call() -> None:
    g, double = doubling()
    events: list[Any] = []
    with g.compile(cache=ag.MemoryCache(), listeners=[events.append]) as app:
        assert app.invoke({"n": 2}).state == {"n": 4}
        assert app.invoke({"n": 2}).state == {"n": 4}
        assert app.invoke({"n": 3}).state == {"n": 6}
    assert double.calls == 2
    finished = [(e.result.vertex, e.cached, e.result.cached) for e in events if isinstance(e, TaskFinished)]
    assert finished == [("double", False, False), ("double", True, True), ("double", False, False)]


def test_an_outcome_expires_after_its_ttl() -> None:
    now = [0.0]
    g, double = doubling(ag.CachePolicy(ttl=60))
    with g.compile(cache=ag.MemoryCache(clock=lambda: now[0])) as app:
        app.invoke({"n": 1})
        now[0] = 59.0
        app.invoke({"n": 1})
        assert double.calls == 1
        now[0] = 61.0
        app.invoke({"n": 1})
        assert double.calls == 2
        app.invoke({"n": 1})
    assert double.calls == 2


def test_a_key_function_decides_which_inputs_are_equal() -> None:
    g, double = doubling(ag.CachePolicy(key=lambda s: str(s["n"])))
    with g.compile(cache=ag.MemoryCache()) as app:
        assert app.invoke({"n": 2, "noise": 1}).state == {"n": 4, "noise": 1}
        # equal by key: the function is not called; what it returned (an update) is applied to this input
        assert app.invoke({"n": 2, "noise": 2}).state == {"n": 4, "noise": 2}
    assert double.calls == 1


def test_a_key_function_returning_something_else_fails_the_task() -> None:
    g, _ = doubling(ag.CachePolicy(key=lambda s: s["n"]))
    with g.compile(cache=ag.MemoryCache()) as app, pytest.raises(ag.ConfigError, match="a str or bytes"):
        app.invoke({"n": 2})


def test_routing_and_sends_of_a_command_are_rebuilt_from_the_cache() -> None:
    def plan(state: dict[str, Any]) -> ag.Command:
        sends = [ag.Send("work", {"item": i, "out": []}) for i in state["items"]]
        return ag.Command(update={"planned": True}, goto=["audit", *sends])

    planner = Counted(plan)
    g: ag.Graph = ag.Graph(merge=by_key({"out": append}), returns="update")
    g.add_vertex("plan", planner, cache=ag.CachePolicy(), destinations=["audit", "work"])
    g.add_vertex("audit", lambda s: {"out": ["audited"]})
    g.add_vertex("work", lambda s: {"out": [s["item"] * 10], "item": None})
    g.add_edge(ag.START, "plan")
    g.add_edge("audit", ag.END)
    g.add_edge("work", ag.END)
    with g.compile(cache=ag.MemoryCache()) as app:
        first = app.invoke({"items": [1, 2], "out": []}).state
        second = app.invoke({"items": [1, 2], "out": []}).state
    assert planner.calls == 1
    assert sorted(first["out"], key=str) == sorted(second["out"], key=str) == [10, 20, "audited"]
    assert second["planned"] is True


def test_the_private_value_is_reused_and_is_part_of_the_key() -> None:
    def count(state: dict[str, Any], ctx: ag.Context[Any]) -> dict[str, Any]:
        ctx.value = (ctx.value or 0) + 1
        return {"n": state["n"], "value": ctx.value}

    counted = Counted(lambda s: s)
    g: ag.Graph = ag.Graph()
    g.add_vertex("count", lambda s, ctx: (counted(s), count(s, ctx))[1], cache=ag.CachePolicy())
    g.add_edge(ag.START, "count")
    g.add_conditional_edges("count", lambda s: "count" if s["value"] < 3 else ag.END, ["count", ag.END])
    with g.compile(cache=ag.MemoryCache()) as app:
        assert app.invoke({"n": 1, "value": 0}).state["value"] == 3
        assert counted.calls == 3  # the same state each time, but a new private value: no hit
        assert app.invoke({"n": 1, "value": 0}).state["value"] == 3
        assert counted.calls == 3  # each task equals one of the first run's, private value included


def test_hits_cross_threads_and_concurrent_runs() -> None:
    g, double = doubling()
    with g.compile(MemoryCheckpointer(), cache=ag.MemoryCache()) as app:
        app.invoke({"n": 5}, thread_id="first")
        handles = [app.start({"n": 5}, thread_id=f"t{i}") for i in range(8)]
        assert {h.result(30).state["n"] for h in handles} == {10}
    assert double.calls == 1


def test_a_new_compiled_graph_in_another_process_hits_a_shared_sqlite_cache(tmp_path: Path) -> None:
    g, double = doubling()
    with ag.SqliteCache(tmp_path / "cache.db") as cache, g.compile(cache=cache) as app:
        app.invoke({"n": 7})
    with ag.SqliteCache(tmp_path / "cache.db") as cache, g.compile(cache=cache) as app:
        assert app.invoke({"n": 7}).state == {"n": 14}
    assert double.calls == 1


def test_clear_cache_forgets_the_vertices_named() -> None:
    double = Counted(lambda s: {**s, "n": s["n"] * 2})
    inc = Counted(lambda s: {**s, "n": s["n"] + 1})
    g: ag.Graph = ag.Graph()
    g.add_vertex("double", double, cache=ag.CachePolicy())
    g.add_vertex("inc", inc, cache=ag.CachePolicy())
    g.add_edge(ag.START, "double")
    g.add_edge("double", "inc")
    g.add_edge("inc", ag.END)
    with g.compile(cache=ag.MemoryCache()) as app:
        app.invoke({"n": 1})
        app.clear_cache(["inc"])
        app.invoke({"n": 1})
        assert (double.calls, inc.calls) == (1, 2)
        app.clear_cache()
        app.invoke({"n": 1})
        assert (double.calls, inc.calls) == (2, 3)
        with pytest.raises(ag.ConfigError, match="'nope' not vertices of graph"):
            app.clear_cache(["nope"])
    g2, _ = doubling()
    with pytest.warns(ag.GraphValidationWarning), g2.compile() as plain:
        plain.clear_cache()  # no cache: nothing to forget


def test_an_error_is_not_cached() -> None:
    fails = [1]

    def flaky(state: dict[str, Any]) -> dict[str, Any]:
        if fails:
            fails.pop()
            msg = "down"
            raise ConnectionError(msg)
        return {"n": state["n"] + 1}

    counted = Counted(flaky)
    g: ag.Graph = ag.Graph()
    g.add_vertex("flaky", counted, cache=ag.CachePolicy())
    g.add_edge(ag.START, "flaky")
    g.add_edge("flaky", ag.END)
    with g.compile(cache=ag.MemoryCache()) as app:
        with pytest.raises(ag.VertexError):
            app.invoke({"n": 1})
        assert app.invoke({"n": 1}).state == {"n": 2}
        assert app.invoke({"n": 1}).state == {"n": 2}
    assert counted.calls == 2


def test_a_task_that_asks_a_person_neither_hits_nor_fills_the_cache() -> None:
    ask = Counted(lambda s: {"n": s["n"], "answer": ag.interrupt("ok?")})
    g: ag.Graph = ag.Graph()
    g.add_vertex("ask", ask, cache=ag.CachePolicy())
    g.add_edge(ag.START, "ask")
    g.add_edge("ask", ag.END)
    with g.compile(MemoryCheckpointer(), cache=ag.MemoryCache()) as app:
        assert app.invoke({"n": 1}, thread_id="a").status == "interrupted"
        assert app.invoke(ag.Command(resume="yes"), thread_id="a").state == {"n": 1, "answer": "yes"}
        # another thread with the same input asks again: the answered outcome was not kept
        assert app.invoke({"n": 1}, thread_id="b").status == "interrupted"
        assert app.invoke(ag.Command(resume="no"), thread_id="b").state == {"n": 1, "answer": "no"}
    assert ask.calls == 2  # each went on from its question when answered (the live path)


def test_an_async_vertex_is_cached_too() -> None:
    calls = []

    async def double(state: dict[str, Any]) -> dict[str, Any]:
        calls.append(state)
        return {"n": state["n"] * 2}

    g: ag.Graph = ag.Graph()
    g.add_vertex("double", double, cache=ag.CachePolicy())
    g.add_edge(ag.START, "double")
    g.add_edge("double", ag.END)
    with g.compile(cache=ag.MemoryCache()) as app:
        assert [app.invoke({"n": 4}).state for _ in range(3)] == [{"n": 8}] * 3
    assert len(calls) == 1


def test_a_state_the_cache_cannot_store_fails_the_task_naming_it() -> None:
    g: ag.Graph = ag.Graph()
    g.add_vertex("v", lambda s: {"obj": object()}, cache=ag.CachePolicy(key=lambda s: "same"))
    g.add_edge(ag.START, "v")
    g.add_edge("v", ag.END)
    with (
        g.compile(cache=ag.MemoryCache()) as app,
        pytest.raises(ag.SerializationError, match="vertex 'v': the node cache cannot keep what it returned"),
    ):
        app.invoke({})


def test_a_policy_without_a_cache_and_a_cache_without_a_policy_warn() -> None:
    g, _ = doubling()
    with pytest.warns(ag.GraphValidationWarning, match="compiled without cache="), g.compile():
        pass
    plain: ag.Graph = ag.Graph()
    plain.add_vertex("v", lambda s: s)
    plain.add_edge(ag.START, "v")
    plain.add_edge("v", ag.END)
    with (
        pytest.warns(ag.GraphValidationWarning, match="no vertex has a CachePolicy"),
        plain.compile(cache=ag.MemoryCache()),
    ):
        pass
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        g.compile(cache=ag.MemoryCache()).close()


def test_bad_cache_options_are_refused_where_they_are_given() -> None:
    g: ag.Graph = ag.Graph()
    with pytest.raises(ag.GraphValidationError, match="vertex 'v': cache must be a CachePolicy"):
        g.add_vertex("v", lambda s: s, cache=60)  # type: ignore[typeddict-item]
    with pytest.raises(ag.ConfigError, match="ttl=0"):
        ag.CachePolicy(ttl=0)
    for ttl in (10**400, 1e10, float("inf"), float("nan"), True, "60"):
        with pytest.raises(ag.ConfigError, match=r"ttl=.*at most 1e\+09 \(about 31 years\), or None"):
            ag.CachePolicy(ttl=ttl)  # type: ignore[arg-type]
    assert ag.CachePolicy(ttl=10**9).ttl == 10**9
    with pytest.raises(ag.ConfigError, match="key="):
        ag.CachePolicy(key="n")  # type: ignore[arg-type]
    inner: ag.Graph = ag.Graph()
    inner.add_vertex("x", lambda s: s)
    inner.add_edge(ag.START, "x")
    inner.add_edge("x", ag.END)
    with pytest.raises(ag.GraphValidationError, match="is a subgraph"):
        g.add_vertex("sub", inner, cache=ag.CachePolicy())
    g2, _ = doubling()
    with pytest.raises(ag.ConfigError, match="takes a node cache"):
        g2.compile(cache={})  # type: ignore[arg-type]


def test_a_subgraph_uses_its_parents_cache() -> None:
    inner, double = doubling()
    outer: ag.Graph = ag.Graph()
    outer.add_vertex("inner", inner)
    outer.add_edge(ag.START, "inner")
    outer.add_edge("inner", ag.END)
    with outer.compile(cache=ag.MemoryCache()) as app:
        assert app.invoke({"n": 3}).state == {"n": 6}
        assert app.invoke({"n": 3}).state == {"n": 6}
        assert double.calls == 1
        app.clear_cache()
        app.invoke({"n": 3})
    assert double.calls == 2


def test_an_input_the_default_key_cannot_serialize_fails_the_task_naming_the_way_out() -> None:
    g: ag.Graph = ag.Graph()
    g.add_vertex("v", lambda s: {"done": True}, cache=ag.CachePolicy(), returns="update")
    g.add_edge(ag.START, "v")
    g.add_edge("v", ag.END)
    with (
        g.compile(cache=ag.MemoryCache()) as app,
        pytest.raises(ag.SerializationError, match=r"cannot make a key of its input .* key= function"),
    ):
        app.invoke({"client": object()})


def test_a_cache_hit_stays_marked_cached_when_its_superstep_is_read_back_from_the_store() -> None:
    double = Counted(lambda s: {"n": s["n"] * 2})

    def ask(state: Any) -> Any:
        return {"answer": ag.interrupt("go on?")}

    g: ag.Graph = ag.Graph(name="paused", merge=by_key({"n": append, "answer": append}), returns="update")
    g.add_vertex("double", double, cache=ag.CachePolicy())
    g.add_vertex("ask", ask)
    g.add_edge(ag.START, "double")
    g.add_edge(ag.START, "ask")
    g.add_edge("double", ag.END)
    g.add_edge("ask", ag.END)
    with g.compile(MemoryCheckpointer(), cache=ag.MemoryCache()) as app:
        app.invoke({"n": [1]}, thread_id="first")
        app.invoke({"n": [1]}, thread_id="second")  # double's outcome comes from the cache
        cached = {
            thread: {r.vertex: r.cached for r in app.get_state(thread).superstep.results.values()}
            for thread in ("first", "second")
        }
    assert double.calls == 1
    assert cached == {"first": {"double": False, "ask": False}, "second": {"double": True, "ask": False}}
