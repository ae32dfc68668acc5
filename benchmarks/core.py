"""The core engine workloads, built the same way in actorgraph and LangGraph."""

from __future__ import annotations

import operator
import time
from collections.abc import Callable
from typing import Annotated, Any, TypedDict

import actorgraph as ag
from actorgraph.merge import append, by_key
from benchmarks.harness import Workload

__all__ = ["WORKLOADS"]

LOOP = 1000
CHAIN = 100
FAN = 100
SENDS = 1000
BLOCKING = 50
BLOCK_SECONDS = 0.05
INVOKES = 2000
CALLS = 100
ACTORS: str | None = None  # compile(actors=...) of every actorgraph workload (None: the default)


class Runner:
    """A compiled actorgraph graph and its input: calling it runs the graph once."""

    def __init__(self, graph: ag.Graph, state: Any, **options: Any) -> None:
        self.app = graph.compile(actors=ACTORS)
        self.state = state
        self.options = options

    def __call__(self) -> object:
        return self.app.invoke(self.state, **self.options)

    def close(self) -> None:
        self.app.close()


# -- actorgraph -----------------------------------------------------------------


def ag_loop(steps: int = LOOP) -> Runner:
    g: ag.Graph = ag.Graph()
    g.add_vertex("inc", lambda s: {"n": s["n"] + 1})
    g.add_edge(ag.START, "inc")
    g.add_conditional_edges("inc", lambda s: "inc" if s["n"] < steps else ag.END)
    return Runner(g, {"n": 0}, recursion_limit=steps + 10)


def ag_chain() -> Runner:
    g: ag.Graph = ag.Graph()
    names = [f"v{i}" for i in range(CHAIN)]
    for name in names:
        g.add_vertex(name, lambda s: {"n": s["n"] + 1})
    for src, dst in zip([ag.START, *names], [*names, ag.END], strict=True):
        g.add_edge(src, dst)
    return Runner(g, {"n": 0})


def ag_fan(width: int = FAN) -> Runner:
    g: ag.Graph = ag.Graph(merge=by_key({"results": append}))
    names = [f"b{i}" for i in range(width)]
    for i, name in enumerate(names):
        g.add_vertex(name, lambda s, i=i: {"results": [*s["results"], i]})
        g.add_edge(ag.START, name)
    g.add_vertex("join", lambda s: s)
    g.add_edge(names, "join")
    g.add_edge("join", ag.END)
    return Runner(g, {"results": []})


def ag_sends(width: int = SENDS) -> Runner:
    g: ag.Graph = ag.Graph(merge=by_key({"results": append}))
    g.add_vertex("split", lambda s: s)
    g.add_vertex("work", lambda s: {"results": [s["item"] * 2]}, returns="update")  # the payload is its input
    g.add_vertex("reduce", lambda s: s)
    g.add_edge(ag.START, "split")
    g.add_conditional_edges("split", lambda s: [ag.Send("work", {"item": i}) for i in range(width)], ["work"])
    g.add_edge("work", "reduce")
    g.add_edge("reduce", ag.END)
    return Runner(g, {"results": []})


def ag_blocking() -> Runner:
    g: ag.Graph = ag.Graph(merge=by_key({"done": append}))
    for i in range(BLOCKING):
        g.add_vertex(f"io{i}", lambda s, i=i: (time.sleep(BLOCK_SECONDS), {"done": [i]})[1])
        g.add_edge(ag.START, f"io{i}")
        g.add_edge(f"io{i}", ag.END)
    return Runner(g, {"done": []})


class Invokes(Runner):
    def __call__(self) -> object:
        for _ in range(INVOKES):
            self.app.invoke(self.state)
        return None


def ag_invokes() -> Runner:
    g: ag.Graph = ag.Graph()
    for name in ("a", "b", "c"):
        g.add_vertex(name, lambda s: {"n": s["n"] + 1})
    g.add_edge(ag.START, "a")
    g.add_edge("a", "b")
    g.add_edge("b", "c")
    g.add_edge("c", ag.END)
    return Invokes(g, {"n": 0})


def ag_subgraph() -> Runner:
    """A 3-vertex child called from a parent loop of CALLS supersteps: each call is a nested run."""
    child: ag.Graph = ag.Graph(name="child")
    for name in ("a", "b", "c"):
        child.add_vertex(name, lambda s: {"n": s["n"] + 1})
    child.add_edge(ag.START, "a")
    child.add_edge("a", "b")
    child.add_edge("b", "c")
    child.add_edge("c", ag.END)
    g: ag.Graph = ag.Graph(name="parent")
    g.add_vertex("call", child)
    g.add_edge(ag.START, "call")
    g.add_conditional_edges("call", lambda s: "call" if s["n"] < 3 * CALLS else ag.END)
    return Runner(g, {"n": 0}, recursion_limit=CALLS + 10)


# -- LangGraph ------------------------------------------------------------------


class N(TypedDict):
    n: int


