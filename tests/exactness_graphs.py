"""Random graphs for the exactness properties, as plain data, and the builder that runs them.

A graph description is a JSON-serializable dict, so the test process and a child
process (`exactness_child.py`, put on PYTHONPATH) build the very same graph:

    {
        "size": 4,                              # vertices v0..v3, in topological order
        "start": [0, 1],                        # START -> vi
        "edges": [[0, 2], [1, "END"]],          # vi -> vj (i < j) or vi -> END
        "joins": [[[0, 1], 3]],                 # add_edge([va, vb], vc), a, b < c
        "routers": [                            # add_conditional_edges(vi, router)
            {"source": 2, "by": "log", "options": [[3], [3, "END"], [["send", 3, 2]]]}
        ],
        "seer": 1,                              # the vertex that sets `seen = True`
        "extras": true,                         # touch every reducer, not just log and n
    }

A router picks one of its options from the state it routes (`len(log)` or
`n.bit_length()`, modulo the number of options); an option lists targets (a
vertex index or "END") and Sends (`["send", j, count]`: `count` Sends to vj with
`item` 0..count-1). Targets are always later vertices, so every run is finite.

Every task appends its token `task_id@step` to `log`, adds its own power of two
(`task_bit`) to `n`, and with `extras` also sets `last` (replace), adds to `tags`
(union), sets `meta[token]` (merge_dicts), sets `best` (a plain binary `max`),
sets `form` (replace) to one of several values that `==` calls equal but that
differ in types, key order or sign (`form_of`), and, in the seer, `seen = True`
(no reducer: three-way). It pops the `item` a Send
gave it. The run's `context` (a `Probe`) hears about every task: before it does
its work (where faults are injected) and once it has returned (the side channel
the final state is checked against).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from shared import SharedList

import actorgraph as ag
from actorgraph.merge import Merge, add, append, by_key, merge_dicts, replace, union

VERTICES = 16
"""The most vertices a description may have (`task_bit` is injective below it)."""
SLOTS = 64
"""Bits per vertex per step: slot 0 is the vertex's plain task, slot 1 + i its Send task i."""

Desc = dict[str, Any]
Move = int | str | list[Any]


class Probe:
    """The side channel of a run (its `context`): what ran, and where faults strike.

    Subclasses inject faults in `started`; this one only records tokens, in a
    `SharedList`: the run's context travels with each call to a Ray worker, and
    every copy of the probe appends to the same list.
    """

    def __init__(self) -> None:
        self.tokens = SharedList()

    def started(self, token: str) -> None:
        """A task is about to do its work (it may raise, interrupt or kill here)."""

    def finished(self, token: str) -> None:
        """A task has done its work and is about to return its new state."""
        self.tokens.append(token)


def vertex_name(index: int) -> str:
    """The name of vertex `index`."""
    return f"v{index}"


def target_name(target: int | str) -> str:
    """A description's target (a vertex index or "END") as a graph target."""
    return ag.END if target == "END" else vertex_name(int(target))


def token_of(ctx: ag.Context[Any]) -> str:
    """The token of the task `ctx` belongs to: unique within a run, the same in its resumption."""
    return f"{ctx.task_id}@{ctx.step}"


def parse_token(token: str) -> tuple[int, int, int]:
    """`(step, vertex index, slot)` of a token (slot 0: plain task; 1 + i: Send task i)."""
    task_id, _, step = token.rpartition("@")
    vertex, _, index = task_id.partition(":")
    return int(step), int(vertex[1:]), int(index) + 1 if index else 0


def task_bit(token: str) -> int:
    """The exponent of the power of two the task with `token` adds to `n` (injective in a run)."""
    step, vertex, slot = parse_token(token)
    if vertex >= VERTICES or slot >= SLOTS:
        msg = f"task {token} is beyond the {VERTICES} vertices or {SLOTS} Send slots the bits allow"
        raise ValueError(msg)
    return (step * VERTICES + vertex) * SLOTS + slot


def expected_n(tokens: Iterable[str]) -> int:
    """What `n` must hold when exactly the tasks with `tokens` were counted once."""
    return sum(2 ** task_bit(t) for t in tokens)


def task_number(token: str) -> int:
    """A task-specific number for the `best` key (not ordered like the tasks)."""
    return int.from_bytes(hashlib.blake2b(token.encode(), digest_size=4).digest(), "big")


