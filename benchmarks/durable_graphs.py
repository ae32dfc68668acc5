"""The workloads of the durable benchmark (`benchmarks.persistence`), in both libraries.

The loop, the chain, the fan-out (branches and a join) and Send (a split, Sends to one worker, a
reduce), built as `benchmarks.core` builds them, with a thread per run, and how many bytes a store
is given to write (`bytes_stored`).
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, TypedDict

import actorgraph as ag
from actorgraph.checkpoint import CheckpointRow, WriteRow
from actorgraph.merge import append, by_key
from benchmarks.core import LOOP

__all__ = ["SHAPES", "Shape", "bytes_stored"]


class _N(TypedDict):
    n: int


class _R(TypedDict, total=False):
    results: Annotated[list[int], operator.add]
    item: int


@dataclass(frozen=True)
class Shape:
    """One workload: its graphs, its input, its unit and how many supersteps one run commits."""

    name: str
    unit: str
    units: int
    supersteps: int
    ours: Callable[[], ag.Graph[Any]]
    theirs: Callable[[], Any]
    state: Callable[[], Any]
    lg_state: Callable[[], Any]


def _lg() -> Any:
    from langgraph.graph import END, START, StateGraph

    return StateGraph, START, END


def _loop(steps: int) -> Shape:
    def ours() -> ag.Graph[Any]:
        g: ag.Graph[Any] = ag.Graph()
        g.add_vertex("inc", lambda s: {"n": s["n"] + 1})
        g.add_edge(ag.START, "inc")
        g.add_conditional_edges("inc", lambda s: "inc" if s["n"] < steps else ag.END)
        return g

    def theirs() -> Any:
        StateGraph, START, END = _lg()
        g = StateGraph(_N)
        g.add_node("inc", lambda s: {"n": s["n"] + 1})
        g.add_edge(START, "inc")
        g.add_conditional_edges("inc", lambda s: "inc" if s["n"] < steps else END)
        return g

    state = lambda: {"n": 0}
    return Shape(f"loop x {steps}", "superstep", steps, steps, ours, theirs, state, state)


def _chain(length: int) -> Shape:
    names = [f"v{i:03d}" for i in range(length)]

    def ours() -> ag.Graph[Any]:
        g: ag.Graph[Any] = ag.Graph()
        for name in names:
            g.add_vertex(name, lambda s: {"n": s["n"] + 1})
        for src, dst in zip([ag.START, *names], [*names, ag.END], strict=True):
            g.add_edge(src, dst)
        return g

    def theirs() -> Any:
        StateGraph, START, END = _lg()
        g = StateGraph(_N)
        for name in names:
            g.add_node(name, lambda s: {"n": s["n"] + 1})
        for src, dst in zip([START, *names], [*names, END], strict=True):
            g.add_edge(src, dst)
        return g

    state = lambda: {"n": 0}
    return Shape(f"chain of {length}", "vertex", length, length, ours, theirs, state, state)


def _fan(width: int) -> Shape:
    names = [f"b{i:03d}" for i in range(width)]

    def ours() -> ag.Graph[Any]:
        g: ag.Graph[Any] = ag.Graph(merge=by_key({"results": append}))
        for i, name in enumerate(names):
            g.add_vertex(name, lambda s, i=i: {"results": [*s["results"], i]})
            g.add_edge(ag.START, name)
        g.add_vertex("join", lambda s: s)
        g.add_edge(names, "join")
        g.add_edge("join", ag.END)
        return g

    def theirs() -> Any:
        StateGraph, START, END = _lg()
        g = StateGraph(_R)
        for i, name in enumerate(names):
            g.add_node(name, lambda s, i=i: {"results": [i]})
            g.add_edge(START, name)
        g.add_node("join", lambda s: {})
        g.add_edge(names, "join")
        g.add_edge("join", END)
        return g

    state = lambda: {"results": []}
    return Shape(f"fan-out to {width} + join", "branch", width, 2, ours, theirs, state, state)


def _sends(width: int) -> Shape:
    def ours() -> ag.Graph[Any]:
        g: ag.Graph[Any] = ag.Graph(merge=by_key({"results": append}))
        g.add_vertex("split", lambda s: s)
        g.add_vertex("work", lambda s: {"results": [s["item"] * 2]}, returns="update")
        g.add_vertex("reduce", lambda s: s)
        g.add_edge(ag.START, "split")
        g.add_conditional_edges(
            "split", lambda s: [ag.Send("work", {"item": i}) for i in range(width)], ["work"]
        )
        g.add_edge("work", "reduce")
        g.add_edge("reduce", ag.END)
        return g

    def theirs() -> Any:
        from langgraph.types import Send

        StateGraph, START, END = _lg()
        g = StateGraph(_R)
        g.add_node("split", lambda s: {})
        g.add_node("work", lambda s: {"results": [s["item"] * 2]})
        g.add_node("reduce", lambda s: {})
        g.add_edge(START, "split")
        g.add_conditional_edges("split", lambda s: [Send("work", {"item": i}) for i in range(width)])
        g.add_edge("work", "reduce")
        g.add_edge("reduce", END)
        return g

    state = lambda: {"results": []}
    return Shape(f"Send to {width}", "Send", width, 3, ours, theirs, state, state)


def SHAPES(quick: bool = False) -> list[Shape]:  # noqa: N802 - the list of workloads, built for a size
    """The four workloads (small ones with `quick`)."""
    if quick:
        return [_loop(50), _chain(20), _fan(10), _sends(10)]
    return [_loop(LOOP), _chain(100), _fan(100), _sends(100)]


def bytes_stored(store: Any) -> list[int]:
    """Watch what `store` is given to write: a list that grows by the bytes of each call.

    The bytes of rows, task results, state blobs and `refs` texts, as the store receives them
    (the instance's `put`, `put_many` and `put_writes` are wrapped; the class is not touched).
    """
    sizes: list[int] = []

    def rows(found: Sequence[CheckpointRow]) -> int:
        return sum(len(r.data) + sum(map(len, r.refs)) for r in found)

    def results(found: Sequence[WriteRow]) -> int:
        return sum(len(w.data) + sum(map(len, w.refs)) for w in found)

    def blobs(found: Mapping[str, bytes] | None) -> int:
        return sum(len(k) + len(v) for k, v in (found or {}).items())

    put, put_many, put_writes = store.put, store.put_many, store.put_writes

    def watched_put(row: CheckpointRow, **kw: Any) -> None:
        sizes.append(rows([row]) + blobs(kw.get("blobs")) + results(kw.get("writes", ())))
        put(row, **kw)

    def watched_many(found: Sequence[CheckpointRow], **kw: Any) -> None:
        writes = [w for ws in (kw.get("writes") or {}).values() for w in ws]
        sizes.append(rows(found) + blobs(kw.get("blobs")) + results(writes))
        put_many(found, **kw)

    def watched_writes(thread_id: str, checkpoint_id: str, found: Sequence[WriteRow], **kw: Any) -> None:
        sizes.append(results(found) + blobs(kw.get("blobs")))
        put_writes(thread_id, checkpoint_id, found, **kw)

    store.put, store.put_many, store.put_writes = watched_put, watched_many, watched_writes
    return sizes
