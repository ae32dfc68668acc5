"""Deferred vertices (`add_vertex(..., defer=True)`) in real runs: they run once nothing else has work."""

from __future__ import annotations

from typing import Any

import deferred_graphs
import pytest

import actorgraph as ag
from actorgraph.checkpoint import MemoryCheckpointer, SqliteCheckpointer
from actorgraph.merge import append, by_key

pytestmark = pytest.mark.threads_only("the vertices record what they saw in this process's memory")


class Counted:
    """A vertex function that counts its calls and records what it was given."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.seen: list[list[str]] = []

    def __call__(self, state: dict[str, Any]) -> dict[str, Any]:
        self.seen.append(list(state["log"]))
        return {"log": [self.name]}


def uneven(agg: Counted, *, fail_b3: list[int] | None = None) -> ag.Graph:
    """The shared uneven graph; with `fail_b3`, b3 fails once per item in it."""

    def b3(state: dict[str, Any]) -> dict[str, Any]:
        if fail_b3:
            fail_b3.pop()
            msg = "b3 fails once"
            raise RuntimeError(msg)
        return {"log": ["b3"]}

    return deferred_graphs.uneven(agg, b3=b3)


def test_the_aggregator_runs_once_with_both_branches() -> None:
    agg = Counted("agg")
    with uneven(agg).compile() as app:
        result = app.invoke({"log": []})
    assert agg.seen == [["a", "b1", "b2", "b3"]]
    assert result.state == {"log": ["a", "b1", "b2", "b3", "agg"]}


def test_get_state_next_leaves_the_waiting_aggregator_out(tmp_path: Any) -> None:
    agg = Counted("agg")
    store = SqliteCheckpointer(tmp_path / "runs.db")
    with store, uneven(agg).compile(store, interrupt_after=["a"]) as app:
        paused = app.invoke({"log": []}, thread_id="t")
        assert paused.status == "interrupted"
        snap = app.get_state("t")
        assert snap.next == ("b2",)  # agg holds a message, but waits for b2 and b3
        done = app.invoke(None, thread_id="t")
    assert done.state == {"log": ["a", "b1", "b2", "b3", "agg"]}
    assert agg.seen == [["a", "b1", "b2", "b3"]]


def test_resumed_in_a_new_compiled_graph_after_a_failure_in_between(tmp_path: Any) -> None:
    agg, fails = Counted("agg"), [1]
    with SqliteCheckpointer(tmp_path / "runs.db") as store:
        with uneven(agg, fail_b3=fails).compile(store) as app, pytest.raises(ag.VertexError):
            app.invoke({"log": []}, thread_id="t")
        assert agg.seen == []  # b3 failed while agg's message waited in the checkpoint
        with uneven(agg).compile(store) as again:
            assert again.get_state("t").next == ("b3",)
            done = again.invoke(None, thread_id="t")
    assert done.state == {"log": ["a", "b1", "b2", "b3", "agg"]}
    assert agg.seen == [["a", "b1", "b2", "b3"]]


def test_a_deferred_vertex_in_a_loop_runs_once_per_round() -> None:
    seen: list[list[str]] = []

    def agg(state: dict[str, Any]) -> dict[str, Any]:
        seen.append(list(state["log"]))
        return {"log": ["agg"], "round": state["round"] + 1}

    g: ag.Graph = ag.Graph(merge=by_key({"log": append}), returns="update")
    g.add_vertex("short", lambda s: {"log": [f"s{s['round']}"]})
    g.add_vertex("long1", lambda s: {"log": [f"l{s['round']}"]})
    g.add_vertex("long2", lambda s: {"log": [f"m{s['round']}"]})
    g.add_vertex("split", lambda s: None)
    g.add_vertex("agg", agg, defer=True)
    g.add_edge(ag.START, "split")
    g.add_edge("split", "short")
    g.add_edge("split", "long1")
    g.add_edge("long1", "long2")
    g.add_edge("short", "agg")
    g.add_edge("long2", "agg")
    g.add_conditional_edges("agg", lambda s: "split" if s["round"] < 2 else ag.END, ["split", ag.END])
    with g.compile() as app:
        result = app.invoke({"log": [], "round": 0})
    assert seen == [["s0", "l0", "m0"], ["s0", "l0", "m0", "agg", "s1", "l1", "m1"]]
    assert result.state["round"] == 2


def test_a_graph_where_only_deferred_vertices_have_work_runs_them() -> None:
    first, second = Counted("first"), Counted("second")
    g: ag.Graph = ag.Graph(merge=by_key({"log": append}), returns="update")
    g.add_vertex("first", first, defer=True)
    g.add_vertex("second", second, defer=True)
    g.add_edge(ag.START, "first")
    g.add_edge("first", "second")
    g.add_edge("second", ag.END)
    with g.compile() as app:
        assert app.invoke({"log": []}).state == {"log": ["first", "second"]}
    assert first.seen == [[]]
    assert second.seen == [["first"]]


def test_sends_to_a_deferred_vertex_wait_and_run_as_their_own_tasks() -> None:
    g: ag.Graph = ag.Graph(merge=by_key({"log": append}), returns="update")
    g.add_vertex("fan", lambda s: None)
    g.add_vertex("slow1", lambda s: {"log": ["slow1"]})
    g.add_vertex("slow2", lambda s: {"log": ["slow2"]})
    g.add_vertex("late", lambda s: {"log": [f"late{s['i']}"], "i": None}, defer=True)
    g.add_edge(ag.START, "fan")
    g.add_conditional_edges(
        "fan",
        lambda s: ["slow1", ag.Send("late", {**s, "i": 1}), ag.Send("late", {**s, "i": 2})],
        ["slow1", "late"],
    )
    g.add_edge("slow1", "slow2")
    g.add_edge("slow2", ag.END)
    g.add_edge("late", ag.END)
    events: list[Any] = []
    with g.compile(listeners=[events.append]) as app:
        result = app.invoke({"log": [], "i": None})
    started = [e.tasks for e in events if isinstance(e, ag.events.SuperstepStarted)]
    assert started == [("fan",), ("slow1",), ("slow2",), ("late:0", "late:1")]
    assert sorted(result.state["log"]) == ["late1", "late2", "slow1", "slow2"]


@pytest.mark.parametrize("bad", ["yes", 1, None.__class__])
def test_defer_must_be_a_bool(bad: Any) -> None:
    g: ag.Graph = ag.Graph()
    with pytest.raises(ag.GraphValidationError, match="vertex 'v': defer must be True or False"):
        g.add_vertex("v", lambda s: s, defer=bad)


def test_a_deferred_vertex_with_a_memory_checkpointer_keeps_its_waiting_message() -> None:
    agg = Counted("agg")
    with uneven(agg).compile(MemoryCheckpointer(), interrupt_after=["b2"]) as app:
        app.invoke({"log": []}, thread_id="t")
        waiting = app.get_state("t")
        assert waiting.next == ("b3",)
        assert app.invoke(None, thread_id="t").state["log"][-1] == "agg"
    assert len(agg.seen) == 1
