"""The getting-started guide, step by step: build, run, checkpoint, pause, answer, look back.

Run it: python examples/getting_started.py [DIRECTORY]

It writes one SQLite file, in DIRECTORY or in a temporary directory.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path
from typing import Any

import actorgraph as ag
from actorgraph.checkpoint import SqliteCheckpointer

State = dict[str, Any]


# --8<-- [start:first-graph]
def classify(state: State) -> State:
    """Mark refund requests as needing a person."""
    return {**state, "refund": "refund" in state["text"]}


def draft(state: State) -> State:
    """Write a reply (a stand-in for an LLM call)."""
    return {**state, "reply": f"Thanks for your message about {state['text']!r}."}


def first_graph() -> ag.Graph[State]:
    """START -> classify -> draft -> END."""
    graph: ag.Graph[State] = ag.Graph(name="tickets")
    graph.add_vertex("classify", classify)
    graph.add_vertex("draft", draft)
    graph.add_edge(ag.START, "classify")
    graph.add_edge("classify", "draft")
    graph.add_edge("draft", ag.END)
    return graph


# --8<-- [end:first-graph]


def run_first_graph() -> None:
    # --8<-- [start:run]
    with first_graph().compile() as app:
        result = app.invoke({"text": "my order is late"})
    print(result.status, result.step, result.state["reply"])
    # --8<-- [end:run]
    assert result.status == "done"
    assert result.step == 2  # classify ran in superstep 1, draft in superstep 2
    assert result.state["refund"] is False


# --8<-- [start:review]
def review(state: State) -> State:
    """Pause the run until a person says whether the reply may go out."""
    answer = ag.interrupt({"question": "Send this reply?", "reply": state["reply"]})
    return {**state, "approved": answer == "yes"}


def send(state: State) -> State:
    """Send the reply, unless a person turned it down."""
    return {**state, "sent": state.get("approved", True)}


def support_graph() -> ag.Graph[State]:
    """The ticket flow: classify, draft, a review for refunds, send."""
    graph: ag.Graph[State] = ag.Graph(name="tickets")
    graph.add_vertex("classify", classify)
    graph.add_vertex("draft", draft)
    graph.add_vertex("review", review)
    graph.add_vertex("send", send)
    graph.add_edge(ag.START, "classify")
    graph.add_edge("classify", "draft")
    graph.add_conditional_edges("draft", lambda s: "review" if s["refund"] else "send", ["review", "send"])
    graph.add_edge("review", "send")
    graph.add_edge("send", ag.END)
    return graph


# --8<-- [end:review]


def run_with_a_thread(db: Path) -> None:
    # --8<-- [start:checkpointer]
    store = SqliteCheckpointer(db)
    with support_graph().compile(store) as app:
        result = app.invoke({"text": "please refund my order"}, thread_id="ticket-1")
    store.close()
    print(result.status, [pending.value["question"] for pending in result.interrupts])
    # --8<-- [end:checkpointer]
    assert result.status == "interrupted"
    assert result.state["refund"] is True
    assert "sent" not in result.state

    # --8<-- [start:answer]
    store = SqliteCheckpointer(db)  # later, maybe in another process
    with support_graph().compile(store) as app:
        result = app.invoke(ag.Command(resume="yes"), thread_id="ticket-1")
        print(result.status, result.state["sent"])
        # --8<-- [end:answer]
        assert result.status == "done"
        assert result.state["approved"] is True
        assert result.state["sent"] is True
        look_back(app)
    store.close()


def look_back(app: ag.CompiledGraph[State]) -> None:
    # --8<-- [start:history]
    snap = app.get_state("ticket-1")
    print(snap.status, snap.step, snap.next, sorted(snap.state))
    for old in app.get_history("ticket-1"):  # newest first
        print(f"  step {old.step}: {old.status:<11} source={old.source:<5} next={old.next}")
    # --8<-- [end:history]
    assert snap.status == "done"
    assert snap.next == ()
    history = app.get_history("ticket-1")
    assert [old.step for old in history] == [4, 3, 2, 1, 0]
    assert history[2].next == ("review",)
    assert history[2].superstep.results["review"].resumes == ("yes",)  # the answer is recorded


def main(directory: str | None = None) -> None:
    run_first_graph()
    with tempfile.TemporaryDirectory() as scratch:
        run_with_a_thread(Path(directory or scratch) / "tickets.db")
    print("getting started: all steps passed")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else None)
