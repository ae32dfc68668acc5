"""Pooled actors: vertex actors without threads of their own, run by the process's scheduler threads."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import pykka
import pytest

import actorgraph as ag
from actorgraph._actors.dispatcher import PooledActor, shared_dispatcher

Compile = Callable[..., ag.CompiledGraph]

pytestmark = pytest.mark.threads_only("it counts this process's threads")


def fan_out(width: int, fn: Callable[[Any], Any]) -> ag.Graph:
    g: ag.Graph = ag.Graph()
    names = [f"b{i}" for i in range(width)]
    for name in names:
        g.add_vertex(name, fn)
        g.add_edge(ag.START, name)
    g.add_vertex("join", lambda s: s)
    g.add_edge(names, "join")
    g.add_edge("join", ag.END)
    return g


@pytest.mark.slow
def test_a_wide_fan_out_runs_on_a_few_scheduler_threads(compile_graph: Compile) -> None:
    seen: list[int] = []

    def branch(state: dict[str, int]) -> dict[str, int]:
        seen.append(threading.active_count())
        return state

    before = threading.active_count()
    app = compile_graph(fan_out(300, branch), actors="pooled")
    for _ in range(3):
        assert app.invoke({"x": 1}).state == {"x": 1}
    cores = shared_dispatcher().cores
    assert max(seen) - before <= cores + 4, f"{max(seen) - before} threads for 300 branches"

    threaded = compile_graph(fan_out(300, branch), actors="threads")
    seen.clear()
    threaded.invoke({"x": 1})
    assert max(seen) - before >= 300, "the thread design gives each vertex actor a thread"


def test_blocking_vertices_still_run_at_once(compile_graph: Compile) -> None:
    meet = threading.Barrier(40, timeout=20)  # only passes when 40 vertices block at the same time

    def branch(state: dict[str, int]) -> dict[str, int]:
        meet.wait()
        return state

    app = compile_graph(fan_out(40, branch), actors="pooled")
    assert app.invoke({"x": 1}).status == "done"


def test_closing_the_last_pooled_graph_ends_the_scheduler_threads(compile_graph: Compile) -> None:
    first = fan_out(20, lambda s: s).compile(actors="pooled")
    second = fan_out(20, lambda s: s).compile(actors="pooled")
    first.invoke({"x": 1})
    second.invoke({"x": 1})
    first.close()
    assert second.invoke({"x": 2}).state == {"x": 2}  # the other graph's claim keeps the schedulers
    second.close()
    deadline = time.monotonic() + 5
    while _schedulers() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not _schedulers()


def _schedulers() -> list[str]:
    return [t.name for t in threading.enumerate() if t.name.startswith("actorgraph-sched-")]


def test_actors_is_checked(compile_graph: Compile) -> None:
    g = fan_out(2, lambda s: s)
    with pytest.raises(ag.ConfigError, match="actors must be one of 'pooled', 'threads', got 'fibers'"):
        g.compile(actors="fibers")


class Echo(PooledActor):
    def on_receive(self, message: Any) -> Any:
        if message == "fail":
            raise ValueError("asked to fail")
        return message


def test_a_pooled_actor_keeps_pykka_semantics() -> None:
    dispatcher = shared_dispatcher()
    dispatcher.acquire()
    try:
        refs = [Echo.start(dispatcher) for _ in range(50)]
        futures = [ref.ask(n, block=False) for n, ref in enumerate(refs)]
        assert [f.get(timeout=10) for f in futures] == list(range(50))
        with pytest.raises(ValueError, match="asked to fail"):
            refs[0].ask("fail", timeout=10)
        assert refs[0].ask("still here", timeout=10) == "still here"
        for ref in refs:
            ref.stop(block=True, timeout=10)
        with pytest.raises(pykka.ActorDeadError):
            refs[1].tell("too late")
    finally:
        for scheduler in dispatcher.release():
            if scheduler.thread is not None:
                scheduler.thread.join(5)


@pytest.mark.slow
def test_a_stuck_pooled_vertex_is_abandoned_and_retried(compile_graph: Compile) -> None:
    release = threading.Event()
    calls: list[int] = []

    def stuck_once(state: dict[str, int]) -> dict[str, int]:
        calls.append(1)
        if len(calls) == 1:
            release.wait(20)
        return {"n": state["n"] + 1}

    g: ag.Graph = ag.Graph()
    retry = ag.RetryPolicy(max_attempts=2, initial_interval=0, jitter=False)
    g.add_vertex("v", stuck_once, timeout=0.2, retry=retry)
    g.add_edge(ag.START, "v").add_edge("v", ag.END)
    app = compile_graph(g, actors="pooled")
    try:
        assert app.invoke({"n": 1}).state == {"n": 2}
        assert len(calls) == 2
    finally:
        release.set()
