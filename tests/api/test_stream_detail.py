"""The stream modes that describe tasks and checkpoints: `tasks`, `checkpoints` and `debug`."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import Any

import pytest
from shared import SharedList

import actorgraph as ag
from actorgraph import events as ev
from actorgraph.cache import MemoryCache
from actorgraph.checkpoint import MemoryCheckpointer
from actorgraph.merge import append, by_key

Compile = Callable[..., ag.CompiledGraph]


def chain() -> ag.Graph:
    """a -> b; each appends its name to `log`."""
    g: ag.Graph = ag.Graph(merge=by_key({"log": append}))
    g.add_vertex("a", lambda s: {**s, "log": [*s["log"], "a"]})
    g.add_vertex("b", lambda s: {**s, "log": [*s["log"], "b"]})
    g.add_edge(ag.START, "a")
    g.add_edge("a", "b")
    g.add_edge("b", ag.END)
    return g


def asking() -> ag.Graph:
    """a -> ask (asks "ok?", appends the answer)."""
    g: ag.Graph = ag.Graph(merge=by_key({"log": append}))
    g.add_vertex("a", lambda s: {**s, "log": [*s["log"], "a"]})
    g.add_vertex("ask", lambda s: {**s, "log": [*s["log"], ag.interrupt("ok?")]})
    g.add_edge(ag.START, "a")
    g.add_edge("a", "ask")
    g.add_edge("ask", ag.END)
    return g


def fan_in(merge_log: Any) -> ag.Graph:
    """left and right, joined: the join's input is the merge of both (`merge_log` merges `log`)."""
    g: ag.Graph = ag.Graph(merge=by_key({"log": merge_log}))
    for name in ("left", "right"):
        g.add_vertex(name, lambda s, name=name: {**s, "log": [*s["log"], name]})
        g.add_edge(ag.START, name)
    g.add_vertex("join", lambda s: s)
    g.add_edge(["left", "right"], "join")
    g.add_edge("join", ag.END)
    return g


def test_tasks_give_each_task_start_and_result_in_order(compile_graph: Compile) -> None:
    items = list(compile_graph(chain()).stream({"log": []}, mode="tasks"))
    assert items == [
        {"id": "a", "name": "a", "input": {"log": []}, "triggers": (ag.START,)},
        {"id": "a", "name": "a", "result": {"log": ["a"]}, "error": None, "interrupts": (), "cached": False},
        {"id": "b", "name": "b", "input": {"log": ["a"]}, "triggers": ("a",)},
        {
            "id": "b",
            "name": "b",
            "result": {"log": ["a", "b"]},
            "error": None,
            "interrupts": (),
            "cached": False,
        },
    ]


def test_a_task_with_several_senders_names_them_all_and_gets_their_merge(compile_graph: Compile) -> None:
    starts = [i for i in compile_graph(fan_in(append)).stream({"log": []}, mode="tasks") if "input" in i]
    join = next(i for i in starts if i["name"] == "join")
    assert join["triggers"] == ("left", "right")
    assert sorted(join["input"]["log"]) == ["left", "right"]


def test_a_failed_task_gives_its_error_once_after_its_retries(compile_graph: Compile) -> None:
    attempts = SharedList()

    def flaky(state: dict[str, Any]) -> dict[str, Any]:
        attempts.append(1)
        msg = "always"
        raise ValueError(msg)

    g: ag.Graph = ag.Graph()
    g.add_vertex(
        "flaky", flaky, retry=ag.RetryPolicy(initial_interval=0.0, jitter=False, retry_on=ValueError)
    )
    g.add_edge(ag.START, "flaky")
    g.add_edge("flaky", ag.END)
    items: list[Any] = []
    with pytest.raises(ag.VertexError):
        items.extend(compile_graph(g).stream({"n": 1}, mode="tasks"))
    assert len(attempts) == 3
    start, result = items  # one start, one final result: the retries are the task's own business
    assert start["name"] == "flaky"
    assert result["result"] is None
    assert result["error"].type == "builtins.ValueError"
    assert result["error"].message == "always"


