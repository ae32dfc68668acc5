"""Deferred vertices and the node cache: an aggregator that runs once, and a vertex that is not called twice.

Run it: python examples/cache_and_defer.py
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import actorgraph as ag
from actorgraph import events
from actorgraph.merge import append, by_key

State = dict[str, Any]


# --8<-- [start:defer]
def found(source: str) -> Any:
    return lambda _state: {"found": [source]}


def report(state: State) -> State:
    return {"report": f"{len(state['found'])} sources: {', '.join(state['found'])}"}


def research() -> ag.Graph[State]:
    """A quick search (1 superstep) and a deep one (3 supersteps), then one report of both."""
    graph: ag.Graph[State] = ag.Graph(merge=by_key({"found": append}), returns="update", name="research")
    for name, source in (("quick", "wiki"), ("crawl", "site"), ("parse", "pdf"), ("rank", "paper")):
        graph.add_vertex(name, found(source))
    graph.add_vertex("report", report, defer=True)  # waits until no other vertex has work
    graph.add_edge(ag.START, "quick")
    graph.add_edge(ag.START, "crawl")
    graph.add_edge("crawl", "parse")
    graph.add_edge("parse", "rank")
    graph.add_edge("quick", "report")
    graph.add_edge("rank", "report")
    graph.add_edge("report", ag.END)
    return graph


# --8<-- [end:defer]


def show_defer() -> None:
    # --8<-- [start:defer-run]
    with research().compile() as app:
        for event in app.stream({"found": []}, mode="events"):
            if isinstance(event, events.SuperstepStarted):
                print(f"superstep {event.step}: {', '.join(event.tasks)}")
            elif isinstance(event, events.RunFinished):
                print(event.state["report"])
    # --8<-- [end:defer-run]


calls: list[str] = []


# --8<-- [start:cache]
def summarize(state: State) -> State:
    calls.append(state["text"])  # stands for a slow, paid model call
    return {"summary": state["text"][:12] + "..."}


def summarizer() -> ag.Graph[State]:
    graph: ag.Graph[State] = ag.Graph(returns="update", name="summarizer")
    graph.add_vertex("summarize", summarize, cache=ag.CachePolicy(ttl=3600))
    graph.add_edge(ag.START, "summarize")
    graph.add_edge("summarize", ag.END)
    return graph


# --8<-- [end:cache]


def show_cache(folder: Path) -> None:
    text = {"text": "Supersteps run every vertex with messages, in parallel."}
    # --8<-- [start:cache-run]
    with ag.SqliteCache(folder / "cache.db") as cache:
        with summarizer().compile(cache=cache) as app:
            app.invoke(text)
            hit = [e for e in app.stream(text, mode="events") if isinstance(e, events.TaskFinished)]
            print(f"second run: cached={hit[0].cached}")
        with summarizer().compile(cache=cache) as again:  # another process would hit it too
            print(again.invoke(text).state["summary"])
            again.clear_cache(["summarize"])
            again.invoke(text)
    print(f"the model was called {len(calls)} times")
    # --8<-- [end:cache-run]


def main() -> None:
    show_defer()
    with tempfile.TemporaryDirectory() as folder:
        show_cache(Path(folder))


if __name__ == "__main__":
    main()
