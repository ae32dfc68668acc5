"""A run keeps one live copy of its state: not its input a second time, nor its starting position."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Callable
from typing import Any, ClassVar

import pytest

import actorgraph as ag

pytestmark = pytest.mark.threads_only("it counts the live copies of a value in this process")


class Tracked:
    """A value whose every copy is counted while it lives."""

    live: ClassVar[weakref.WeakSet[Tracked]] = weakref.WeakSet()

    def __init__(self) -> None:
        Tracked.live.add(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> Tracked:
        return Tracked()


def test_a_replaced_input_is_not_kept_alive(compile_graph: Callable[..., ag.CompiledGraph]) -> None:
    original = Tracked()
    alive_later: list[int] = []

    def step(state: dict[str, Any]) -> dict[str, Any]:
        if state["n"] == 3:  # two supersteps after the value was replaced
            gc.collect()
            alive_later.append(sum(1 for t in list(Tracked.live) if t is not original))
        return {"blob": "replaced", "n": state["n"] + 1}

    g: ag.Graph = ag.Graph()
    g.add_vertex("step", step)
    g.add_edge(ag.START, "step")
    g.add_conditional_edges("step", lambda s: "step" if s["n"] < 4 else ag.END, ["step", ag.END])
    app = compile_graph(g)
    assert app.invoke({"blob": original, "n": 0}).state == {"blob": "replaced", "n": 4}
    assert alive_later == [0], "copies of the run's input outlived the superstep that replaced it"