def test_a_task_that_asks_gives_its_questions_and_a_resumed_run_starts_from_its_checkpoint(
    compile_graph: Compile,
) -> None:
    app = compile_graph(asking(), checkpointer=MemoryCheckpointer())
    first = list(app.stream({"log": []}, mode=["tasks", "checkpoints"], thread_id="t"))
    paused = app.get_state("t")
    asked = first[-1]
    assert asked[0] == "tasks"
    assert asked[1]["name"] == "ask"
    assert asked[1]["result"] is None
    assert asked[1]["interrupts"] == paused.interrupts
    resumed = list(app.stream(ag.Command(resume="yes"), mode=["tasks", "checkpoints"], thread_id="t"))
    mode, start = resumed[0]  # the checkpoint it continues from, its question in its task
    assert mode == "checkpoints"
    assert start["config"] == {"thread_id": "t", "checkpoint_id": paused.checkpoint_id, "namespace": ""}
    assert start["tasks"] == [{"id": "ask", "name": "ask", "interrupts": paused.interrupts, "state": None}]
    assert [m for m, _ in resumed[1:]] == ["tasks", "tasks", "checkpoints"]
    assert resumed[2][1]["result"] == {"log": ["a", "yes"]}
    assert resumed[-1][1]["values"] == {"log": ["a", "yes"]}
    assert resumed[-1][1]["parent_config"] == start["config"]


def test_a_failed_superstep_resumed_shows_what_is_kept_and_what_failed(compile_graph: Compile) -> None:
    fail = SharedList([True])

    def shaky(state: dict[str, Any]) -> dict[str, Any]:
        if fail:
            msg = "not yet"
            raise RuntimeError(msg)
        return {**state, "log": [*state["log"], "shaky"]}

    g: ag.Graph = ag.Graph(merge=by_key({"log": append}))
    g.add_vertex("steady", lambda s: {**s, "log": [*s["log"], "steady"]})
    g.add_vertex("shaky", shaky)
    for name in ("steady", "shaky"):
        g.add_edge(ag.START, name)
        g.add_edge(name, ag.END)
    app = compile_graph(g, checkpointer=MemoryCheckpointer())
    with pytest.raises(ag.VertexError):
        app.invoke({"log": []}, thread_id="t")
    fail.clear()
    items = list(app.stream(None, mode=["tasks", "checkpoints"], thread_id="t"))
    mode, start = items[0]
    assert mode == "checkpoints"
    by_name = {t["name"]: t for t in start["tasks"]}
    assert by_name["steady"]["result"] == {"log": ["steady"]}
    assert by_name["shaky"]["error"].message == "not yet"
    assert [i["name"] for m, i in items if m == "tasks"] == ["shaky", "shaky"]  # steady is kept, not run


def test_a_node_cache_hit_is_marked_cached(compile_graph: Compile) -> None:
    g: ag.Graph = ag.Graph()
    g.add_vertex("double", lambda s: {"x": s["x"] * 2}, cache=ag.CachePolicy())
    g.add_edge(ag.START, "double")
    g.add_edge("double", ag.END)
    app = compile_graph(g, cache=MemoryCache())
    first = list(app.stream({"x": 2}, mode="tasks"))
    second = list(app.stream({"x": 2}, mode="tasks"))
    assert [i.get("cached") for i in first] == [None, False]
    assert [i.get("cached") for i in second] == [None, True]
    assert second[1]["result"] == {"x": 4}


def test_checkpoints_need_a_checkpointer_as_in_langgraph(compile_graph: Compile) -> None:
    """LangGraph streams no checkpoint without a checkpointer; `debug` then has task items only."""
    app = compile_graph(chain())
    assert list(app.stream({"log": []}, mode="checkpoints")) == []
    assert [i["type"] for i in app.stream({"log": []}, mode="debug")] == ["task", "task_result"] * 2


@pytest.mark.parametrize("durability", ["sync", "step", "exit"])
def test_checkpoint_items_are_the_checkpoints_stored(compile_graph: Compile, durability: str) -> None:
    """With durability "exit" only the last is stored, so only it is streamed (LangGraph streams all)."""
    app = compile_graph(chain(), checkpointer=MemoryCheckpointer())
    items = list(app.stream({"log": []}, mode="checkpoints", thread_id="t", durability=durability))
    history = app.get_history("t")[::-1]
    assert [i["config"]["checkpoint_id"] for i in items] == [s.checkpoint_id for s in history]
    assert len(items) == (1 if durability == "exit" else 3)
    for item, snap in zip(items, history, strict=True):
        assert app.get_state(**item["config"]) == snap
        assert item["values"] == snap.state
        assert item["next"] == list(snap.next)
        assert item["metadata"]["step"] == snap.step
        assert item["metadata"]["source"] == snap.source
        parent = item["parent_config"]
        assert (parent["checkpoint_id"] if parent else None) == snap.parent_id
        assert [t["name"] for t in item["tasks"]] == list(snap.next)


