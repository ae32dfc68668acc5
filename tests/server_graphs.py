"""Graphs for the API server's tests (`tests/server/`): module-level vertices, which Ray's workers import."""

from __future__ import annotations

import operator
from typing import Annotated, Any

import actorgraph as ag
from actorgraph.func import entrypoint
from actorgraph.messages import MessagesState


class ChatState(MessagesState, total=False):
    """A conversation, a counter and a log that every vertex appends to."""

    n: int
    log: Annotated[list[str], operator.add]


def greet(state: ChatState, ctx: ag.Context[Any]) -> dict[str, Any]:
    ctx.emit({"progress": 1})
    ctx.stream_message("hel", id="streamed")
    ctx.stream_message("lo", id="streamed")
    return {"n": state.get("n", 0) + 1, "log": ["greet"], "messages": [("assistant", "hello")]}


def ask(state: ChatState) -> dict[str, Any]:
    answer = ag.interrupt({"question": "go on?"})
    return {"log": [f"ask:{answer}"]}


def finish(state: ChatState) -> dict[str, Any]:
    return {"n": state["n"] * 10, "log": ["finish"]}


def chat_graph() -> ag.Graph[Any]:
    """greet -> ask (pauses with a question) -> finish; update-returning vertices."""
    graph: ag.Graph[Any] = ag.Graph(state=ChatState, returns="update")
    graph.add_vertex("greet", greet).add_vertex("ask", ask).add_vertex("finish", finish)
    graph.add_edge(ag.START, "greet").add_edge("greet", "ask").add_edge("ask", "finish").add_edge(
        "finish", ag.END
    )
    return graph


def increment(state: dict[str, Any]) -> dict[str, Any]:
    return {**state, "n": state["n"] + 1}


def counter_graph() -> ag.Graph[Any]:
    """One whole-state vertex that adds one to `n` (its update is computed from the whole state)."""
    graph: ag.Graph[Any] = ag.Graph()
    graph.add_vertex("increment", increment).add_edge(ag.START, "increment").add_edge("increment", ag.END)
    return graph


def explode(state: dict[str, Any]) -> dict[str, Any]:
    msg = "boom!"
    raise ValueError(msg)


def failing_graph() -> ag.Graph[Any]:
    """One vertex that always fails."""
    graph: ag.Graph[Any] = ag.Graph()
    graph.add_vertex("explode", explode).add_edge(ag.START, "explode").add_edge("explode", ag.END)
    return graph


def nested_graph() -> ag.Graph[Any]:
    """A parent whose one vertex is the counter graph (its events are a subgraph's)."""
    graph: ag.Graph[Any] = ag.Graph()
    graph.add_vertex("inner", counter_graph()).add_edge(ag.START, "inner").add_edge("inner", ag.END)
    return graph


def slow(state: dict[str, Any]) -> dict[str, Any]:
    import time

    time.sleep(float(state.get("sleep", 0.5)))
    return {**state, "slept": True}


def slow_graph() -> ag.Graph[Any]:
    """One vertex that sleeps `sleep` seconds (0.5 by default): a run that is busy for a while."""
    graph: ag.Graph[Any] = ag.Graph()
    graph.add_vertex("slow", slow).add_edge(ag.START, "slow").add_edge("slow", ag.END)
    return graph


def doubled(value: int) -> int:
    """An entrypoint's function: its input doubled."""
    return value * 2


def graphs() -> dict[str, Any]:
    """The graphs every server of the tests serves, by name."""
    return {
        "chat": chat_graph(),
        "counter": counter_graph(),
        "failing": failing_graph(),
        "nested": nested_graph(),
        "slow": slow_graph(),
        "compiled": counter_graph().compile(),
        # made here, not at import: an entrypoint never closed would keep every task's actors
        # (they close with the last open entrypoint), which the tests' leak check would report
        "doubled": entrypoint()(doubled),
    }
