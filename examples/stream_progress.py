"""Watch a map-reduce run as it goes: progress from every task, then the result.

Run it: python examples/stream_progress.py
"""

from __future__ import annotations

import time
from typing import Any

import actorgraph as ag
from actorgraph import events
from actorgraph.merge import append, by_key

State = dict[str, Any]


def split(state: State) -> State:
    """Nothing to do but fan out (the router sends one task per page)."""
    return state


def summarize(state: State, ctx: ag.Context[Any]) -> State:
    """Summarize one page, reporting progress as it goes."""
    for part in ("reading", "thinking"):
        ctx.emit({"page": state["page"], "doing": part})
        time.sleep(0.01)
    return {"summaries": [f"page {state['page']}: {len(state['text'].split())} words"]}


def combine(state: State) -> State:
    """Join every page's summary into one report."""
    return {**state, "report": "\n".join(sorted(state["summaries"]))}


def build() -> ag.Graph[State]:
    """Build the flow: split, one `summarize` task per page (Send), then combine."""
    graph: ag.Graph[State] = ag.Graph(merge=by_key({"summaries": append}), name="pages")
    graph.add_vertex("split", split)
    graph.add_vertex("summarize", summarize, returns="update")  # its payload is its own input
    graph.add_vertex("combine", combine)
    graph.add_edge(ag.START, "split")
    graph.add_conditional_edges(
        "split",
        lambda s: [ag.Send("summarize", {"page": i, "text": text}) for i, text in enumerate(s["pages"], 1)],
        ["summarize"],
    )
    graph.add_edge("summarize", "combine")
    graph.add_edge("combine", ag.END)
    return graph


def main() -> State:
    pages = ["the actor model", "supersteps and messages", "merging without loss", "durable runs"]
    done = 0
    state: State = {}
    with build().compile() as app:
        for mode, item in app.stream({"pages": pages, "summaries": []}, mode=["custom", "events", "values"]):
            if mode == "custom":
                print(f"  page {item['page']}: {item['doing']}")
            elif mode == "events" and isinstance(item, events.TaskFinished) and item.result.ok:
                if item.result.vertex != "summarize":
                    continue
                done += 1
                print(f"[{'#' * done}{'.' * (len(pages) - done)}] {done}/{len(pages)} pages summarized")
            elif mode == "values":
                state = item
    print(state["report"])
    return state


if __name__ == "__main__":
    main()
