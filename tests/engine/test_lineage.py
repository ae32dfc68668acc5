"""Merge bases in the lineage graph."""

from __future__ import annotations

from actorgraph._engine.lineage import lowest_common_ancestors, merge_nodes
from actorgraph._model.records import Node
from actorgraph.merge import add, append, by_key

MERGE = by_key({"n": add, "log": append})


def node(name: str, state: object, *parents: Node) -> Node:
    return Node.child(name, state, *parents)


def test_siblings_merge_against_their_parent() -> None:
    root = Node("r", {"n": 10})
    a, b = node("a", {"n": 15}, root), node("b", {"n": 13}, root)
    assert lowest_common_ancestors([a, b]) == [root]
    assert merge_nodes([a, b], MERGE) == {"n": 18}


def test_an_ancestor_and_its_descendant_merge_to_the_descendant() -> None:
    root = Node("r", {"n": 1})
    child = node("c", {"n": 4}, root)
    grandchild = node("g", {"n": 6}, child)
    assert lowest_common_ancestors([child, grandchild]) == [child]
    assert merge_nodes([child, grandchild], MERGE) == {"n": 6}


def test_unrelated_versions_have_no_base() -> None:
    assert lowest_common_ancestors([Node("x", {}), Node("y", {})]) == []
    assert merge_nodes([Node("x", {"n": 1}), Node("y", {"n": 2})], MERGE) == {"n": 3}


def test_branches_of_unequal_length_merge_against_the_fork() -> None:
    root = Node("r", {"log": []})
    short = node("s", {"log": ["s"]}, root)
    long1 = node("l1", {"log": ["l1"]}, root)
    long2 = node("l2", {"log": ["l1", "l2"]}, long1)
    long3 = node("l3", {"log": ["l1", "l2", "l3"]}, long2)
    assert merge_nodes([short, long3], MERGE) == {"log": ["s", "l1", "l2", "l3"]}


def test_criss_cross_merges_use_a_virtual_base_and_count_nothing_twice() -> None:
    root = Node("r", {"n": 0, "log": []})
    a = node("a", {"n": 1, "log": ["a"]}, root)
    b = node("b", {"n": 2, "log": ["b"]}, root)
    m1 = node("m1", merge_nodes([a, b], MERGE), a, b)
    m2 = node("m2", merge_nodes([a, b], MERGE), a, b)
    c = node("c", {"n": m1.state["n"] + 10, "log": [*m1.state["log"], "c"]}, m1)
    d = node("d", {"n": m2.state["n"] + 20, "log": [*m2.state["log"], "d"]}, m2)
    assert {n.id for n in lowest_common_ancestors([c, d])} == {"a", "b"}
    assert merge_nodes([c, d], MERGE) == {"n": 33, "log": ["a", "b", "c", "d"]}


def test_repeated_versions_are_merged_once() -> None:
    root = Node("r", {"n": 1})
    a = node("a", {"n": 2}, root)
    assert merge_nodes([a, a, a], MERGE) == {"n": 2}


def test_many_sends_find_their_sender_quickly() -> None:
    sender = node("s", {"log": []}, Node("r", {"log": []}))
    sends = [node(f"s>{i}", {"log": []}, sender) for i in range(1000)]
    outs = [node(f"w{i}", {"log": [i]}, s) for i, s in enumerate(sends)]
    assert lowest_common_ancestors(outs) == [sender]
    assert merge_nodes(outs, MERGE)["log"] == list(range(1000))
