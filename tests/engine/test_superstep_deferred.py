"""Deferred vertices in the pure superstep logic: held back in the inbox until only they have work."""

from __future__ import annotations

import dataclasses

import deferred_graphs
import pytest

import actorgraph as ag
from actorgraph._build.validate import build_spec
from actorgraph._engine.superstep import Position, commit, held, initial, next_vertices, plan
from actorgraph._engine.task import TaskEnv, run_attempt
from actorgraph._model.records import Node, SuperstepState
from actorgraph._model.spec import GraphSpec

ENV = TaskEnv(node_prefix="t/")


def uneven(*, defer: bool = True) -> ag.Graph:
    return deferred_graphs.uneven(lambda s: {"log": [f"agg{len(s['log'])}"]}, defer=defer)


def drive(spec: GraphSpec, pos: Position, limit: int = 50) -> tuple[Position, list[list[str]]]:
    """Run to the end with the pure functions; the task ids of every superstep."""
    ran = []
    while not pos.done and len(ran) < limit:
        tasks = plan(pos, spec.deferred)
        ran.append([t.id for t in tasks])
        superstep = SuperstepState(pos.step + 1, {t.id: run_attempt(spec, t, 1, ENV) for t in tasks})
        pos = commit(spec, pos, superstep)
    return pos, ran


def test_the_deferred_aggregator_runs_once_at_the_end_with_both_branches() -> None:
    spec = build_spec(uneven())
    assert spec.deferred == frozenset({"agg"})
    pos, ran = drive(spec, initial(spec, Node("t/0:input", {"log": []})))
    assert ran == [["a", "b1"], ["b2"], ["b3"], ["agg"]]
    finished = [m.node.state for m in pos.finished]
    assert finished == [{"log": ["a", "b1", "b2", "b3", "agg4"]}]


def test_without_defer_the_aggregator_runs_once_per_branch() -> None:
    spec = build_spec(uneven(defer=False))
    _, ran = drive(spec, initial(spec, Node("t/0:input", {"log": []})))
    assert ran == [["a", "b1"], ["agg", "b2"], ["b3"], ["agg"]]


def test_held_messages_stay_in_the_inbox_and_next_leaves_them_out() -> None:
    spec = build_spec(uneven())
    pos = initial(spec, Node("t/0:input", {"log": []}))
    tasks = plan(pos, spec.deferred)
    superstep = SuperstepState(1, {t.id: run_attempt(spec, t, 1, ENV) for t in tasks})
    pos = commit(spec, pos, superstep)
    assert sorted(m.target for m in pos.inbox) == ["agg", "b2"]
    assert [m.target for m in held(pos.inbox, spec.deferred)] == ["agg"]
    assert next_vertices(spec, pos) == ("b2",)
    assert [t.id for t in plan(pos, spec.deferred)] == ["b2"]
    assert [t.id for t in plan(pos)] == ["agg", "b2"]  # a caller that forgets the set runs it early


def test_only_deferred_work_runs_at_once() -> None:
    spec = build_spec(uneven())
    inbox = initial(spec, Node("t/0:input", {"log": []})).inbox
    only = Position(3, tuple(dataclasses.replace(m, target="agg") for m in inbox))
    assert held(only.inbox, spec.deferred) == ()
    assert next_vertices(spec, only) == ("agg",)
    tasks = plan(only, spec.deferred)
    assert [t.id for t in tasks] == ["agg"]
    assert len(tasks[0].inputs) == 2  # one task, with every message it was held with


@pytest.mark.parametrize("deferred", [frozenset(), frozenset({"x"})])
def test_a_graph_without_waiting_deferred_work_plans_as_before(deferred: frozenset[str]) -> None:
    spec = build_spec(uneven())
    pos = initial(spec, Node("t/0:input", {"log": []}))
    assert [t.id for t in plan(pos, deferred)] == ["a", "b1"]