class R(TypedDict, total=False):
    results: Annotated[list[int], operator.add]
    item: int


def _lg() -> Any:
    from langgraph.graph import END, START, StateGraph

    return StateGraph, START, END


def lg_loop(steps: int = LOOP) -> Callable[[], object]:
    StateGraph, START, END = _lg()
    g = StateGraph(N)
    g.add_node("inc", lambda s: {"n": s["n"] + 1})
    g.add_edge(START, "inc")
    g.add_conditional_edges("inc", lambda s: "inc" if s["n"] < steps else END)
    app = g.compile()
    return lambda: app.invoke({"n": 0}, {"recursion_limit": steps + 10})


def lg_chain() -> Callable[[], object]:
    StateGraph, START, END = _lg()
    g = StateGraph(N)
    names = [f"v{i}" for i in range(CHAIN)]
    for name in names:
        g.add_node(name, lambda s: {"n": s["n"] + 1})
    for src, dst in zip([START, *names], [*names, END], strict=True):
        g.add_edge(src, dst)
    app = g.compile()
    return lambda: app.invoke({"n": 0}, {"recursion_limit": CHAIN + 10})


def lg_fan(width: int = FAN) -> Callable[[], object]:
    StateGraph, START, END = _lg()
    g = StateGraph(R)
    names = [f"b{i}" for i in range(width)]
    for i, name in enumerate(names):
        g.add_node(name, lambda s, i=i: {"results": [i]})
        g.add_edge(START, name)
    g.add_node("join", lambda s: {})
    g.add_edge(names, "join")
    g.add_edge("join", END)
    app = g.compile()
    return lambda: app.invoke({"results": []})


def lg_sends(width: int = SENDS) -> Callable[[], object]:
    from langgraph.types import Send

    StateGraph, START, END = _lg()
    g = StateGraph(R)
    g.add_node("split", lambda s: {})
    g.add_node("work", lambda s: {"results": [s["item"] * 2]})
    g.add_node("reduce", lambda s: {})
    g.add_edge(START, "split")
    g.add_conditional_edges("split", lambda s: [Send("work", {"item": i}) for i in range(width)])
    g.add_edge("work", "reduce")
    g.add_edge("reduce", END)
    app = g.compile()
    return lambda: app.invoke({"results": []})


def lg_blocking() -> Callable[[], object]:
    StateGraph, START, END = _lg()
    g = StateGraph(R)
    for i in range(BLOCKING):
        g.add_node(f"io{i}", lambda s, i=i: (time.sleep(BLOCK_SECONDS), {"results": [i]})[1])
        g.add_edge(START, f"io{i}")
        g.add_edge(f"io{i}", END)
    app = g.compile()
    return lambda: app.invoke({"results": []})


def lg_invokes() -> Callable[[], object]:
    StateGraph, START, END = _lg()
    g = StateGraph(N)
    for name in ("a", "b", "c"):
        g.add_node(name, lambda s: {"n": s["n"] + 1})
    g.add_edge(START, "a")
    g.add_edge("a", "b")
    g.add_edge("b", "c")
    g.add_edge("c", END)
    app = g.compile()

    def run() -> None:
        for _ in range(INVOKES):
            app.invoke({"n": 0})

    return run


def lg_subgraph() -> Callable[[], object]:
    StateGraph, START, END = _lg()
    child = StateGraph(N)
    for name in ("a", "b", "c"):
        child.add_node(name, lambda s: {"n": s["n"] + 1})
    child.add_edge(START, "a")
    child.add_edge("a", "b")
    child.add_edge("b", "c")
    child.add_edge("c", END)
    g = StateGraph(N)
    g.add_node("call", child.compile())
    g.add_edge(START, "call")
    g.add_conditional_edges("call", lambda s: "call" if s["n"] < 3 * CALLS else END)
    app = g.compile()
    return lambda: app.invoke({"n": 0}, {"recursion_limit": CALLS + 10})


WORKLOADS = [
    Workload(f"loop: 1 vertex x {LOOP} supersteps", "superstep", LOOP, ag_loop, lg_loop),
    Workload(f"chain of {CHAIN} vertices", "vertex", CHAIN, ag_chain, lg_chain),
    Workload(f"fan-out to {FAN} branches + join", "branch", FAN, ag_fan, lg_fan),
    Workload(f"Send map-reduce over {SENDS} items", "Send", SENDS, ag_sends, lg_sends),
    Workload(
        f"{BLOCKING} parallel vertices blocking {BLOCK_SECONDS * 1000:.0f} ms",
        "run",
        1,
        ag_blocking,
        lg_blocking,
        per="ideal",
        ideal=BLOCK_SECONDS,
    ),
    Workload(f"{INVOKES} invokes of a 3-vertex chain", "invoke", INVOKES, ag_invokes, lg_invokes, per="rate"),
    Workload(f"subgraph: 3-vertex child called {CALLS} times", "call", CALLS, ag_subgraph, lg_subgraph),
]
