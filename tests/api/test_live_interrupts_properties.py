"""Property: live interrupts end where the fallback path ends, and run each vertex's code once.

Random layered graphs whose vertices ask 0 to 2 questions each; the pending
questions are answered in random batches. With the live path on, every vertex
function starts exactly once; with it off, it starts again for each answer;
the final states are equal either way.
"""

from __future__ import annotations

import itertools
import threading
from collections import Counter
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import actorgraph as ag
from actorgraph.checkpoint import MemoryCheckpointer
from actorgraph.merge import append, by_key

pytestmark = [
    pytest.mark.slow,
    pytest.mark.threads_only("the vertices count their starts in this process; Ray runs no live path"),
]

layers_of = st.lists(st.lists(st.integers(0, 2), min_size=1, max_size=3), min_size=1, max_size=3)


def layered(layers: list[list[int]], starts: Counter[str], lock: threading.Lock) -> ag.Graph:
    """Layer i's vertices all feed every vertex of layer i + 1; `v{i}_{j}` asks layers[i][j] questions."""
    g: ag.Graph = ag.Graph(merge=by_key({"log": append}))
    names = [[f"v{i}_{j}" for j in range(len(layer))] for i, layer in enumerate(layers)]
    for layer, row in zip(layers, names, strict=True):
        for asks, name in zip(layer, row, strict=True):
            g.add_vertex(name, _asking(name, asks, starts, lock), returns="update")
    for name in names[0]:
        g.add_edge(ag.START, name)
    for before, after in itertools.pairwise(names):
        for src in before:
            for dst in after:
                g.add_edge(src, dst)
    for name in names[-1]:
        g.add_edge(name, ag.END)
    return g


def _asking(name: str, asks: int, starts: Counter[str], lock: threading.Lock) -> Any:
    def vertex(state: dict[str, Any]) -> dict[str, Any]:
        with lock:
            starts[name] += 1
        answers = [ag.interrupt(f"{name}#{i}") for i in range(asks)]
        return {"log": [f"{name}={answers}"]}

    return vertex


def finish(app: ag.CompiledGraph[Any], picks: st.DataObject) -> Any:
    result = app.invoke({"log": []}, thread_id="p")
    while result.status == "interrupted":
        pending = sorted(result.interrupts, key=lambda i: i.value)
        batch = picks.draw(st.lists(st.sampled_from(pending), min_size=1, unique_by=lambda i: i.id))
        result = app.invoke(ag.Command(resume={i.id: str(i.value).upper() for i in batch}), thread_id="p")
    return sorted(result.state["log"])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(layers=layers_of, picks=st.data())
def test_the_live_path_ends_as_the_fallback_path_with_each_vertex_started_once(
    layers: list[list[int]], picks: st.DataObject
) -> None:
    lock = threading.Lock()
    ended = []
    for live in (600.0, None):
        starts: Counter[str] = Counter()
        with layered(layers, starts, lock).compile(MemoryCheckpointer(), live_interrupts=live) as app:
            ended.append(finish(app, picks))
        if live is not None:
            assert set(starts.values()) == {1}, starts  # no vertex code ran twice
        else:
            asked = sum(1 for layer in layers for asks in layer if asks)
            assert sum(starts.values()) >= sum(len(layer) for layer in layers) + asked
    assert ended[0] == ended[1]
