"""Several writes per task: `Command(update=[(key, value), ...])` applies each write in order.

Each write lands through its key's reducer, so two appends to one key from one
task both land; a key without a reducer takes one write. A malformed list is an
`InvalidUpdateError` naming the item, and a vertex that returns updates returns
a mapping (a list of writes comes in a `Command`, as in LangGraph).
"""

from __future__ import annotations

import operator
from typing import Annotated, Any, TypedDict

import pytest
from lines import in_a_line
from shared import SharedList

import actorgraph as ag
from actorgraph.merge import add, append, by_key


class Log(TypedDict):
    log: Annotated[list[str], append]
    n: Annotated[int, add]
    last: str


def one_vertex(fn: Any, **graph: Any) -> ag.Graph:
    return in_a_line(("x", fn), **graph)


START_LOG: Log = {"log": ["in"], "n": 1, "last": "-"}


@pytest.mark.parametrize("returns", ["update", "state"])
def test_each_write_lands_in_order_through_its_reducer(compile_graph, returns: str) -> None:
    writes = [("log", ["a"]), ("n", 2), ("log", ["b"]), ("last", "z"), ("n", 3)]
    g = one_vertex(lambda s: ag.Command(update=writes), state=Log, returns=returns)
    assert compile_graph(g).invoke(START_LOG).state == {"log": ["in", "a", "b"], "n": 6, "last": "z"}


def test_a_custom_reducer_sees_each_write_on_the_result_of_the_one_before(compile_graph) -> None:
    class Joined(TypedDict):
        foo: Annotated[str, lambda a, b: ", ".join(x for x in (a, b) if x)]

    g = one_vertex(lambda s: ag.Command(update=[("foo", "one"), ("foo", "two")]), state=Joined)
    assert compile_graph(g).invoke({"foo": "in"}).state == {"foo": "in, one, two"}


def test_a_key_without_a_reducer_takes_one_write(compile_graph) -> None:
    calls = SharedList()

    def twice(state: Log) -> ag.Command:
        calls.append(1)
        return ag.Command(update=[("last", "a"), ("last", "b")])

    g = one_vertex(twice, state=Log, retry=ag.RetryPolicy(max_attempts=3, retry_on=Exception))
    with pytest.raises(ag.InvalidUpdateError, match=r"writes key 'last' 2 times, but the key has no reducer"):
        compile_graph(g).invoke(START_LOG)
    assert len(calls) == 1  # a refused update is never retried


@pytest.mark.parametrize(
    ("update", "error"),
    [
        (
            [("log", ["a"], 3)],
            r"item 0 of the update list is \('log', \['a'\], 3\), not a \(key, value\) pair",
        ),
        ([("log", ["a"]), "log"], r"item 1 of the update list is 'log', not a \(key, value\) pair"),
        (
            [(1, ["a"])],
            r"item 0 of the update list is \(1, \['a'\]\), not a \(key, value\) pair with a string key",
        ),
        ([("nope", 1)], r"unknown key\(s\) \['nope'\]"),
        ([("log", ["a"]), ("n", "x")], r"key 'n' should be int, got str"),
        ({"log", "n"}, r"an update is a mapping of keys to values, or a list of \(key, value\) pairs"),
    ],
)
def test_a_malformed_list_is_refused_naming_the_item(compile_graph, update: Any, error: str) -> None:
    g = one_vertex(lambda s: ag.Command(update=update), state=Log)
    with pytest.raises(ag.InvalidUpdateError, match=error):
        compile_graph(g).invoke(START_LOG)


def test_a_vertex_returning_a_list_of_writes_is_told_to_use_a_command(compile_graph) -> None:
    g = one_vertex(lambda s: [("log", ["a"])], state=Log, returns="update")
    with pytest.raises(
        ag.InvalidUpdateError,
        match=r"returned a list; .*return Command\(update=\[\('key', value\), \.\.\.\]\)",
    ):
        compile_graph(g).invoke(START_LOG)


def test_an_empty_list_changes_nothing(compile_graph) -> None:
    g = one_vertex(lambda s: ag.Command(update=[]), state=Log)
    assert compile_graph(g).invoke(START_LOG).state == START_LOG


def test_a_graph_without_a_schema_uses_its_merge_reducers(compile_graph) -> None:
    g = one_vertex(
        lambda s: ag.Command(update=[("log", [1]), ("log", [2])]), merge=by_key({"log": operator.add})
    )
    assert compile_graph(g).invoke({"log": [0]}).state == {"log": [0, 1, 2]}


def test_writes_as_the_input_of_a_run(compile_graph, store) -> None:
    g = one_vertex(lambda s: None, state=Log)
    app = compile_graph(g, checkpointer=store)
    app.invoke(START_LOG, thread_id="t")
    update = [("log", ["a"]), ("log", ["b"])]
    assert app.invoke(ag.Command(update=update, goto="x"), thread_id="t").state["log"] == ["in", "a", "b"]
    app.update_state("t", [("n", 5), ("n", 5)])
    assert app.get_state("t").state["n"] == 11


def test_declared_outputs_rename_each_write(compile_graph) -> None:
    g: ag.Graph = ag.Graph(state=Log)
    g.add_vertex(
        "x",
        lambda log: ag.Command(update=[("out", ["a"]), ("out", ["b"])]),
        inputs=["log"],
        outputs={"out": "log"},
    )
    g.add_edge(ag.START, "x")
    g.add_edge("x", ag.END)
    assert compile_graph(g).invoke(START_LOG).state["log"] == ["in", "a", "b"]


def test_parallel_branches_writing_lists_merge_by_lineage(compile_graph) -> None:
    g: ag.Graph = ag.Graph(state=Log)
    for name in ("left", "right"):
        g.add_vertex(
            name, lambda s, name=name: ag.Command(update=[("log", [f"{name}1"]), ("log", [f"{name}2"])])
        )
        g.add_edge(ag.START, name)
    g.add_vertex("join", lambda s: None)
    g.add_edge(["left", "right"], "join")
    g.add_edge("join", ag.END)
    assert compile_graph(g).invoke(START_LOG).state["log"] == ["in", "left1", "left2", "right1", "right2"]


def test_a_subgraph_hands_its_parent_a_list_of_writes(compile_graph) -> None:
    child: ag.Graph = ag.Graph(state=Log, name="child")
    child.add_vertex("up", lambda s: ag.Command(graph=ag.PARENT, update=[("log", ["c1"]), ("log", ["c2"])]))
    child.add_edge(ag.START, "up")
    child.add_edge("up", ag.END)
    parent: ag.Graph = ag.Graph(state=Log)
    parent.add_vertex("team", child)
    parent.add_edge(ag.START, "team")
    parent.add_edge("team", ag.END)
    assert compile_graph(parent).invoke(START_LOG).state["log"] == ["in", "c1", "c2"]