def test_debug_wraps_each_item_with_its_kind_superstep_and_time(compile_graph: Compile) -> None:
    app = compile_graph(chain(), checkpointer=MemoryCheckpointer())
    items = list(app.stream({"log": []}, mode="debug", thread_id="t"))
    assert [(i["type"], i["step"]) for i in items] == [
        ("checkpoint", 0),
        ("task", 1),
        ("task_result", 1),
        ("checkpoint", 1),
        ("task", 2),
        ("task_result", 2),
        ("checkpoint", 2),
    ]
    assert all(dt.datetime.fromisoformat(i["timestamp"]).tzinfo is not None for i in items)
    plain = list(app.stream({"log": []}, mode=["tasks", "checkpoints"], thread_id="u"))
    assert [i["payload"].keys() for i in items] == [p.keys() for _, p in plain]


def test_a_subgraph_task_points_at_its_run_and_its_items_come_with_subgraphs(compile_graph: Compile) -> None:
    outer: ag.Graph = ag.Graph(merge=by_key({"log": append}))
    outer.add_vertex("inner", chain().compile())
    outer.add_edge(ag.START, "inner")
    outer.add_edge("inner", ag.END)
    app = compile_graph(outer, checkpointer=MemoryCheckpointer())
    alone = list(app.stream({"log": []}, mode="checkpoints", thread_id="t"))
    assert len(alone) == 2  # the parent's own: no item of the subgraph's run without subgraphs=True
    pointer = alone[0]["tasks"][0]["state"]
    namespace = pointer["namespace"]
    assert pointer == {"thread_id": "t", "namespace": namespace}
    assert app.get_state(**pointer).state == {"log": ["a", "b"]}
    items = list(app.stream({"log": []}, mode="checkpoints", subgraphs=True, thread_id="u"))
    inner = [item for path, item in items if path]
    assert {path for path, _ in items} == {(), (items[0][1]["tasks"][0]["state"]["namespace"],)}
    assert [i["values"] for i in inner] == [{"log": []}, {"log": ["a"]}, {"log": ["a", "b"]}]
    assert all(i["config"]["thread_id"] == "u" for i in inner)
    assert app.get_history("u", namespace=inner[0]["config"]["namespace"])[0] == app.get_state(
        **inner[-1]["config"]
    )


def test_the_events_are_there_for_listeners_too(compile_graph: Compile) -> None:
    seen: list[ev.Event] = []

    class Watcher:
        kinds = frozenset({ev.TaskScheduled, ev.CheckpointSaved})

        def __call__(self, event: ev.Event) -> None:
            seen.append(event)

    app = compile_graph(chain(), checkpointer=MemoryCheckpointer())
    app.invoke({"log": []}, thread_id="t", listeners=[Watcher()])
    kinds = [type(e).__name__ for e in seen]
    assert kinds == [
        "CheckpointSaved",
        "TaskScheduled",
        "CheckpointSaved",
        "TaskScheduled",
        "CheckpointSaved",
    ]
    first = seen[1]
    assert isinstance(first, ev.TaskScheduled)
    assert (first.task_id, first.step, first.input, first.triggers) == ("a", 1, {"log": []}, (ag.START,))


@pytest.mark.threads_only("the merge counts its calls in this process's memory")
def test_nothing_is_built_for_these_modes_when_nobody_listens(compile_graph: Compile) -> None:
    """A task's input is merged again only for a `TaskScheduled`, so the merges counted show it."""
    merges: list[int] = []

    def counted(a: Any, b: Any) -> Any:
        merges.append(1)
        return append(a, b)

    app = compile_graph(fan_in(counted))
    list(app.stream({"log": []}, mode="updates"))
    plain = len(merges)
    merges.clear()
    list(app.stream({"log": []}, mode="tasks"))
    assert len(merges) > plain  # the join's input, merged once more for its start item
