"""A compiled graph invoked inside a vertex function: it nests in the vertex's task.

Run it: python examples/nested_invoke.py
"""

from __future__ import annotations

from typing import Any

from actorgraph import END, START, Command, Graph, interrupt
from actorgraph.checkpoint import MemoryCheckpointer

State = dict[str, Any]
ran = {"draft": 0, "review": 0}


def draft(state: State) -> State:
    ran["draft"] += 1
    return {**state, "text": f"draft about {state['topic']}"}


def review(state: State) -> State:
    ran["review"] += 1
    return {**state, "verdict": interrupt({"read": state["text"]})}


writer_graph: Graph[State] = Graph(name="writer")
writer_graph.add_vertex("draft", draft)
writer_graph.add_vertex("review", review)
writer_graph.add_edge(START, "draft")
writer_graph.add_edge("draft", "review")
writer_graph.add_edge("review", END)


def main() -> None:
    with writer_graph.compile() as writer:
        # --8<-- [start:vertex]
        def publish(state: State) -> State:
            written = writer.invoke({"topic": state["topic"]})  # nests in this task's run
            return {**state, "published": written.state["verdict"] == "ok"}

        # --8<-- [end:vertex]
        g: Graph[State] = Graph(name="desk")
        g.add_vertex("publish", publish)
        g.add_edge(START, "publish")
        g.add_edge("publish", END)
        # --8<-- [start:run]
        with g.compile(MemoryCheckpointer()) as app:
            paused = app.invoke({"topic": "actors"}, thread_id="desk-1")
            print(f"{paused.status}: {paused.interrupts[0].vertex} asks {paused.interrupts[0].value}")
            done = app.invoke(Command(resume="ok"), thread_id="desk-1")
            print(f"{done.status}: published={done.state['published']}, runs: {ran}")
        # --8<-- [end:run]


if __name__ == "__main__":
    main()
