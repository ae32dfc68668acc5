"""LangGraph's idioms as its users write them: LangGraph's result, or a clear error where we differ.

The map-reduce below is LangGraph's own (a `Send` carries only its item; the
worker returns an update to a state with an `Annotated` reducer), in three
shapes: plain, killed and resumed in another process, and nested in a subgraph.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, TypedDict

import pytest
from mapreduce_child import ITEMS, Research, build
from shared import SharedList

import actorgraph as ag

CHILD = Path(__file__).resolve().parents[1] / "mapreduce_child.py"
EXPECTED = {"topic": "actors", "results": [0, 1, 4, 9, 16], "summary": "actors: [0, 1, 4, 9, 16]"}


def _sorted(state: dict[str, Any]) -> dict[str, Any]:
    return {**state, "results": sorted(state["results"])}


def test_map_reduce_with_partial_payloads_and_a_schema(compile_graph: Any) -> None:
    state = compile_graph(build()).invoke({"topic": "actors", "results": []}).state
    assert _sorted(state) == EXPECTED


@pytest.mark.slow
def test_map_reduce_with_partial_payloads_killed_and_resumed_ends_as_the_uninterrupted_run(
    tmp_path: Path,
) -> None:
    db, ledger = tmp_path / "runs.db", tmp_path / "ledger"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(CHILD.parent), *sys.path])}
    child = subprocess.Popen(
        [sys.executable, str(CHILD), "run", str(db), "t", str(ledger)], env={**env, "BLOCK": "1"}
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:  # items 0-2 finished and stored, 3 and 4 stuck
        lines = ledger.read_text().splitlines() if ledger.exists() else []
        if {"end:0", "end:1", "end:2", "start:3", "start:4"} <= set(lines):
            break
        time.sleep(0.05)
    time.sleep(0.3)  # the finished tasks' results reach the store (durability "sync")
    os.kill(child.pid, signal.SIGKILL)
    child.wait(30)
    resumed = subprocess.run(
        [sys.executable, str(CHILD), "resume", str(db), "t", str(ledger)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert _sorted(json.loads(resumed.stdout)) == EXPECTED
    starts = [line for line in ledger.read_text().splitlines() if line.startswith("start:")]
    assert sorted(starts) == sorted(f"start:{i}" for i in (*range(ITEMS), 3, 4))  # only 3 and 4 again


def test_map_reduce_with_partial_payloads_nested_in_a_subgraph(compile_graph: Any, store: Any) -> None:
    parent: ag.Graph[Research] = ag.Graph(state=Research, returns="update")
    parent.add_vertex("research", build())
    parent.add_vertex("publish", lambda s: {"summary": s["summary"] + " (published)"})
    parent.add_edge(ag.START, "research")
    parent.add_edge("research", "publish")
    parent.add_edge("publish", ag.END)
    app = compile_graph(parent, checkpointer=store)
    state = app.invoke({"topic": "actors", "results": []}, thread_id="n").state
    assert _sorted(state) == {**EXPECTED, "summary": EXPECTED["summary"] + " (published)"}


def test_a_whole_payload_changes_the_state_only_through_what_the_worker_returns(compile_graph: Any) -> None:
    class Counted(TypedDict):
        n: int
        seen: list[int]

    g: ag.Graph[Counted] = ag.Graph(state=Counted, merge=ag.merge.by_key({"seen": ag.merge.append}))
    g.add_vertex("work", lambda s: {"seen": [s["n"]]}, returns="update")
    g.add_conditional_edges(ag.START, lambda s: [ag.Send("work", {**s, "n": i}) for i in (1, 2, 3)], ["work"])
    g.add_edge("work", ag.END)
    state = compile_graph(g).invoke({"n": 0, "seen": []}).state
    assert state["n"] == 0 and sorted(state["seen"]) == [1, 2, 3]  # the payload's n never leaked


WHOLE_STATE = {
    "by default": ({}, {}),
    "said for the vertex": ({}, {"returns": "state"}),
    "said for the graph": ({"returns": "state"}, {}),
}
"""How a worker comes to return whole states: (Graph options, add_vertex options)."""


@pytest.mark.parametrize(("graph", "vertex"), WHOLE_STATE.values(), ids=WHOLE_STATE.keys())
def test_a_partial_payload_to_a_whole_state_worker_is_refused_at_the_router(
    compile_graph: Any, graph: dict[str, Any], vertex: dict[str, Any]
) -> None:
    """Before the worker runs (its output would replace the state), however it came to return whole states."""
    ran = SharedList()  # seen from every process (the vertex may run on a Ray worker)
    g: ag.Graph[Research] = ag.Graph(state=Research, **graph)
    g.add_vertex("plan", lambda s: s)
    g.add_vertex("work", lambda s: ran.append(s) or {**s, "results": [s["item"]]}, **vertex)
    g.add_edge(ag.START, "plan")
    g.add_conditional_edges("plan", lambda s: [ag.Send("work", {"item": i}) for i in range(2)], ["work"])
    g.add_edge("work", ag.END)
    with pytest.raises(ag.RoutingError) as caught:
        compile_graph(g).invoke({"topic": "t", "results": []})
    text = str(caught.value)
    assert "vertex 'plan' sent Send('work'" in text and "returns='update'" in text and "topic" in text
    assert list(ran) == []


@pytest.mark.parametrize(("graph", "vertex"), WHOLE_STATE.values(), ids=WHOLE_STATE.keys())
def test_a_partial_payload_to_a_whole_state_worker_without_a_schema_is_refused_too(
    compile_graph: Any, graph: dict[str, Any], vertex: dict[str, Any]
) -> None:
    g: ag.Graph[Any] = ag.Graph(**graph)
    g.add_vertex("work", lambda s: {**s, "done": True}, **vertex)
    g.add_conditional_edges(ag.START, lambda s: [ag.Send("work", {"item": 1})], ["work"])
    g.add_edge("work", ag.END)
    with pytest.raises(ag.RoutingError, match=r"START's router sent Send\('work'.*lacks the state's key"):
        compile_graph(g).invoke({"topic": "t"})
