"""Watching runs: stream modes, events, listeners, pictures of a thread."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest
from shared import SharedDict, SharedEvent, SharedList

import actorgraph as ag
from actorgraph import events as ev
from actorgraph.checkpoint import MemoryCheckpointer
from actorgraph.merge import append, by_key
from actorgraph.testing import FakeClock

Compile = Callable[..., ag.CompiledGraph]


def chain(gate: SharedEvent | None = None) -> ag.Graph:
    """a -> b -> c; c waits for `gate` when given."""
    g: ag.Graph = ag.Graph()
    g.add_vertex("a", lambda s: {"n": s["n"] + 1})
    g.add_vertex("b", lambda s: {"n": s["n"] * 10})
    g.add_vertex("c", lambda s: (gate.wait(10) if gate else None, {"n": s["n"] + 5})[1])
    g.add_edge(ag.START, "a")
    g.add_edge("a", "b")
    g.add_edge("b", "c")
    g.add_edge("c", ag.END)
    return g


def test_values_are_the_state_after_each_superstep_in_order(compile_graph: Compile) -> None:
    assert list(compile_graph(chain()).stream({"n": 1})) == [{"n": 1}, {"n": 2}, {"n": 20}, {"n": 25}]


def test_the_first_item_arrives_before_the_last_vertex_runs(compile_graph: Compile) -> None:
    gate = SharedEvent()
    seen: list[Any] = []
    for item in compile_graph(chain(gate)).stream({"n": 1}):
        seen.append(item)
        if len(seen) == 3:
            assert not gate.is_set()  # c is still waiting: items came during the run
            gate.set()
    assert seen[-1] == {"n": 25}


def test_updates_give_each_finished_task_state(compile_graph: Compile) -> None:
    g: ag.Graph = ag.Graph(merge=by_key({"log": append}))
    g.add_vertex("left", lambda s: {"log": [*s["log"], "L"]})
    g.add_vertex("right", lambda s: {"log": [*s["log"], "R"]})
    for name in ("left", "right"):
        g.add_edge(ag.START, name)
        g.add_edge(name, ag.END)
    updates = list(compile_graph(g).stream({"log": []}, mode="updates"))
    assert sorted(updates, key=str) == [{"left": {"log": ["L"]}}, {"right": {"log": ["R"]}}]


def test_events_come_in_order_with_their_records(compile_graph: Compile) -> None:
    items = list(compile_graph(chain()).stream({"n": 1}, mode="events"))
    kinds = [type(e).__name__ for e in items]
    assert kinds[:3] == ["RunStarted", "SuperstepCommitted", "SuperstepStarted"]
    assert kinds[-1] == "RunFinished" and items[-1].status == "done" and items[-1].state == {"n": 25}
    finished = [e for e in items if isinstance(e, ev.TaskFinished)]
    assert [(e.step, e.result.task_id, e.result.status) for e in finished] == [
        (1, "a", "ok"),
        (2, "b", "ok"),
        (3, "c", "ok"),
    ]
    started = [e for e in items if isinstance(e, ev.TaskStarted)]
    assert [(e.task_id, e.attempt) for e in started] == [("a", 1), ("b", 1), ("c", 1)]
    assert all(e.run_id == items[0].run_id for e in items)


def test_custom_gives_only_what_vertices_emit(compile_graph: Compile) -> None:
    def chatty(state: dict[str, int], ctx: ag.Context[Any]) -> dict[str, int]:
        for i in range(3):
            ctx.emit({"progress": i})
        return state

    g: ag.Graph = ag.Graph()
    g.add_vertex("chatty", chatty)
    g.add_edge(ag.START, "chatty")
    g.add_edge("chatty", ag.END)
    assert list(compile_graph(g).stream({}, mode="custom")) == [{"progress": i} for i in range(3)]


def test_several_modes_yield_pairs(compile_graph: Compile) -> None:
    pairs = list(compile_graph(chain()).stream({"n": 1}, mode=["values", "updates"]))
    assert pairs[:3] == [("values", {"n": 1}), ("updates", {"a": {"n": 2}}), ("values", {"n": 2})]
    with pytest.raises(ag.ActorGraphError, match="unknown stream mode"):
        list(compile_graph(chain()).stream({"n": 1}, mode="everything"))


def test_breaking_out_cancels_the_run(compile_graph: Compile) -> None:
    ran = SharedList()
    g: ag.Graph = ag.Graph()
    g.add_vertex("tick", lambda s: (ran.append(s["n"]), time.sleep(0.01), {"n": s["n"] + 1})[2])
    g.add_edge(ag.START, "tick")
    g.add_conditional_edges("tick", lambda s: "tick")
    for item in compile_graph(g).stream({"n": 0}):
        if item["n"] == 3:
            break
    time.sleep(0.1)
    settled = len(ran)
    time.sleep(0.1)
    assert len(ran) == settled <= 5


def test_a_failing_run_raises_after_its_last_item(compile_graph: Compile) -> None:
    def broken(state: Any) -> Any:
        raise ValueError("bad")

    g: ag.Graph = ag.Graph()
    g.add_vertex("broken", broken)
    g.add_edge(ag.START, "broken")
    g.add_edge("broken", ag.END)
    items: list[Any] = []
    with pytest.raises(ag.VertexError):
        items.extend(compile_graph(g).stream({"x": 1}))
    assert items == [{"x": 1}]


def test_streaming_a_thread_resumes_and_streams_the_rest(compile_graph: Compile) -> None:
    g: ag.Graph = ag.Graph()
    g.add_vertex("ask", lambda s: {"answer": ag.interrupt("?")})
    g.add_vertex("done", lambda s: {**s, "done": True})
    g.add_edge(ag.START, "ask")
    g.add_edge("ask", "done")
    g.add_edge("done", ag.END)
    app = compile_graph(g, checkpointer=MemoryCheckpointer())
    paused = list(app.stream({}, thread_id="s"))  # the pause is an item, as in LangGraph
    assert paused == [{}, {"__interrupt__": app.get_state("s").interrupts}]
    assert list(app.stream(ag.Command(resume=42), thread_id="s")) == [
        {},
        {"answer": 42},
        {"answer": 42, "done": True},
    ]


# -- listeners and logs ---------------------------------------------------------------------------


def test_listeners_receive_events_from_compile_and_from_a_run(compile_graph: Compile) -> None:
    everything: list[ev.Event] = []
    retries: list[ev.Event] = []

    class RetriesOnly:
        kinds = frozenset({ev.RetryScheduled})

        def __call__(self, event: ev.Event) -> None:
            retries.append(event)

    calls = SharedDict({"n": 0})

    def flaky(state: Any) -> Any:
        if calls.add("n") == 1:
            raise ConnectionError("blip")
        return state

    g: ag.Graph = ag.Graph()
    g.add_vertex("flaky", flaky, retry=ag.RetryPolicy(jitter=False))
    g.add_edge(ag.START, "flaky")
    g.add_edge("flaky", ag.END)
    app = compile_graph(g, listeners=[everything.append], clock=FakeClock())
    app.invoke({}, listeners=[RetriesOnly()])
    assert [type(e).__name__ for e in retries] == ["RetryScheduled"]
    assert retries[0].attempt == 1 and retries[0].delay == 0.5  # type: ignore[attr-defined]
    failed_attempt = next(e for e in everything if isinstance(e, ev.TaskFinished) and not e.final)
    assert failed_attempt.result.status == "error"
    assert isinstance(everything[-1], ev.RunFinished)


def test_a_broken_listener_does_not_break_the_run(compile_graph: Compile) -> None:
    def broken(event: ev.Event) -> None:
        raise RuntimeError("listener bug")

    assert compile_graph(chain(), listeners=[broken]).invoke({"n": 1}).state == {"n": 25}


def test_a_join_that_never_fires_is_an_event(compile_graph: Compile) -> None:
    g: ag.Graph = ag.Graph()
    g.add_vertex("a", lambda s: {**s, "a": 1})
    g.add_vertex("b", lambda s: s)
    g.add_vertex("c", lambda s: s)
    g.add_edge(ag.START, "a")
    g.add_conditional_edges(ag.START, lambda s: [], ["b"])
    g.add_edge(["a", "b"], "c")
    g.add_edge("b", ag.END)
    g.add_edge("c", ag.END)
    waiting = [e for e in compile_graph(g).stream({}, mode="events") if isinstance(e, ev.JoinWaiting)]
    assert [(e.join, e.missing) for e in waiting] == [("a+b>c", ("b",))]


# -- pictures -----------------------------------------------------------------------------------------


def test_draw_mermaid_of_a_thread_marks_each_vertex_with_its_last_status(compile_graph: Compile) -> None:
    def fails(state: Any) -> Any:
        raise ValueError("no")

    g: ag.Graph = ag.Graph()
    g.add_vertex("first", lambda s: s)
    g.add_vertex("second", fails)
    g.add_vertex("third", lambda s: s)
    g.add_edge(ag.START, "first")
    g.add_edge("first", "second")
    g.add_edge("second", "third")
    g.add_edge("third", ag.END)
    app = compile_graph(g, checkpointer=MemoryCheckpointer())
    with pytest.raises(ag.VertexError):
        app.invoke({}, thread_id="pic")
    picture = app.draw_mermaid(thread_id="pic")
    assert "class v0 ok" in picture and "class v1 error" in picture and "class v2" not in picture
    assert app.draw_mermaid().startswith("flowchart TD")
    assert "digraph" in app.draw_dot(thread_id="pic")


@pytest.mark.needs_dot
def test_draw_png_renders(compile_graph: Compile, tmp_path: Any) -> None:
    path = compile_graph(chain()).draw_png(tmp_path / "graph.png")
    assert path.read_bytes().startswith(b"\x89PNG")


def test_a_stream_ends_with_its_run_not_a_batch_later(
    compile_graph: Compile, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A hot consumer sleeps `BATCH` between looks; the run's end must wake it at once."""
    from actorgraph._api.stream import Mailbox

    monkeypatch.setattr(Mailbox, "BATCH", 60.0)  # were the end not to wake it, a stream would take a minute
    app = compile_graph(chain())
    started = time.monotonic()
    assert list(app.stream({"n": 1}, mode="values")) == [{"n": 1}, {"n": 2}, {"n": 20}, {"n": 25}]

    async def drain() -> list[Any]:
        return [item async for item in app.astream({"n": 1}, mode="updates")]

    import asyncio

    assert len(asyncio.run(drain())) == 3
    assert time.monotonic() - started < 30, "a stream waited for its consumer's batch timer to end"


