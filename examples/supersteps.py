"""Supersteps and messages: who runs when, and what each vertex sees.

Run it: python examples/supersteps.py
"""

from __future__ import annotations

from typing import Any

import actorgraph as ag
from actorgraph import events
from actorgraph.merge import append, by_key

State = dict[str, Any]


# --8<-- [start:fan-out]
def split(state: State) -> State:
    return {**state, "seen": ["split"]}


def left(state: State) -> State:
    # runs in the same superstep as `right`: it sees split's state, never right's
    return {**state, "seen": [*state["seen"], "left"], "left_saw": list(state["seen"])}


def right(state: State) -> State:
    return {**state, "seen": [*state["seen"], "right"], "right_saw": list(state["seen"])}


def total(state: State) -> State:
    return {**state, "total_saw": sorted(state["seen"])}


def fan_out() -> ag.Graph[State]:
    """START -> split -> (left, right) -> join -> total -> END."""
    graph: ag.Graph[State] = ag.Graph(merge=by_key({"seen": append}), name="fan-out")
    for name, fn in (("split", split), ("left", left), ("right", right), ("total", total)):
        graph.add_vertex(name, fn)
    graph.add_edge(ag.START, "split")
    graph.add_edge("split", "left")
    graph.add_edge("split", "right")
    graph.add_edge(["left", "right"], "total")  # a join: total waits for both
    graph.add_edge("total", ag.END)
    return graph


# --8<-- [end:fan-out]


def show_supersteps() -> None:
    # --8<-- [start:watch]
    plan: dict[int, tuple[str, ...]] = {}
    with fan_out().compile() as app:
        for event in app.stream({}, mode="events"):
            if isinstance(event, events.SuperstepStarted):
                plan[event.step] = event.tasks
                print(f"superstep {event.step}: {', '.join(event.tasks)}")
            elif isinstance(event, events.RunFinished):
                state = event.state
    # --8<-- [end:watch]
    assert plan == {1: ("split",), 2: ("left", "right"), 3: ("total",)}
    assert state["left_saw"] == state["right_saw"] == ["split"]
    assert state["total_saw"] == ["left", "right", "split"]


# --8<-- [start:command]
def triage(state: State) -> ag.Command:
    """Update the state and route by value; the static edge to `log` still fires."""
    urgent = "outage" in state["text"]
    return ag.Command(update={"urgent": urgent}, goto="page_oncall" if urgent else ())


def commands() -> ag.Graph[State]:
    graph: ag.Graph[State] = ag.Graph(name="triage")
    graph.add_vertex("triage", triage, destinations=["page_oncall"])
    graph.add_vertex("page_oncall", lambda s: {**s, "paged": True})
    graph.add_vertex("log", lambda s: {**s, "logged": True})
    graph.add_edge(ag.START, "triage")
    graph.add_edge("triage", "log")
    graph.add_edge("page_oncall", ag.END)
    graph.add_edge("log", ag.END)
    return graph


# --8<-- [end:command]


def show_commands() -> None:
    with commands().compile() as app:
        calm = app.invoke({"text": "a question"}).state
        urgent = app.invoke({"text": "database outage"}).state
    print(f"calm: {calm}\nurgent: {urgent}")
    assert calm == {"text": "a question", "urgent": False, "logged": True}
    assert urgent == {"text": "database outage", "urgent": True, "logged": True, "paged": True}


# --8<-- [start:value]
def poll(state: State, ctx: ag.Context[Any]) -> State:
    """Count this vertex's own runs in its private value, outside the shared state."""
    ctx.value = (ctx.value or 0) + 1
    return {**state, "ready": ctx.value >= 3}


def polling() -> ag.Graph[State]:
    graph: ag.Graph[State] = ag.Graph(name="poll")
    graph.add_vertex("poll", poll)
    graph.add_edge(ag.START, "poll")
    graph.add_conditional_edges("poll", lambda s: ag.END if s["ready"] else "poll", ["poll", ag.END])
    return graph


# --8<-- [end:value]


def show_value_and_limit() -> None:
    # --8<-- [start:limit]
    with polling().compile() as app:
        result = app.invoke({})
        print(f"ready after {result.step} supersteps")
        try:
            app.invoke({}, recursion_limit=2)
        except ag.RecursionLimitError as exc:
            print(f"stopped: {exc}")
    # --8<-- [end:limit]
    assert result.state == {"ready": True}
    assert result.step == 3


def main() -> None:
    show_supersteps()
    show_commands()
    show_value_and_limit()


if __name__ == "__main__":
    main()
