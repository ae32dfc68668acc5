"""The small graph `python -m benchmarks.server` serves with `actorgraph server`: two steps on a counter.

`benchmarks/server_graph_langgraph.py` is the same graph in LangGraph, for the
reference server.
"""

from __future__ import annotations

from typing import Any, TypedDict

import actorgraph as ag


class Counter(TypedDict, total=False):
    """A number and the step that last changed it."""

    n: int
    by: str


def add_one(state: Counter) -> dict[str, Any]:
    return {"n": state.get("n", 0) + 1, "by": "add_one"}


def double(state: Counter) -> dict[str, Any]:
    return {"n": state["n"] * 2, "by": "double"}


graph: ag.Graph[Any] = ag.Graph(state=Counter, returns="update")
graph.add_vertex("add_one", add_one).add_vertex("double", double)
graph.add_edge(ag.START, "add_one").add_edge("add_one", "double").add_edge("double", ag.END)