# -- one mode: what the run hands the stream directly, not as event records -----------------------


def _fan_out() -> ag.Graph:
    """A `Send` per item, each task's update appended, then a join."""
    g: ag.Graph = ag.Graph(merge=by_key({"out": append}))
    g.add_vertex("split", lambda s: s)
    g.add_vertex("work", lambda s: {"out": [s["item"] * 2]}, returns="update")
    g.add_vertex("join", lambda s: {**s, "total": sum(s["out"])})
    g.add_edge(ag.START, "split")
    g.add_conditional_edges("split", lambda s: [ag.Send("work", {"item": i}) for i in range(4)], ["work"])
    g.add_edge("work", "join")
    g.add_edge("join", ag.END)
    return g


def _retried(failures: SharedList) -> ag.Graph:
    """a -> flaky -> END; flaky fails its first attempt, then returns."""

    def flaky(state: dict[str, Any]) -> dict[str, Any]:
        failures.append(1)
        if len(failures) == 1:
            raise ConnectionError("once")
        return {"n": state["n"] + 1}

    g: ag.Graph = ag.Graph()
    g.add_vertex("a", lambda s: {"n": s["n"] * 10})
    g.add_vertex("flaky", flaky, retry=ag.RetryPolicy(max_attempts=2, jitter=False))
    g.add_edge(ag.START, "a")
    g.add_edge("a", "flaky")
    g.add_edge("flaky", ag.END)
    return g


