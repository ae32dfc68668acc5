"""A live wait ends once no run can answer it: when its graph, or the graph that invoked it, closes.

A `@task`'s graph serves every entrypoint of the process and stays open while
any is open; a graph invoked from a vertex is the caller's. A question asked
there waits live in its own graph's actor; once the graph whose run could
answer it (the entrypoint, the invoking graph) is closed or dropped, the wait
must end at once: no actor held for the ten minutes of the wait. So must a
question asked while its own graph closes.
"""

from __future__ import annotations

import gc
import threading
import warnings
from typing import Any

import pytest

import actorgraph as ag
from actorgraph._actors import live, reaper
from actorgraph.checkpoint import MemoryCheckpointer
from actorgraph.func import entrypoint, task

pytestmark = pytest.mark.threads_only("Ray workers run no live path, and invocations nest on threads only")


_base = [0]


@pytest.fixture(autouse=True)
def _seats_before() -> None:
    _base[0] = live.waiting()


def waiting() -> int:
    """How many vertices of this process began to wait for an answer since the test began."""
    return live.waiting() - _base[0]


@pytest.fixture
def another_entrypoint() -> Any:
    """An entrypoint open all along (as one made at import would be): the tasks' graphs stay open."""
    with entrypoint()(lambda value: value) as other:
        yield other


def _asking_task() -> Any:
    @task
    def check(x: int) -> int:
        return x + ag.interrupt({"check": x})

    return check


def test_closing_a_paused_entrypoint_frees_its_task_waiting_live(another_entrypoint: Any) -> None:
    check = _asking_task()

    @entrypoint(checkpointer=MemoryCheckpointer())
    def flow(n: int) -> int:
        return check(n).result()

    with flow:
        assert flow.invoke(1, thread_id="t").status == "interrupted"
        assert waiting() == 1  # the task's vertex waits in its actor
    assert not check.graph().closed  # the other entrypoint keeps the task's graph open
    assert waiting() == 0  # but no run can answer it now: it unwound with the entrypoint's close


def test_a_paused_entrypoint_dropped_without_close_frees_its_task_once_collected(
    another_entrypoint: Any,
) -> None:
    check = _asking_task()

    @entrypoint(checkpointer=MemoryCheckpointer())
    def flow(n: int) -> int:
        return check(n).result()

    assert flow.invoke(1, thread_id="t").status == "interrupted"
    assert waiting() == 1
    flow.cycle = flow  # type: ignore[attr-defined] - only a collection frees it
    del flow
    gc.collect()
    assert reaper.settle()  # the reaper closed the entrypoint's graph
    assert waiting() == 0


def test_closing_a_graph_frees_the_graph_its_vertex_invoked_waiting_live() -> None:
    inner: ag.Graph = ag.Graph(name="inner")
    inner.add_vertex("ask", lambda s: {"n": s["n"] + ag.interrupt("more?")})
    inner.add_edge(ag.START, "ask").add_edge("ask", ag.END)
    with inner.compile() as invoked:
        outer: ag.Graph = ag.Graph(name="outer")
        outer.add_vertex("call", lambda s: invoked.invoke(s).state)
        outer.add_edge(ag.START, "call").add_edge("call", ag.END)
        with outer.compile(MemoryCheckpointer()) as app:
            assert app.invoke({"n": 1}, thread_id="t").status == "interrupted"
            assert waiting() == 1
        assert not invoked.closed
        assert waiting() == 0


def test_a_task_that_asks_after_its_entrypoint_was_closed_does_not_wait() -> None:
    running, go, unwound = threading.Event(), threading.Event(), threading.Event()

    @task
    def check(x: int) -> int:
        running.set()
        assert go.wait(30)
        try:
            return x + ag.interrupt({"check": x})  # asked once the entrypoint's graph is closed
        finally:
            unwound.set()  # the question ended the call: it did not wait for an answer

    @entrypoint(checkpointer=MemoryCheckpointer())
    def flow(n: int) -> int:
        return check(n).result()

    handle = flow.start(1, thread_id="t")
    assert running.wait(30)
    with warnings.catch_warnings():  # the function may still wait for its task: not waited for
        warnings.simplefilter("ignore", ag.StuckVertexWarning)
        flow.graph.close(timeout=0.01)  # its seats were released before the task asks
    go.set()
    assert unwound.wait(30), "the task waits live for an answer no run can give"
    assert waiting() == 0
    with pytest.raises(ag.ActorGraphError, match="was closed while this run was going"):
        handle.result(timeout=30)
    flow.close()


def test_a_vertex_that_asks_while_its_graph_closes_does_not_wait() -> None:
    running, go, unwound = threading.Event(), threading.Event(), threading.Event()

    def ask(state: dict[str, Any]) -> dict[str, Any]:
        running.set()
        assert go.wait(30)
        try:
            return {"n": state["n"] + ag.interrupt("more?")}  # asked once the graph is closed
        finally:
            unwound.set()

    g: ag.Graph = ag.Graph()
    g.add_vertex("ask", ask).add_edge(ag.START, "ask").add_edge("ask", ag.END)
    app = g.compile(MemoryCheckpointer())
    handle = app.start({"n": 1}, thread_id="t")
    assert running.wait(30)
    with warnings.catch_warnings():  # the vertex still runs: not waited for
        warnings.simplefilter("ignore", ag.StuckVertexWarning)
        app.close(timeout=0.01)
    go.set()
    assert unwound.wait(30), "the vertex waits live in a closed graph"
    assert waiting() == 0
    with pytest.raises(ag.ActorGraphError, match="was closed while this run was going"):
        handle.result(timeout=30)
    app.close()  # waits for its actor, which stopped once its vertex unwound
