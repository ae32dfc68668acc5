"""LangGraph's tests of the stream modes `debug`, `tasks` and `checkpoints`, ported (our code, its checks).

Where the payloads differ on purpose the test says so: a task's `result` is its
new state (what `updates` gives), a vertex sees its own branch, our supersteps
start at 1 (the input's checkpoint is step 0, where LangGraph has -1 and 0), and
a `config` is the keywords of `get_state`.
"""

from __future__ import annotations

import itertools
import time
from collections import defaultdict
from collections.abc import Callable
from typing import Annotated, Any, NotRequired, TypedDict

import pytest

import actorgraph as ag
from actorgraph.checkpoint import MemoryCheckpointer
from actorgraph.func import entrypoint, task
from actorgraph.merge import append

Compile = Callable[..., ag.CompiledGraph]


class Messages(TypedDict):
    messages: Annotated[list[str], append]


def entered(name: str) -> Callable[[Messages], dict[str, list[str]]]:
    return lambda state: {"messages": [f"entered {name} node"]}


def line(names: list[str], last: tuple[str, Any] | None = None) -> ag.Graph[Messages]:
    """START -> names... -> (the subgraph `last`) -> END."""
    g: ag.Graph[Messages] = ag.Graph(state=Messages, returns="update")
    steps: list[tuple[str, Any]] = [(n, entered(n)) for n in names] + ([last] if last else [])
    for name, fn in steps:
        g.add_vertex(name, fn)
    for source, target in itertools.pairwise([ag.START, *(name for name, _ in steps), ag.END]):
        g.add_edge(source, target)
    return g


def same_as_history(items: list[dict[str, Any]], history: list[ag.Snapshot[Any]]) -> None:
    """Each checkpoint item says what the stored checkpoint says (oldest first)."""
    assert len(items) == len(history)
    for item, snap in zip(items, history, strict=True):
        assert item["values"] == snap.state
        assert item["next"] == list(snap.next)
        assert item["config"]["checkpoint_id"] == snap.checkpoint_id
        assert (item["parent_config"] or {}).get("checkpoint_id") == snap.parent_id
        assert [t["name"] for t in item["tasks"]] == list(snap.next)
        for planned in item["tasks"]:
            stored = snap.superstep.results.get(planned["id"])
            assert planned.get("error") == (stored.error if stored is not None and not stored.ok else None)
            assert planned["interrupts"] == tuple(i for i in snap.interrupts if i.task_id == planned["id"])


@pytest.mark.parametrize("durability", ["sync", "step", "exit"])
def test_debug_subgraphs(compile_graph: Compile, store: Any, durability: str) -> None:
    """LangGraph's `test_debug_subgraphs`: the streamed checkpoints are the stored ones.

    With durability "exit" LangGraph streams checkpoints it never stores (and the
    test keeps the last); we stream only what is stored, so no item names a
    checkpoint `get_state` cannot read.
    """
    parent = line(["p_one"], ("p_two", line(["c_one", "c_two"]).compile()))
    app = compile_graph(parent, checkpointer=store)
    items = list(app.stream({"messages": []}, mode="debug", thread_id="1", durability=durability))
    checkpoints = [i["payload"] for i in items if i["type"] == "checkpoint"]
    history = app.get_history("1")[::-1]
    same_as_history(checkpoints, history)
    assert len(checkpoints) == (1 if durability == "exit" else 3)
    assert checkpoints[-1]["values"] == {
        "messages": ["entered p_one node", "entered c_one node", "entered c_two node"]
    }


@pytest.mark.parametrize("durability", ["sync", "exit"])
def test_debug_nested_subgraphs(compile_graph: Compile, store: Any, durability: str) -> None:
    """LangGraph's `test_debug_nested_subgraphs`: with `subgraphs=True`, each run's checkpoints, by namespace.

    Its subgraphs' runs store nothing with "exit" in LangGraph; ours store their
    final checkpoint, so each namespace's items equal its history either way.
    """
    child = line(["c_one", "c_two"]).compile()
    parent = line(["p_one"], ("p_two", child)).compile()
    app = compile_graph(line(["gp_one"], ("gp_two", parent)), checkpointer=store)
    items = list(
        app.stream({"messages": []}, mode="debug", subgraphs=True, thread_id="1", durability=durability)
    )
    by_namespace: dict[tuple[str, ...], list[dict[str, Any]]] = defaultdict(list)
    for path, item in items:
        if item["type"] == "checkpoint":
            by_namespace[path].append(item["payload"])
    paths = sorted(by_namespace, key=len)  # with "exit" the innermost run stores first
    assert len(paths) == 3
    assert paths[0] == ()
    assert paths[1][0].startswith("gp_two@")
    assert paths[2][0] == paths[1][0]
    assert paths[2][1].startswith("p_two@")
    for path, checkpoints in by_namespace.items():
        namespace = "|".join(path)
        assert {c["config"]["namespace"] for c in checkpoints} == {namespace}
        same_as_history(checkpoints, app.get_history("1", namespace=namespace)[::-1])