def _failing() -> ag.Graph:
    """a -> broken -> END; broken always fails."""

    def broken(state: dict[str, Any]) -> dict[str, Any]:
        raise ValueError("bad")

    g: ag.Graph = ag.Graph()
    g.add_vertex("a", lambda s: {"n": s["n"] + 1})
    g.add_vertex("broken", broken)
    g.add_edge(ag.START, "a")
    g.add_edge("a", "broken")
    g.add_edge("broken", ag.END)
    return g


def _asking() -> ag.Graph:
    """a, then a question inside a subgraph, then done."""
    inner: ag.Graph = ag.Graph()
    inner.add_vertex("ask", lambda s: {**s, "answer": ag.interrupt("?")})
    inner.add_edge(ag.START, "ask")
    inner.add_edge("ask", ag.END)
    g: ag.Graph = ag.Graph()
    g.add_vertex("a", lambda s: {"n": s["n"] + 1})
    g.add_vertex("inner", inner.compile())
    g.add_vertex("done", lambda s: {**s, "done": True})
    g.add_edge(ag.START, "a")
    g.add_edge("a", "inner")
    g.add_edge("inner", "done")
    g.add_edge("done", ag.END)
    return g


def _items(app: ag.CompiledGraph, mode: Any, inputs: list[Any]) -> list[Any]:
    """Every item of streaming `inputs` in turn on one thread, each run's error as an item.

    A question is shown by its vertex and value (its id is drawn anew for each run).
    """

    def shown(item: Any) -> Any:
        if isinstance(item, tuple):
            return tuple(shown(part) for part in item)
        if isinstance(item, dict) and "__interrupt__" in item:
            return {**item, "__interrupt__": [(i.vertex, i.value) for i in item["__interrupt__"]]}
        return item

    got: list[Any] = []
    for given in inputs:
        try:
            got.extend(shown(item) for item in app.stream(given, mode=mode, thread_id="t"))
        except ag.VertexError as exc:
            got.append(("raised", exc.vertex))
    return got


