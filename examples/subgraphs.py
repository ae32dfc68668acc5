"""Subgraphs: a graph as a vertex, its run checkpointed in the parent's thread.

A report pipeline runs a research graph, writes a draft, then runs an approval
graph that asks a person. The approval's question pauses the whole pipeline;
the answer reaches the inner vertex that asked.

Run it: python examples/subgraphs.py
"""

from __future__ import annotations

from typing import Any

import actorgraph as ag
from actorgraph.checkpoint import MemoryCheckpointer
from actorgraph.merge import append, by_key

State = dict[str, Any]


# --8<-- [start:research]
def search(state: State) -> State:
    return {**state, "notes": [f"{state['topic']}: 3 sources"]}


def summarize(state: State) -> State:
    return {**state, "summary": f"{state['topic']} in {len(state['notes'])} note(s)"}


def research() -> ag.Graph[State]:
    """A graph of its own: it runs alone, or as a vertex of another graph."""
    graph: ag.Graph[State] = ag.Graph(name="research")
    graph.add_vertex("search", search)
    graph.add_vertex("summarize", summarize)
    graph.add_edge(ag.START, "search")
    graph.add_edge("search", "summarize")
    graph.add_edge("summarize", ag.END)
    return graph


# --8<-- [end:research]


# --8<-- [start:approval]
def review(state: State) -> State:
    verdict = ag.interrupt(f"publish {state['draft']!r}?")
    return {**state, "approved": verdict == "yes"}


def approval() -> ag.Graph[State]:
    graph: ag.Graph[State] = ag.Graph(name="approval")
    graph.add_vertex("review", review)
    graph.add_edge(ag.START, "review")
    graph.add_edge("review", ag.END)
    return graph


# --8<-- [end:approval]


# --8<-- [start:pipeline]
def write(state: State) -> State:
    return {**state, "draft": f"Report: {state['summary']}"}


def pipeline() -> ag.Graph[State]:
    graph: ag.Graph[State] = ag.Graph(name="pipeline", merge=by_key({"notes": append}))
    graph.add_vertex(
        "research",
        research(),
        input=lambda state: {"topic": state["topic"], "notes": []},  # the child's own input
        output=lambda final: {"summary": final["summary"], "notes": final["notes"]},  # an update
    )
    graph.add_vertex("write", write)
    graph.add_vertex("approve", approval())  # no mappers: the state goes in, the final state comes out
    graph.add_edge(ag.START, "research")
    graph.add_edge("research", "write")
    graph.add_edge("write", "approve")
    graph.add_edge("approve", ag.END)
    return graph


# --8<-- [end:pipeline]


def main() -> None:
    # --8<-- [start:run]
    with pipeline().compile(MemoryCheckpointer()) as app:
        paused = app.invoke({"topic": "actors", "notes": ["kick-off"]}, thread_id="report-1")
        (question,) = paused.interrupts
        print(f"{paused.status}: {question.vertex} asks {question.value}")

        snapshot = app.get_state("report-1", subgraphs=True)
        for namespace, child in snapshot.subgraphs.items():
            print(f"  {namespace}: {child.status}, waiting in {child.next}")

        done = app.invoke(ag.Command(resume="yes"), thread_id="report-1")
        print(f"{done.status}: approved={done.state['approved']}, notes={done.state['notes']}")
        # --8<-- [end:run]
        assert question.vertex == "approve/review"
        assert done.state["notes"] == ["kick-off", "actors: 3 sources"]

        # --8<-- [start:history]
        first = app.get_history("report-1")[-1]  # the input: research runs next
        (namespace,) = app.get_state("report-1", first.checkpoint_id, subgraphs=True).subgraphs
        steps = [(s.step, s.next) for s in app.get_history("report-1", namespace=namespace)]
        print(f"research's own history, newest first: {steps}")
        # --8<-- [end:history]
        assert steps == [(2, ()), (1, ("summarize",)), (0, ("search",))]

        # --8<-- [start:stream]
        for namespace, update in app.stream(
            {"topic": "graphs", "notes": []}, thread_id="report-2", mode="updates", subgraphs=True
        ):
            where = "/".join(ns.partition("@")[0] for ns in namespace) or "pipeline"
            print(f"  [{where}] {', '.join(update)}")
        # --8<-- [end:stream]


if __name__ == "__main__":
    main()
