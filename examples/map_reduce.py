"""Map-reduce with Send: one task per item, then one vertex that sees every result.

Run it: python examples/map_reduce.py
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

import actorgraph as ag
from actorgraph.merge import Merge, append, by_key, replace

Returns = Literal["state", "update"]

State = dict[str, Any]


# --8<-- [start:graph]
def fan_out(state: State) -> list[ag.Send]:
    """The router: one `score` task per document, each with its own state."""
    return [ag.Send("score", {**state, "doc": doc}) for doc in state["docs"]]


def score(state: State) -> State:
    """The map step: runs once per Send, in parallel, with that Send's state alone."""
    doc = state["doc"]
    return {**state, "scores": [*state["scores"], (doc, len(doc.split()))]}


def rank(state: State) -> State:
    """The reduce step: runs once, with every task's state merged."""
    best = max(state["scores"], key=lambda pair: pair[1])
    return {**state, "best": best[0]}


def build(
    merge: Merge | None, worker: Callable[[State], State] = score, returns: Returns | None = None
) -> ag.Graph[State]:
    graph: ag.Graph[State] = ag.Graph(merge=merge, name="map-reduce")
    graph.add_vertex("score", worker, returns=returns)
    graph.add_vertex("rank", rank)
    graph.add_conditional_edges(ag.START, fan_out, ["score"])
    graph.add_edge("score", "rank")
    graph.add_edge("rank", ag.END)
    return graph


# --8<-- [end:graph]

DOCS = ["actors share nothing", "a superstep runs every vertex with messages", "merge by lineage"]


def with_reducers() -> None:
    # --8<-- [start:run]
    merge = by_key({"scores": append, "doc": replace})  # a reducer for the per-item key
    tasks: list[str] = []
    with build(merge).compile() as app:
        for mode, item in app.stream({"docs": DOCS, "scores": []}, mode=["updates", "values"]):
            if mode == "updates":
                tasks.extend(item)  # {task_id: state} for each finished task
            else:
                state = item  # the run's state after each superstep; the last is the result
    print("tasks:", sorted(tasks))
    print("best:", state["best"])
    # --8<-- [end:run]
    assert sorted(tasks) == ["rank", "score:0", "score:1", "score:2"]
    assert sorted(state["scores"]) == sorted((d, len(d.split())) for d in DOCS)
    assert state["best"] == DOCS[1]


# --8<-- [start:drop]
def score_and_drop(state: State) -> State:
    """The other fix: the worker deletes the per-item key before its state is merged."""
    new = score(state)
    del new["doc"]
    return new


dropping = build(by_key({"scores": append}), worker=score_and_drop, returns="state")  # deletes on purpose
# --8<-- [end:drop]


# --8<-- [start:update]
def fan_out_items(state: State) -> list[ag.Send]:
    """LangGraph's map: each Send carries only its item, the worker's own input."""
    return [ag.Send("score", {"doc": doc}) for doc in state["docs"]]


def score_item(item: State) -> State:
    """An update-returning worker: given its payload, it returns only what it adds to the state."""
    return {"scores": [(item["doc"], len(item["doc"].split()))]}


def build_by_updates() -> ag.Graph[State]:
    graph: ag.Graph[State] = ag.Graph(merge=by_key({"scores": append}), name="map-reduce")
    graph.add_vertex("score", score_item, returns="update")  # the payload is its input, not the state
    graph.add_vertex("rank", rank)
    graph.add_conditional_edges(ag.START, fan_out_items, ["score"])
    graph.add_edge("score", "rank")
    graph.add_edge("rank", ag.END)
    return graph


# --8<-- [end:update]


def without_a_reducer() -> None:
    # --8<-- [start:conflict]
    conflict = None
    with build(by_key({"scores": append})).compile() as app:
        try:
            app.invoke({"docs": DOCS, "scores": []})
        except ag.MergeConflictError as exc:
            print(f"no reducer for 'doc': conflict on {exc.key!r} between {', '.join(exc.vertices)}")
            conflict = exc
    # --8<-- [end:conflict]
    assert conflict is not None, "the default merge must refuse the per-item key"
    assert conflict.key == "doc"
    assert conflict.vertices == ("score:0", "score:1", "score:2")

    with dropping.compile() as app:
        state = app.invoke({"docs": DOCS, "scores": []}).state
    print("worker drops 'doc':", state["best"])
    assert "doc" not in state
    assert state["best"] == DOCS[1]


def by_updates() -> None:
    # --8<-- [start:run-updates]
    with build_by_updates().compile() as app:
        state = app.invoke({"docs": DOCS, "scores": []}).state
    print("by updates:", sorted(state), state["best"])
    # --8<-- [end:run-updates]
    assert state["docs"] == DOCS
    assert len(state["scores"]) == len(DOCS)


def main() -> None:
    with_reducers()
    without_a_reducer()
    by_updates()


if __name__ == "__main__":
    main()