@pytest.mark.parametrize("mode", ["values", "updates"])
@pytest.mark.parametrize(
    ("make", "inputs"),
    [
        (chain, [{"n": 1}]),
        (_fan_out, [{"out": []}]),
        (lambda: _retried(SharedList()), [{"n": 1}]),
        (_failing, [{"n": 1}]),
        (_asking, [{"n": 1}, ag.Command(resume=42)]),
    ],
    ids=["chain", "sends", "a retry", "a failure", "a question in a subgraph, answered"],
)
def test_one_mode_yields_what_the_event_records_make(
    compile_graph: Compile, mode: str, make: Callable[[], ag.Graph], inputs: list[Any]
) -> None:
    """A stream of one mode takes states and results straight from the run (no record is built for
    it); a list of modes reads them from the event records. Both yield the same items, and a
    listener beside the stream still gets every record."""
    heard: dict[str, list[ev.Event]] = {"one": [], "paired": []}

    def items(stream_mode: Any, way: str) -> list[Any]:
        app = compile_graph(
            make(), checkpointer=MemoryCheckpointer(), clock=FakeClock(), listeners=[heard[way].append]
        )
        return _items(app, stream_mode, inputs)

    one = items(mode, "one")
    paired = [item[1] if item[0] == mode else item for item in items([mode], "paired")]
    if mode == "updates":  # the tasks of one superstep finish in any order
        one, paired = sorted(one, key=repr), sorted(paired, key=repr)
    assert paired == one
    kind = ev.SuperstepCommitted if mode == "values" else ev.TaskFinished
    counted = {way: sum(type(e) is kind and not e.namespace for e in got) for way, got in heard.items()}
    assert counted["one"] == counted["paired"] > 0
