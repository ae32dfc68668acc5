"""The superstep algorithm, tested without a single thread."""

from __future__ import annotations

import threading
from typing import Any

import pytest

import actorgraph as ag
from actorgraph._build.validate import build_spec
from actorgraph._engine.superstep import (
    Position,
    commit,
    current_state,
    final_state,
    initial,
    plan,
    task_order,
)
from actorgraph._engine.task import TaskEnv, run_attempt
from actorgraph._model.records import Node, SuperstepState, Task
from actorgraph.merge import append, by_key

ENV = TaskEnv(node_prefix="t/")


def run_to_end(graph: ag.Graph, state: Any, limit: int = 100) -> tuple[Position, list[SuperstepState]]:
    """Drive a graph with the pure functions only (the engine's loop, minus actors)."""
    spec = build_spec(graph)
    pos = initial(spec, Node("t/0:input", state))
    steps = []
    while not pos.done and len(steps) < limit:
        results = {t.id: run_attempt(spec, t, 1, ENV) for t in plan(pos)}
        superstep = SuperstepState(pos.step + 1, results)
        steps.append(superstep)
        pos = commit(spec, pos, superstep)
    return pos, steps


def line(*names: str) -> ag.Graph:
    g: ag.Graph = ag.Graph()
    for name in names:
        g.add_vertex(name, lambda s, name=name: {**s, "path": [*s["path"], name]})
    for src, dst in zip((ag.START, *names), (*names, ag.END), strict=True):
        g.add_edge(src, dst)
    return g


def test_pure_logic_starts_no_thread() -> None:
    before = threading.active_count()
    pos, steps = run_to_end(line("a", "b", "c"), {"path": []})
    assert threading.active_count() == before
    assert final_state(pos, ag.Graph().merge or (lambda b, s: s[-1])) == {"path": ["a", "b", "c"]}
    assert [s.step for s in steps] == [1, 2, 3]


def test_input_is_step_zero_and_the_first_vertices_run_in_step_one() -> None:
    spec = build_spec(line("a"))
    pos = initial(spec, Node("in", {"path": []}))
    assert pos.step == 0
    assert [(t.id, t.step) for t in plan(pos)] == [("a", 1)]


def test_tasks_are_ordered_by_vertex_then_send_index() -> None:
    g: ag.Graph = ag.Graph(merge=by_key({"out": append}))
    g.add_vertex("fan", lambda s: s)
    g.add_vertex("work", lambda s: {**s, "out": [s["i"]]})
    g.add_vertex("a", lambda s: s)
    g.add_edge(ag.START, "fan")
    g.add_edge(ag.START, "a")
    g.add_conditional_edges(
        "fan", lambda s: [ag.Send("work", {"i": i, "out": []}) for i in range(12)], ["work"]
    )
    g.add_edge("work", ag.END)
    g.add_edge("a", ag.END)
    _, steps = run_to_end(g, {"out": []})
    assert list(steps[0].results) == ["a", "fan"]
    ids = list(steps[1].results)
    assert ids == [f"work:{i}" for i in range(12)]
    assert sorted(ids, key=task_order) == ids  # work:2 before work:10


def test_a_join_waits_for_every_source_and_runs_once() -> None:
    g: ag.Graph = ag.Graph(merge=by_key({"path": append}))
    for name in ("a", "b", "b2", "c"):
        g.add_vertex(name, lambda s, name=name: {**s, "path": [*s["path"], name]})
    g.add_edge(ag.START, "a")
    g.add_edge(ag.START, "b")
    g.add_edge("b", "b2")
    g.add_edge(["a", "b2"], "c")
    g.add_edge("c", ag.END)
    pos, steps = run_to_end(g, {"path": []})
    assert [sorted(s.results) for s in steps] == [["a", "b"], ["b2"], ["c"]]
    assert final_state(pos, build_spec(g).merge) == {"path": ["a", "b", "b2", "c"]}


def test_a_join_that_never_fires_keeps_its_states_in_the_result() -> None:
    g: ag.Graph = ag.Graph(merge=by_key({"path": append}))
    g.add_vertex("a", lambda s: {**s, "path": [*s["path"], "a"]})
    g.add_vertex("b", lambda s: {**s, "path": [*s["path"], "b"]})
    g.add_vertex("c", lambda s: s)
    g.add_edge(ag.START, "a")
    g.add_conditional_edges("b", lambda s: ag.END, [ag.END])
    g.add_edge(ag.START, "b")
    g.add_edge(["a", "c"], "c")
    g.add_edge("c", ag.END)
    pos, _ = run_to_end(g, {"path": []})
    assert pos.done
    assert list(pos.joins) == ["a+c>c"]
    assert final_state(pos, build_spec(g).merge) == {"path": ["b", "a"]}


def test_commit_refuses_a_superstep_with_a_failed_task() -> None:
    spec = build_spec(line("a"))
    pos = initial(spec, Node("in", {"path": []}))
    bad = ag.VertexResult("a", "a", "error")
    with pytest.raises(ag.ActorGraphError, match="error"):
        commit(spec, pos, SuperstepState(1, {"a": bad}))


def test_a_long_line_keeps_constant_lineage() -> None:
    g: ag.Graph = ag.Graph()
    g.add_vertex("inc", lambda s: {"n": s["n"] + 1})
    g.add_edge(ag.START, "inc")
    g.add_conditional_edges("inc", lambda s: "inc" if s["n"] < 200 else ag.END)
    pos, steps = run_to_end(g, {"n": 0}, limit=500)
    assert len(steps) == 200
    assert pos.finished[0].node.parents == ()


def test_current_state_of_a_paused_fan_out_merges_what_is_in_flight() -> None:
    g: ag.Graph = ag.Graph()
    g.add_vertex("a", lambda s: {**s, "a": 1})
    g.add_vertex("b", lambda s: {**s, "b": 2})
    g.add_vertex("c", lambda s: s)
    g.add_edge(ag.START, "a")
    g.add_edge(ag.START, "b")
    g.add_edge("a", "c")
    g.add_edge("b", "c")
    g.add_edge("c", ag.END)
    spec = build_spec(g)
    pos = initial(spec, Node("in", {"x": 0}))
    tasks = plan(pos)
    superstep = SuperstepState(1, {t.id: run_attempt(spec, t, 1, ENV) for t in tasks})
    pos = commit(spec, pos, superstep)
    assert pos.next_vertices() == ("c",)
    assert current_state(pos, spec.merge) == {"x": 0, "a": 1, "b": 2}


def test_plan_gives_each_send_its_own_task_with_the_vertex_value() -> None:
    spec = build_spec(line("a"))
    root = Node("r", {})
    inbox = (
        ag._model.records.Message("a", root, "x", send=True, step=1),
        ag._model.records.Message("a", root, "x", send=True, step=1),
    )
    tasks = plan(Position(1, inbox, values={"a": 7}))
    assert [(t.id, t.value) for t in tasks] == [("a:0", 7), ("a:1", 7)]
    assert all(isinstance(t, Task) for t in tasks)
    _ = spec


def test_current_state_counts_a_send_as_the_state_it_came_from() -> None:
    sender = Node("out", {"items": [1, 2], "done": []})
    sends = tuple(
        ag._model.records.Message(
            "work", Node.child(f"out>{i}", {**sender.state, "item": i}, sender), "split", send=True
        )
        for i in (1, 2)
    )
    merge = build_spec(line("a")).merge
    assert current_state(Position(1, sends), merge) == {"items": [1, 2], "done": []}