def test_debug_retry(compile_graph: Compile, store: Any) -> None:
    """LangGraph's `test_debug_retry`: a run replayed from an older checkpoint streams checkpoints as stored.

    LangGraph forks with `update_state(config, None)` and streams from the fork;
    ours replays with `checkpoint_id=`: each new checkpoint names its parent.
    """
    app = compile_graph(line(["one", "two"]), checkpointer=store)
    app.invoke({"messages": []}, thread_id="1")
    target = next(s for s in app.get_history("1") if s.step == 1).parent_id
    assert target is not None
    items = list(app.stream(None, mode="debug", thread_id="1", checkpoint_id=target))
    checkpoints = [i["payload"] for i in items if i["type"] == "checkpoint"]
    stored = {s.checkpoint_id: s for s in app.get_history("1")}
    assert len(checkpoints) >= 2
    for item in checkpoints:
        assert item["config"] != item["parent_config"]
        snap = stored[item["config"]["checkpoint_id"]]
        assert (item["parent_config"] or {}).get("checkpoint_id") == snap.parent_id
        assert item["values"] == snap.state


class Query(TypedDict):
    query: str
    answer: NotRequired[str]
    docs: Annotated[list[str], append]


def retrieval(*, defer: bool) -> ag.Graph[Query]:
    """LangGraph's fan-out graph: rewrite -> two retrievers (one slower) -> qa (deferred, or a join)."""

    def slower(state: Query) -> dict[str, Any]:
        time.sleep(0.1)  # to order the stream, as LangGraph's does
        return {"docs": ["doc3", "doc4"]}

    g: ag.Graph[Query] = ag.Graph(state=Query, returns="update")
    g.add_vertex("rewrite_query", lambda s: {"query": f"query: {s['query']}"})
    g.add_vertex("retriever_one", lambda s: {"docs": ["doc1", "doc2"]})
    g.add_vertex("retriever_two", slower)
    g.add_vertex("qa", lambda s: {"answer": ",".join(sorted(s["docs"]))}, defer=defer)
    g.add_edge(ag.START, "rewrite_query")
    g.add_edge("rewrite_query", "retriever_one")
    g.add_edge("rewrite_query", "retriever_two")
    if defer:
        g.add_edge("retriever_one", "qa")
        g.add_edge("retriever_two", "qa")
    else:
        g.add_edge(["retriever_one", "retriever_two"], "qa")
    g.add_edge("qa", ag.END)
    return g


def test_in_one_fan_out_state_graph_defer_node(compile_graph: Compile) -> None:
    """LangGraph's `test_in_one_fan_out_state_graph_defer_node`, its `debug` stream.

    The triggers name the tasks whose messages started a task (LangGraph names
    its channels, `branch:to:qa`).
    """
    items = list(
        compile_graph(retrieval(defer=True)).stream(
            {"query": "what is weather in sf", "docs": []}, mode="debug"
        )
    )
    shape = [(i["type"], i["step"], i["payload"]["name"]) for i in items]
    assert shape == [
        ("task", 1, "rewrite_query"),
        ("task_result", 1, "rewrite_query"),
        ("task", 2, "retriever_one"),
        ("task", 2, "retriever_two"),
        ("task_result", 2, "retriever_one"),
        ("task_result", 2, "retriever_two"),
        ("task", 3, "qa"),
        ("task_result", 3, "qa"),
    ]
    starts = {i["payload"]["name"]: i["payload"] for i in items if i["type"] == "task"}
    assert starts["rewrite_query"]["input"] == {"query": "what is weather in sf", "docs": []}
    assert starts["rewrite_query"]["triggers"] == (ag.START,)
    assert starts["retriever_two"]["input"] == {"query": "query: what is weather in sf", "docs": []}
    assert starts["qa"]["input"]["docs"] == ["doc1", "doc2", "doc3", "doc4"]
    assert starts["qa"]["triggers"] == ("retriever_one", "retriever_two")
    results = [i["payload"] for i in items if i["type"] == "task_result"]
    assert all(r["error"] is None and r["interrupts"] == () for r in results)
    assert results[-1]["result"]["answer"] == "doc1,doc2,doc3,doc4"


def test_in_one_fan_out_out_one_graph_state(compile_graph: Compile) -> None:
    """LangGraph's `test_in_one_fan_out_out_one_graph_state` (its large cases): values, updates, debug.

    Each task's start comes before its update and its result right after it; the
    values of a superstep come after its tasks' results.
    """
    app = compile_graph(retrieval(defer=False))
    items = list(
        app.stream({"query": "what is weather in sf", "docs": []}, mode=["values", "updates", "debug"])
    )
    shape = [
        (mode, item["type"], item["payload"]["name"])
        if mode == "debug"
        else (mode, next(iter(item)) if mode == "updates" else "")
        for mode, item in items
    ]
    assert shape == [
        ("values", ""),
        ("debug", "task", "rewrite_query"),
        ("updates", "rewrite_query"),
        ("debug", "task_result", "rewrite_query"),
        ("values", ""),
        ("debug", "task", "retriever_one"),
        ("debug", "task", "retriever_two"),
        ("updates", "retriever_one"),
        ("debug", "task_result", "retriever_one"),
        ("updates", "retriever_two"),
        ("debug", "task_result", "retriever_two"),
        ("values", ""),
        ("debug", "task", "qa"),
        ("updates", "qa"),
        ("debug", "task_result", "qa"),
        ("values", ""),
    ]
    assert items[-1] == (
        "values",
        {
            "query": "query: what is weather in sf",
            "docs": ["doc1", "doc2", "doc3", "doc4"],
            "answer": "doc1,doc2,doc3,doc4",
        },
    )