def form_of(number: int) -> dict[str, Any]:
    """One of the forms of a value, all equal by `==`: ints, floats or bools, keys in either order, ±0.0.

    A store that kept an unchanged value by `==` alone would read another form back.
    """
    xs = [[1, 2], [1.0, 2.0], [True, 2], [1, 2.0]][number % 4]
    keyed = [{"a": 1, "b": [0]}, {"b": [0.0], "a": 1}, {"a": True, "b": [False]}][number // 4 % 3]
    return {"xs": xs, "keyed": keyed, "zero": [0.0, -0.0][number // 12 % 2]}


def initial_state(desc: Desc) -> dict[str, Any]:
    """The input of a run of `desc`."""
    if desc.get("extras"):
        return {"log": [], "n": 0, "last": "", "tags": [], "meta": {}, "best": 0, "form": form_of(0)}
    return {"log": [], "n": 0}


def merge_for(desc: Desc) -> Merge:
    """The graph's merge: a reducer for every key the tasks touch, except `seen`.

    Update-style vertices cannot delete a `Send`'s `item`, so it gets `replace` there.
    """
    reducers: dict[str, Any] = {"log": append, "n": add}
    if desc.get("extras"):
        reducers |= {"last": replace, "tags": union, "meta": merge_dicts, "best": max, "form": replace}
    if desc.get("style") == "update":
        reducers["item"] = replace
    return by_key(reducers)


def vertex_fn(desc: Desc, index: int) -> Callable[[dict[str, Any], ag.Context[Any]], dict[str, Any]]:
    """The function of vertex `index`: one token, one power of two, one change per reducer.

    Whole-state vertices return the state with the changes made; update vertices
    (`style: "update"`) return the changes alone, and the engine applies them.
    """
    extras = bool(desc.get("extras"))
    seer = desc.get("seer") == index
    updates = desc.get("style") == "update"

    def run(state: dict[str, Any], ctx: ag.Context[Any]) -> dict[str, Any]:
        token = token_of(ctx)
        probe: Probe | None = ctx.context
        if probe is not None:
            probe.started(token)
        change: dict[str, Any] = {"log": [token], "n": 2 ** task_bit(token)}
        if extras:
            number = task_number(token)
            change |= {"last": token, "tags": [token], "meta": {token: ctx.step}, "best": number}
            change["form"] = form_of(number)
        if seer:
            change["seen"] = True
        result = change if updates else _applied(state, change)
        if probe is not None:
            probe.finished(token)
        return result

    run.__name__ = vertex_name(index)
    return run


def _applied(state: dict[str, Any], change: dict[str, Any]) -> dict[str, Any]:
    """The whole new state: `change` made to `state` by hand (and a Send's `item` dropped)."""
    new = {k: v for k, v in state.items() if k != "item"}
    new |= change
    new["log"] = [*state["log"], *change["log"]]
    new["n"] = state["n"] + change["n"]
    if "tags" in change:
        new["tags"] = [*state["tags"], *change["tags"]]
        new["meta"] = {**state["meta"], **change["meta"]}
    return new


def router_fn(rule: dict[str, Any]) -> Callable[[dict[str, Any]], list[Any]]:
    """A router choosing one of `rule["options"]` from the state it routes."""
    options: list[list[Move]] = rule["options"]
    by = rule["by"]

    def route(state: dict[str, Any]) -> list[Any]:
        key = len(state["log"]) if by == "log" else state["n"].bit_length()
        out: list[Any] = []
        for move in options[key % len(options)]:
            if isinstance(move, list):
                _, target, count = move
                out.extend(ag.Send(vertex_name(target), {**state, "item": i}) for i in range(count))
            else:
                out.append(target_name(move))
        return out

    return route


def router_targets(rule: dict[str, Any]) -> list[str]:
    """Every target a router may name or Send to (its `path_map`, so reachability is static)."""
    names = {target_name(m[1] if isinstance(m, list) else m) for option in rule["options"] for m in option}
    return sorted(names)


def build(desc: Desc) -> ag.Graph:
    """The graph `desc` describes."""
    g: ag.Graph = ag.Graph(merge=merge_for(desc), name="exactness", returns=desc.get("style", "state"))
    for i in range(desc["size"]):
        g.add_vertex(vertex_name(i), vertex_fn(desc, i))
    for i in desc["start"]:
        g.add_edge(ag.START, vertex_name(i))
    for src, dst in desc["edges"]:
        g.add_edge(vertex_name(src), target_name(dst))
    for sources, dst in desc["joins"]:
        g.add_edge([vertex_name(s) for s in sources], vertex_name(dst))
    for rule in desc["routers"]:
        g.add_conditional_edges(vertex_name(rule["source"]), router_fn(rule), router_targets(rule))
    return g


def build_nested(desc: Desc, depth: int) -> ag.Graph:
    """The graph of `desc` inside `depth` levels of subgraphs: START -> sub -> END, `depth` times.

    Its vertices are reached by the path `sub/` * depth + name (`sub/sub/v0`).
    """
    graph = build(desc)
    for level in range(depth):
        outer: ag.Graph = ag.Graph(merge=merge_for(desc), name=f"outer{level}")
        outer.add_vertex("sub", graph)
        outer.add_edge(ag.START, "sub")
        outer.add_edge("sub", ag.END)
        graph = outer
    return graph


def innermost(snapshot: ag.Snapshot[Any]) -> ag.Snapshot[Any]:
    """The snapshot of the innermost subgraph run in `snapshot` (from `get_state(..., subgraphs=True)`)."""
    while snapshot.subgraphs:
        (snapshot,) = snapshot.subgraphs.values()
    return snapshot


def complete(  # noqa: PLR0913 - the parts of a description, as drawn
    size: int,
    start: Sequence[int],
    edges: Sequence[tuple[int, int | str]],
    joins: Sequence[tuple[Sequence[int], int]],
    routers: Sequence[dict[str, Any]],
    *,
    seer: int,
    extras: bool,
    style: str = "state",
) -> Desc:
    """A valid description from drawn parts: every vertex reached from somewhere, and with a way out.

    A vertex nothing leads to gets an edge from START; a vertex nothing leaves
    gets an edge to END.
    """
    reached = {int(d) for _, d in edges if d != "END"} | {c for _, c in joins} | set(start)
    for rule in routers:
        for option in rule["options"]:
            reached.update(int(m[1] if isinstance(m, list) else m) for m in option if m != "END")
    start = sorted(set(start) | {i for i in range(size) if i not in reached})
    leaving = {s for s, _ in edges} | {s for sources, _ in joins for s in sources}
    leaving |= {r["source"] for r in routers}
    edges = sorted({*edges, *((i, "END") for i in range(size) if i not in leaving)}, key=str)
    unique_joins = sorted({(tuple(sorted(set(s))), c) for s, c in joins})
    return {
        "size": size,
        "start": start,
        "edges": [list(e) for e in edges],
        "joins": [[list(s), c] for s, c in unique_joins],
        "routers": [dict(r) for r in routers],
        "seer": seer,
        "extras": extras,
        "style": style,
    }


# -- the shapes that once broke, as descriptions -----------------------------------


UNEVEN_FAN_OUT: Desc = complete(
    5,
    [0, 1],
    [(0, 2), (0, 3), (1, 4), (2, "END"), (3, "END"), (4, "END")],
    [],
    [],
    seer=2,
    extras=True,
)
"""p, q after START; p fans out to w1, w2 and q to w3 (tests/api/test_exactness.py)."""

JOIN_CRISS_CROSS: Desc = complete(
    5,
    [0, 1],
    [(4, "END")],
    [([0, 1], 2), ([0, 1], 3), ([2, 3], 4)],
    [],
    seer=0,
    extras=True,
)
"""a, b joined into c and into d, then c and d joined into e: e's inputs have two merge bases."""

SEND_FROM_TWO_SENDERS: Desc = complete(
    4,
    [0, 1],
    [(2, 3), (3, "END")],
    [],
    [
        {"source": 0, "by": "log", "options": [[["send", 2, 2]]]},
        {"source": 1, "by": "log", "options": [[["send", 2, 1]]]},
    ],
    seer=3,
    extras=True,
)
"""a Sends two items and b one item to a worker, whose results a reducer merges."""

FIXED: dict[str, Desc] = {
    "uneven-fan-out": UNEVEN_FAN_OUT,
    "join-criss-cross": JOIN_CRISS_CROSS,
    "send-from-two-senders": SEND_FROM_TWO_SENDERS,
}
