"""Stateful subgraphs, and a waiting subgraph's state corrected by its namespace.

A help desk hands each question to an assistant graph compiled with
`checkpointer=True`: the assistant keeps its own notes between the desk's runs
on a thread, turn after turn. A mailer runs an approval subgraph that asks a
person; before answering, the person corrects the draft the waiting subgraph
holds, with `update_state(..., namespace=...)`, and the answer continues it.

Run it: python examples/stateful_subgraphs.py
"""

from __future__ import annotations

from typing import Any

import actorgraph as ag
from actorgraph.checkpoint import MemoryCheckpointer
from actorgraph.merge import append, by_key

State = dict[str, Any]


# --8<-- [start:assistant]
def answer(state: State) -> State:
    question = state["notes"][-1]
    return {"notes": [f"answered {question!r} (note {len(state['notes']) + 1})"]}


def assistant() -> ag.CompiledGraph[State]:
    graph: ag.Graph[State] = ag.Graph(name="assistant", merge=by_key({"notes": append}), returns="update")
    graph.add_vertex("answer", answer)
    graph.add_edge(ag.START, "answer")
    graph.add_edge("answer", ag.END)
    return graph.compile(checkpointer=True)  # keeps its notes between the desk's runs


def desk() -> ag.Graph[State]:
    graph: ag.Graph[State] = ag.Graph(name="desk")
    graph.add_vertex(
        "assistant",
        assistant(),
        input=lambda state: {"notes": [state["question"]]},  # appended to the notes it keeps
        output=lambda final: {"reply": final["notes"][-1]},
    )
    graph.add_edge(ag.START, "assistant")
    graph.add_edge("assistant", ag.END)
    return graph


# --8<-- [end:assistant]


# --8<-- [start:mailer]
def review(state: State) -> State:
    verdict = ag.interrupt(f"send {state['draft']!r}?")
    return {**state, "sent": state["draft"] if verdict == "yes" else None}


def mailer() -> ag.Graph[State]:
    approval: ag.Graph[State] = ag.Graph(name="approval")
    approval.add_vertex("review", review)
    approval.add_edge(ag.START, "review")
    approval.add_edge("review", ag.END)
    graph: ag.Graph[State] = ag.Graph(name="mailer")
    graph.add_vertex("approve", approval)
    graph.add_edge(ag.START, "approve")
    graph.add_edge("approve", ag.END)
    return graph


# --8<-- [end:mailer]


def main() -> None:
    """Two turns of the desk on one thread, one on another; then a draft corrected while it waits."""
    # --8<-- [start:turns]
    with desk().compile(MemoryCheckpointer()) as app:
        for question in ("reset my password", "and my email?"):
            print(app.invoke({"question": question}, thread_id="ann").state["reply"])
        print(f"its notes on ann's thread: {app.get_state('ann', namespace='assistant').state['notes']}")
        print(app.invoke({"question": "hello"}, thread_id="bob").state["reply"])  # another thread
    # --8<-- [end:turns]

    # --8<-- [start:correct]
    with mailer().compile(MemoryCheckpointer()) as app:
        app.invoke({"draft": "Dear Sir"}, thread_id="mail-1")
        (namespace,) = app.get_state("mail-1", subgraphs=True).subgraphs  # approve@1~...
        app.update_state("mail-1", {"draft": "Dear Ann"}, namespace=namespace)  # the waiting run's state
        done = app.invoke(ag.Command(resume="yes"), thread_id="mail-1")
        print(f"sent: {done.state['sent']}")
    # --8<-- [end:correct]


if __name__ == "__main__":
    main()
