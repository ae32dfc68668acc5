"""Draft, critique, revise: a conditional loop that ends when the draft is good enough.

Run it: python examples/refine_loop.py
"""

from __future__ import annotations

from typing import Any

import actorgraph as ag

State = dict[str, Any]
GOOD_ENOUGH = 0.8
MAX_ROUNDS = 5


def draft(state: State) -> State:
    return {**state, "text": f"A note on {state['topic']}.", "round": 0}


def critique(state: State) -> State:
    # a stand-in for an LLM judge: longer drafts score higher
    score = min(1.0, len(state["text"]) / 120)
    return {**state, "score": round(score, 2)}


def revise(state: State) -> State:
    extra = f" Revision {state['round'] + 1} adds detail about {state['topic']}."
    return {**state, "text": state["text"] + extra, "round": state["round"] + 1}


def next_step(state: State) -> str:
    if state["score"] >= GOOD_ENOUGH or state["round"] >= MAX_ROUNDS:
        return "done"
    return "revise"


def build() -> ag.Graph[State]:
    """Draft -> critique -> (revise -> critique)* -> END."""
    graph: ag.Graph[State] = ag.Graph(name="refine")
    graph.add_vertex("draft", draft)
    graph.add_vertex("critique", critique)
    graph.add_vertex("revise", revise)
    graph.add_edge(ag.START, "draft")
    graph.add_edge("draft", "critique")
    graph.add_conditional_edges("critique", next_step, {"revise": "revise", "done": ag.END})
    graph.add_edge("revise", "critique")
    return graph


def main() -> State:
    with build().compile() as app:
        result = app.invoke({"topic": "supersteps"})
    state = result.state
    print(f"after {state['round']} revision(s), score {state['score']}:")
    print(state["text"])
    return state


if __name__ == "__main__":
    main()