def joined(old: str, new: str) -> str:
    return ", ".join(x for x in (old, new) if x)


class Foo(TypedDict):
    foo: Annotated[str, joined]


def test_multiple_writes_same_channel_from_same_node(compile_graph: Compile) -> None:
    """LangGraph's `test_multiple_writes_same_channel_from_same_node`, its `updates` and `tasks` stream.

    A task's result is its new state, its writes applied in order (LangGraph
    shows the writes themselves, `{"foo": {"$writes": ["one.0", "one.1"]}}`).
    """
    g: ag.Graph[Foo] = ag.Graph(state=Foo, returns="update")
    g.add_vertex("one", lambda s: ag.Command(update=[("foo", "one.0"), ("foo", "one.1")]))
    g.add_vertex("two", lambda s: {"foo": "two"})
    g.add_edge(ag.START, "one")
    g.add_edge("one", "two")
    g.add_edge("two", ag.END)
    app = compile_graph(g, checkpointer=MemoryCheckpointer())
    items = list(app.stream({"foo": "input"}, mode=["updates", "tasks"], thread_id="1"))
    done = {"error": None, "interrupts": (), "cached": False}
    assert items == [
        ("tasks", {"id": "one", "name": "one", "input": {"foo": "input"}, "triggers": (ag.START,)}),
        ("updates", {"one": {"foo": "input, one.0, one.1"}}),
        ("tasks", {"id": "one", "name": "one", "result": {"foo": "input, one.0, one.1"}, **done}),
        (
            "tasks",
            {"id": "two", "name": "two", "input": {"foo": "input, one.0, one.1"}, "triggers": ("one",)},
        ),
        ("updates", {"two": {"foo": "input, one.0, one.1, two"}}),
        ("tasks", {"id": "two", "name": "two", "result": {"foo": "input, one.0, one.1, two"}, **done}),
    ]
    assert app.get_state("1").state == {"foo": "input, one.0, one.1, two"}


@pytest.mark.threads_only("the entrypoint's checkpointer is made in this process")
def test_falsy_return_from_task() -> None:
    """LangGraph's `test_falsy_return_from_task`: a task's falsy result and a question, in `debug`.

    As LangGraph's stream: the task call is a task of the entrypoint, its
    `input` the call's `(args, kwargs)`; a checkpoint holds the return value
    (None here). Ours with durability "sync" (LangGraph's test runs "exit",
    where ours stores the input's checkpoint at the pause, so it comes last).
    LangGraph's resumed stream lists the recorded call's `task` again (without a
    result); ours does not, since the call does not run again.
    """

    @task
    def falsy_task() -> bool:
        return False

    @entrypoint(checkpointer=MemoryCheckpointer())
    def graph(state: dict[str, Any]) -> None:
        falsy_task().result()
        ag.interrupt("test")

    def shape(items: list[Any]) -> list[tuple[str, str]]:
        return [(i["type"], i["payload"].get("name", "")) for i in items]

    with graph:
        first = list(graph.stream({"a": 5}, {"configurable": {"thread_id": "t"}}, stream_mode="debug"))
        assert shape(first) == [
            ("checkpoint", ""),
            ("task", "graph"),
            ("task", "falsy_task"),
            ("task_result", "falsy_task"),
            ("task_result", "graph"),
        ]
        checkpoint, started, called, falsy, asked = (i["payload"] for i in first)
        assert (checkpoint["values"], checkpoint["next"]) == (None, ["graph"])
        assert checkpoint["parent_config"] is None
        assert (started["input"], started["triggers"]) == ({"a": 5}, (ag.START,))
        assert called["input"] == ((), {})
        assert falsy["result"] is False  # the falsy value is there, not dropped
        assert falsy["id"] == called["id"] != started["id"]
        assert asked["result"] is None
        assert [i.value for i in asked["interrupts"]] == ["test"]
        resumed = list(graph.stream(ag.Command(resume="123"), thread_id="t", mode="debug"))
        assert shape(resumed) == [
            ("checkpoint", ""),
            ("task", "graph"),
            ("task_result", "graph"),
            ("checkpoint", ""),
        ]
        start, _, ended, last = (i["payload"] for i in resumed)
        assert start["config"]["checkpoint_id"] == checkpoint["config"]["checkpoint_id"]
        assert [i.value for i in start["tasks"][0]["interrupts"]] == ["test"]
        assert (ended["result"], ended["interrupts"]) == (None, ())
        assert (last["values"], last["next"], last["tasks"]) == (None, [], [])
