"""A supervisor routing between two agent subgraphs, which hand control back with `Command(graph=PARENT)`.

Each agent is a graph of its own (think, then act). An agent ends its turn by
returning `Command(graph=ag.PARENT, goto=..., update=...)`: its run ends, and
the parent routes to `goto` with `update` applied. The writer asks the
researcher directly when its facts are too thin; the supervisor decides the rest.

Run it: python examples/supervisor.py
"""

# --8<-- [start:imports]
from __future__ import annotations

from typing import Any

import actorgraph as ag
from actorgraph.checkpoint import MemoryCheckpointer
from actorgraph.merge import append, by_key

# --8<-- [end:imports]

State = dict[str, Any]


# --8<-- [start:agents]
def researcher() -> ag.Graph[State]:
    """Looks one fact up per turn, then reports to the supervisor."""

    def think(state: State) -> State:  # a model call would go here
        return {**state, "query": f"fact {len(state['facts']) + 1} on {state['topic']}"}

    def act(state: State) -> ag.Command:
        fact = f"{state['query']}: found"
        return ag.Command(graph=ag.PARENT, goto="supervisor", update={"facts": [fact], "log": ["researcher"]})

    return agent("researcher", think, act)


def writer() -> ag.Graph[State]:
    """Drafts once there are two facts; with fewer it hands straight to the researcher."""

    def think(state: State) -> State:
        return {**state, "enough": len(state["facts"]) >= 2}

    def act(state: State) -> ag.Command:
        if not state["enough"]:
            return ag.Command(graph=ag.PARENT, goto="researcher", update={"log": ["writer: need more"]})
        draft = f"{state['topic']}: " + "; ".join(state["facts"])
        return ag.Command(graph=ag.PARENT, goto="supervisor", update={"draft": draft, "log": ["writer"]})

    return agent("writer", think, act)


def agent(name: str, think: Any, act: Any) -> ag.Graph[State]:
    graph: ag.Graph[State] = ag.Graph(name=name)
    graph.add_vertex("think", think)
    graph.add_vertex("act", act)
    graph.add_edge(ag.START, "think")
    graph.add_edge("think", "act")
    graph.add_edge("act", ag.END)  # never taken: act always hands off to the parent
    return graph


# --8<-- [end:agents]


# --8<-- [start:supervisor]
def supervisor(state: State) -> ag.Command:
    """Routes: no facts yet -> researcher, no draft -> writer, else the run ends."""
    if not state["facts"]:
        return ag.Command(goto="researcher")
    if "draft" not in state:
        return ag.Command(goto="writer")
    return ag.Command(goto=ag.END)


def team() -> ag.Graph[State]:
    graph: ag.Graph[State] = ag.Graph(
        name="team", merge=by_key({"facts": append, "log": append}), returns="update"
    )
    graph.add_vertex("supervisor", supervisor, destinations=("researcher", "writer", ag.END))
    graph.add_vertex("researcher", researcher(), destinations=("supervisor",))
    graph.add_vertex("writer", writer(), destinations=("supervisor", "researcher"))
    graph.add_edge(ag.START, "supervisor")
    return graph


# --8<-- [end:supervisor]


def main() -> None:
    # --8<-- [start:run]
    with team().compile(MemoryCheckpointer()) as app:
        result = app.invoke({"topic": "actors", "facts": [], "log": []}, thread_id="team-1")
        print("turns:", " -> ".join(result.state["log"]))
        print("draft:", result.state["draft"])
        turns = [s.next[0] for s in reversed(app.get_history("team-1")) if s.next]
        print("vertices in order:", ", ".join(turns))
        # --8<-- [end:run]
        assert result.state["log"] == ["researcher", "writer: need more", "researcher", "writer"]
        assert turns == [
            "supervisor",
            "researcher",
            "supervisor",
            "writer",
            "researcher",
            "supervisor",
            "writer",
            "supervisor",
        ]


if __name__ == "__main__":
    main()
