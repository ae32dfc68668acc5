"""Exactness at the edges: every change counted once, and a resumed run equal to an uninterrupted one.

The random-graph properties live in `test_exactness_properties.py`; these are the
shapes that once broke, kept as they were reported.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from exact_values import same
from pydantic import BaseModel, field_validator
from shared import SharedDict

import actorgraph as ag
from actorgraph._engine.lineage import merge_nodes
from actorgraph._model.records import Node
from actorgraph.checkpoint import MemoryCheckpointer, MsgpackSerializer
from actorgraph.merge import add, append, by_key


def plus(k: int):
    return lambda s: {**s, "n": s["n"] + k}


def test_an_uneven_fan_out_counts_the_shared_change_once(compile_graph) -> None:
    g = ag.Graph(merge=by_key({"n": add}))
    g.add_vertex("p", plus(10))
    g.add_vertex("q", plus(100))
    for w in ("w1", "w2", "w3"):
        g.add_vertex(w, plus(1))
        g.add_edge(w, ag.END)
    g.add_edge(ag.START, "p")
    g.add_edge(ag.START, "q")
    g.add_edge("p", "w1")
    g.add_edge("p", "w2")
    g.add_edge("q", "w3")
    assert compile_graph(g).invoke({"n": 0}).state == {"n": 113}


def logger(name: str):
    return lambda s: {**s, "log": [*s["log"], name]}


def test_an_uneven_fan_out_keeps_each_appended_item_once(compile_graph) -> None:
    g = ag.Graph(merge=by_key({"log": append}))
    for name in ("p", "q", "w1", "w2", "w3"):
        g.add_vertex(name, logger(name))
    for w in ("w1", "w2", "w3"):
        g.add_edge(w, ag.END)
    g.add_edge(ag.START, "p")
    g.add_edge(ag.START, "q")
    g.add_edge("p", "w1")
    g.add_edge("p", "w2")
    g.add_edge("q", "w3")
    log = compile_graph(g).invoke({"log": []}).state["log"]
    assert sorted(log) == ["p", "q", "w1", "w2", "w3"]


def test_sends_from_two_parallel_senders_count_each_sender_once(compile_graph) -> None:
    g = ag.Graph(merge=by_key({"log": append, "n": add}))
    g.add_vertex("a", lambda s: {**s, "log": [*s["log"], "a"], "n": s["n"] + 1})
    g.add_vertex("b", lambda s: {**s, "log": [*s["log"], "b"], "n": s["n"] + 2})

    def work(s: dict[str, Any]) -> dict[str, Any]:
        item = s.pop("item")
        return {**s, "log": [*s["log"], f"w{item}"], "n": s["n"] + 2**item}

    g.add_vertex("w", work, returns="state")  # it deletes its own "item"
    g.add_edge(ag.START, "a")
    g.add_edge(ag.START, "b")
    g.add_conditional_edges("a", lambda s: [ag.Send("w", {**s, "item": i}) for i in (3, 4)], ["w"])
    g.add_conditional_edges("b", lambda s: [ag.Send("w", {**s, "item": 5})], ["w"])
    g.add_edge("w", ag.END)
    state = compile_graph(g).invoke({"log": [], "n": 0}).state
    assert sorted(state["log"]) == ["a", "b", "w3", "w4", "w5"]
    assert state["n"] == 1 + 2 + 8 + 16 + 32


def test_a_group_sharing_history_beyond_the_base_is_merged_first() -> None:
    root = Node("r", {"n": 0})
    x, z = Node.child("x", {"n": 1}, root), Node.child("z", {"n": 2}, root)
    a = Node.child("a", {"n": 5}, x)  # x: +1, a: +4
    b1, b2 = Node.child("b1", {"n": 9}, x), Node.child("b2", {"n": 18}, z)  # +8, +16
    b = Node.child("b", merge_nodes([b1, b2], by_key({"n": add})), b1, b2)
    c = Node.child("c", {"n": 34}, z)  # +32
    # a and b share x; b and c share z; all three share only the root
    assert b.state == {"n": 1 + 2 + 8 + 16}
    assert merge_nodes([a, b, c], by_key({"n": add})) == {"n": 1 + 2 + 4 + 8 + 16 + 32}


def test_a_resumed_join_orders_items_as_the_uninterrupted_run(compile_graph) -> None:
    failing = SharedDict({"a": False})

    def vertex(name: str):
        def run(s: dict[str, Any]) -> dict[str, Any]:
            if failing.get(name):
                failing[name] = False
                raise ConnectionError("once")
            return {**s, "log": [*s["log"], name]}

        return run

    g = ag.Graph(merge=by_key({"log": append}))
    for name in "abcd":
        g.add_vertex(name, vertex(name))
    g.add_edge(ag.START, "a")
    g.add_edge(ag.START, "b")
    g.add_edge(["a", "b"], "c")
    g.add_edge(["a", "b"], "d")
    g.add_edge("c", ag.END)
    g.add_edge("d", ag.END)
    app = compile_graph(g, checkpointer=MemoryCheckpointer())
    uninterrupted = app.invoke({"log": []}, thread_id="u").state["log"]
    failing["a"] = True
    with pytest.raises(ag.VertexError):
        app.invoke({"log": []}, thread_id="t")
    assert app.invoke(None, thread_id="t").state["log"] == uninterrupted == ["a", "b", "c", "d"]


# -- equal by ==, yet not the same state: types, key order and signs survive a checkpoint ------------

HIDDEN = {"xs": [1.0, 2.0], "keyed": {"b": 2, "a": 1}, "flags": [True], "zero": [-0.0]}
"""What vertex "a" makes of BASE: equal by `==`, but no value of the same types, key order or sign."""
BASE = {"xs": [1, 2], "keyed": {"a": 1, "b": 2}, "flags": [1], "zero": [0.0]}


def hiding() -> ag.Graph:
    g = ag.Graph(merge=by_key({"log": append}))
    g.add_vertex("a", lambda s: {**s, **copy.deepcopy(HIDDEN), "log": [*s["log"], "a"]})
    g.add_vertex("b", lambda s: {**s, "log": [*s["log"], "b"]})
    g.add_vertex("c", lambda s: {**s, "log": [*s["log"], "c"]})
    g.add_edge(ag.START, "a")
    g.add_edge(ag.START, "b")
    g.add_edge(["a", "b"], "c")
    g.add_edge("c", ag.END)
    return g


def test_a_run_resumed_after_a_change_eq_cannot_see_equals_the_uninterrupted_one_type_for_type(
    compile_graph, store
) -> None:
    app = compile_graph(hiding(), checkpointer=store)
    whole = app.invoke({**BASE, "log": []}, thread_id="whole").state
    assert same(whole, {**HIDDEN, "log": ["a", "b", "c"]})  # the merge after a and b took a's change
    paused = app.invoke({**BASE, "log": []}, thread_id="t", interrupt_after=["a"])
    assert paused.status == "interrupted"
    assert same(app.get_state("t").state, paused.state)  # as stored, read back
    assert same(app.invoke(None, thread_id="t").state, whole)


class Form(BaseModel):
    xs: list[int | float]
    keyed: dict[str, int | bool]


def test_an_update_that_eq_cannot_see_reaches_a_pydantic_state(compile_graph, store_factory) -> None:
    g = ag.Graph(state=Form)
    g.add_vertex("v", lambda s: s)
    g.add_edge(ag.START, "v")
    g.add_edge("v", ag.END)
    app = compile_graph(g, checkpointer=store_factory(serializer=MsgpackSerializer(allowed=[Form])))
    app.invoke(Form(xs=[1, 2], keyed={"a": 1, "b": 2}), thread_id="t")
    app.update_state("t", {"xs": [1.0, 2.0], "keyed": {"b": 2, "a": True}})
    state = app.get_state("t").state
    assert same(state.xs, [1.0, 2.0]) and same(state.keyed, {"b": 2, "a": True})


class Greeted(BaseModel):
    """A state whose validator transforms its input: applied twice, it shows."""

    name: str
    age: int = 0

    @field_validator("name")
    @classmethod
    def greet(cls, value: str) -> str:
        return f"Validated {value}"


def test_a_value_is_validated_once_when_it_enters_the_state(compile_graph, store_factory) -> None:
    """Not again on update_state (of other keys, or as a vertex), a new input, or a read of the thread."""
    g = ag.Graph(state=Greeted)
    g.add_vertex("v", lambda s: s)
    g.add_edge(ag.START, "v")
    g.add_edge("v", ag.END)
    app = compile_graph(g, checkpointer=store_factory(serializer=MsgpackSerializer(allowed=[Greeted])))
    assert app.invoke({"name": "Ann"}, thread_id="t").state.name == "Validated Ann"
    app.update_state("t", {"age": 3})
    app.update_state("t", {"age": 4}, as_vertex="v")
    app.bulk_update_state("t", [[{"age": 5}], [{"age": 6}]])
    assert app.invoke({"age": 7}, thread_id="t").state == Greeted(name="Ann", age=7)
    assert {s.state.name for s in app.get_history("t")} == {"Validated Ann"}
    app.update_state("t", {"name": "Bo"})
    assert app.get_state("t").state.name == "Validated Bo"
