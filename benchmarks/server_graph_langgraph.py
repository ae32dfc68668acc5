"""The graph of `benchmarks/server_graph.py` in LangGraph, for `langgraph dev` (the reference server).

Imported by the reference server's own environment (`langgraph-cli[inmem]`),
which has LangGraph and not actorgraph.
"""

from __future__ import annotations

from typing import Any, TypedDict

from langgraph.graph import END, START, StateGraph


class Counter(TypedDict, total=False):
    """A number and the step that last changed it."""

    n: int
    by: str


def add_one(state: Counter) -> dict[str, Any]:
    return {"n": state.get("n", 0) + 1, "by": "add_one"}


def double(state: Counter) -> dict[str, Any]:
    return {"n": state["n"] * 2, "by": "double"}


builder = StateGraph(Counter)
builder.add_node("add_one", add_one).add_node("double", double)
builder.add_edge(START, "add_one").add_edge("add_one", "double").add_edge("double", END)
graph = builder.compile()
