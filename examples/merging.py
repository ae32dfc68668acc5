"""Merging by lineage: parallel branches change whole states, and no update is lost.

Run it: python examples/merging.py
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import actorgraph as ag
from actorgraph.merge import Merge, add, append, by_key, merge_dicts, three_way

State = dict[str, Any]


# --8<-- [start:plus]
def parallel(merge: Merge | None) -> ag.Graph[State]:
    """START -> (plus5, plus3) -> total -> END: plus5 and plus3 both run in superstep 1."""
    graph: ag.Graph[State] = ag.Graph(merge=merge, name="parallel")
    graph.add_vertex("plus5", lambda s: {**s, "n": s["n"] + 5})
    graph.add_vertex("plus3", lambda s: {**s, "n": s["n"] + 3})
    graph.add_vertex("total", lambda s: {**s, "total": s["n"]})
    for name in ("plus5", "plus3"):
        graph.add_edge(ag.START, name)
        graph.add_edge(name, "total")  # total gets both states in superstep 2, merged
    graph.add_edge("total", ag.END)
    return graph


def plus_five_plus_three() -> None:
    with parallel(by_key({"n": add})).compile() as app:
        result = app.invoke({"n": 10})
    print(f"with add: {result.state}")  # {'n': 18, 'total': 18}: 10 + 5 + 3

    conflict = None
    with parallel(None).compile() as app:  # the default three-way merge
        try:
            app.invoke({"n": 10})
        except ag.MergeConflictError as exc:
            print(f"without a reducer: {exc.key!r} changed by {exc.vertices} in superstep {exc.step}")
            conflict = exc
    # --8<-- [end:plus]
    assert result.state == {"n": 18, "total": 18}
    assert conflict is not None, "the default merge must refuse divergent changes"
    assert conflict.key == "n"
    assert conflict.vertices == ("plus3", "plus5")
    assert conflict.step == 2


def three_way_rules() -> None:
    # --8<-- [start:three-way]
    base = {"n": 10, "draft": "v1", "owner": "ann"}
    merged = three_way(
        base,
        [
            {"n": 15, "draft": "v1", "owner": "ann"},  # branch 1 changed n
            {"n": 10, "draft": "v1", "owner": "bob"},  # branch 2 changed owner ...
        ],
    )
    print(f"three-way: {merged}")  # {'n': 15, 'draft': 'v1', 'owner': 'bob'}
    deleted = three_way(base, [{"n": 10, "owner": "ann"}, base])  # a deleted key is a change too
    print(f"a deletion wins over no change: {deleted}")  # {'n': 10, 'owner': 'ann'}
    # --8<-- [end:three-way]
    assert merged == {"n": 15, "draft": "v1", "owner": "bob"}
    assert deleted == {"n": 10, "owner": "ann"}


# --8<-- [start:lineage]
def uneven(merge: Merge) -> ag.Graph[State]:
    """Two branches of different lengths after `prep`, joined before END."""
    graph: ag.Graph[State] = ag.Graph(merge=merge, name="uneven")
    graph.add_vertex("prep", lambda s: {**s, "n": 10})
    graph.add_vertex("a1", lambda s: {**s, "n": s["n"] + 1})
    graph.add_vertex("a2", lambda s: {**s, "n": s["n"] + 1})
    graph.add_vertex("b", lambda s: {**s, "n": s["n"] + 3})
    graph.add_vertex("join", lambda s: s)
    graph.add_edge(ag.START, "prep")
    graph.add_edge("prep", "a1")
    graph.add_edge("a1", "a2")
    graph.add_edge("prep", "b")
    graph.add_edge(["a2", "b"], "join")
    graph.add_edge("join", ag.END)
    return graph


def lowest_common_ancestor() -> None:
    with uneven(by_key({"n": add})).compile() as app:
        changes = app.invoke({}).state["n"]  # base = prep's output: 10 + 2 + 3
    with uneven(by_key({"n": lambda a, b: a + b})).compile() as app:
        values = app.invoke({}).state["n"]  # a plain function sees values: 12 + 13
    print(f"add counts changes: {changes}; a plain a + b adds whole values: {values}")
    # --8<-- [end:lineage]
    assert changes == 15
    assert values == 25


# --8<-- [start:reducers]
def reviewers(merge: Merge) -> ag.Graph[State]:
    """Three reviewers in parallel, each appending a comment and setting a flag."""
    graph: ag.Graph[State] = ag.Graph(merge=merge, name="reviewers")
    for name in ("style", "facts", "legal"):
        graph.add_vertex(
            name,
            lambda s, name=name: {
                **s,
                "comments": [*s["comments"], f"{name}: ok"],
                "flags": {**s["flags"], name: True},
                "score": max(s["score"], len(name)),
            },
        )
        graph.add_edge(ag.START, name)
        graph.add_edge(name, ag.END)
    return graph


def reducers() -> None:
    merge = by_key({"comments": append, "flags": merge_dicts, "score": max})
    with reviewers(merge).compile() as app:
        state = app.invoke({"comments": ["author: draft 1"], "flags": {}, "score": 0}).state
    print(f"reducers: {state}")
    # --8<-- [end:reducers]
    assert state["comments"] == ["author: draft 1", "facts: ok", "legal: ok", "style: ok"]  # task order
    assert state["flags"] == {"facts": True, "legal": True, "style": True}
    assert state["score"] == 5


# --8<-- [start:dataclass]
@dataclass(frozen=True)
class Report:
    """A state that is a dataclass: merged field by field."""

    title: str
    sections: list[str] = field(default_factory=list)
    words: int = 0


def report_graph() -> ag.Graph[Report]:
    graph: ag.Graph[Report] = ag.Graph(merge=by_key({"sections": append, "words": add}))
    graph.add_vertex("intro", lambda r: Report(r.title, [*r.sections, "intro"], r.words + 120))
    graph.add_vertex("method", lambda r: Report(r.title, [*r.sections, "method"], r.words + 800))
    for name in ("intro", "method"):
        graph.add_edge(ag.START, name)
        graph.add_edge(name, ag.END)
    return graph


# --8<-- [end:dataclass]


# --8<-- [start:custom]
def best_draft(base: Any, states: Sequence[State]) -> State:
    """A whole-state merge: keep the branch with the highest score (ties: task order)."""
    return max(states, key=lambda s: s["score"]) if states else base


# --8<-- [end:custom]


def dataclass_and_custom() -> None:
    with report_graph().compile() as app:
        report = app.invoke(Report("Supersteps")).state
    print(f"dataclass state: {report}")
    assert report == Report("Supersteps", ["intro", "method"], 920)

    graph: ag.Graph[State] = ag.Graph(merge=best_draft)
    for name, score in (("terse", 0.4), ("careful", 0.9)):
        graph.add_vertex(name, lambda _, name=name, score=score: {"text": name, "score": score})
        graph.add_edge(ag.START, name)
        graph.add_edge(name, ag.END)
    with graph.compile() as app:
        best = app.invoke({"text": "", "score": 0.0}).state
    print(f"custom merge: {best}")
    assert best == {"text": "careful", "score": 0.9}


def exactly_once() -> None:
    # --8<-- [start:exact]
    graph: ag.Graph[State] = ag.Graph(merge=by_key({"n": add, "log": append}), name="uneven fan-out")
    for name, step in (("p", 10), ("q", 100), ("w1", 1), ("w2", 1), ("w3", 1)):
        graph.add_vertex(name, lambda s, name=name, step=step: {"n": s["n"] + step, "log": [*s["log"], name]})
    for src, dst in (("p", "w1"), ("p", "w2"), ("q", "w3")):
        graph.add_edge(src, dst)  # p fans out to two workers, q to one
    for name in ("p", "q"):
        graph.add_edge(ag.START, name)
    for name in ("w1", "w2", "w3"):
        graph.add_edge(name, ag.END)
    with graph.compile() as app:
        result = app.invoke({"n": 0, "log": []})
    print(f"uneven fan-out: n={result.state['n']}, log={result.state['log']}")
    # --8<-- [end:exact]
    assert result.state == {"n": 113, "log": ["p", "w1", "w2", "q", "w3"]}


def main() -> None:
    plus_five_plus_three()
    exactly_once()
    three_way_rules()
    lowest_common_ancestor()
    reducers()
    dataclass_and_custom()


if __name__ == "__main__":
    main()
