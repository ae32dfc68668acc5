"""Fan out to three researchers in parallel, join their notes, write a brief.

Run it: python examples/quickstart.py
"""

# --8<-- [start:all]
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import actorgraph as ag
from actorgraph.merge import append, by_key

State = dict[str, Any]


def plan(state: State) -> State:
    return {**state, "questions": [f"What is known about {state['topic']}?"]}


def researcher(source: str) -> Callable[[State], State]:
    def research(state: State) -> State:
        note = f"[{source}] {len(state['questions'])} question(s) on {state['topic']}"
        return {**state, "notes": [*state["notes"], note]}

    return research


def write(state: State) -> State:
    lines = "\n".join(f"  - {note}" for note in sorted(state["notes"]))
    return {**state, "brief": f"Brief on {state['topic']}:\n{lines}"}


def build() -> ag.Graph[State]:
    """Plan -> (web, papers, news in parallel) -> write, joined once all three report."""
    graph: ag.Graph[State] = ag.Graph(merge=by_key({"notes": append}), name="quickstart")
    graph.add_vertex("plan", plan)
    for source in ("web", "papers", "news"):
        graph.add_vertex(source, researcher(source))
        graph.add_edge("plan", source)
    graph.add_vertex("write", write)
    graph.add_edge(ag.START, "plan")
    graph.add_edge(["web", "papers", "news"], "write")
    graph.add_edge("write", ag.END)
    return graph


def main() -> State:
    with build().compile() as app:
        result = app.invoke({"topic": "actor models", "notes": []})
    print(result.state["brief"])
    print(f"status: {result.status}, supersteps: {result.step}")
    return result.state


if __name__ == "__main__":
    main()
# --8<-- [end:all]
