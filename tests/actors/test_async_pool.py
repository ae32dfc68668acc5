"""Async vertices wait on an event loop: an awaiting attempt holds no thread, and cancelling it cancels it."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest

import actorgraph as ag
from actorgraph.checkpoint import MemoryCheckpointer

Compile = Callable[..., ag.CompiledGraph]

pytestmark = pytest.mark.threads_only(
    "it counts this process's threads and shares objects with the vertices in memory"
)


def single(fn: Callable[..., Any], **options: Any) -> ag.Graph:
    g: ag.Graph = ag.Graph()
    g.add_vertex("v", fn, **options)
    g.add_edge(ag.START, "v")
    g.add_edge("v", ag.END)
    return g


class Gate:
    """Holds every coroutine that awaits it until it opens; counts how many wait at once."""

    def __init__(self) -> None:
        self.opened = threading.Event()
        self.waiting = 0
        self.most = 0
        self.cancelled = 0
        self._lock = threading.Lock()

    async def wait(self) -> None:
        with self._lock:
            self.waiting += 1
            self.most = max(self.most, self.waiting)
        try:
            while not self.opened.is_set():  # noqa: ASYNC110 - opened from the test's thread, not a loop
                await asyncio.sleep(0.005)
        except asyncio.CancelledError:
            with self._lock:
                self.cancelled += 1
            raise
        finally:
            with self._lock:
                self.waiting -= 1

    def until_waiting(self, count: int, timeout: float = 20.0) -> None:
        deadline = time.monotonic() + timeout
        while self.waiting < count:
            assert time.monotonic() < deadline, f"only {self.waiting} of {count} coroutines are waiting"
            time.sleep(0.01)


def test_three_hundred_awaiting_runs_hold_no_thread_each(compile_graph: Compile) -> None:
    gate = Gate()

    async def ask_model(state: dict[str, int]) -> dict[str, int]:
        await gate.wait()
        return {"n": state["n"] * 2}

    app = compile_graph(single(ask_model))
    before = threading.active_count()
    handles = [app.start({"n": n}) for n in range(300)]
    gate.until_waiting(300)  # every run is inside its vertex, awaiting
    during = threading.active_count()
    gate.opened.set()
    results = [handle.result(timeout=30) for handle in handles]
    assert [r.state["n"] for r in results] == [2 * n for n in range(300)]
    assert during - before <= 8, f"{during - before} threads for 300 awaiting runs"


def test_concurrency_bounds_an_async_vertex_only_when_set(compile_graph: Compile) -> None:
    for bound, expected in ((3, 3), (None, 40)):
        gate = Gate()

        async def ask(state: dict[str, int], gate: Gate = gate) -> dict[str, int]:
            await gate.wait()
            return state

        options = {} if bound is None else {"concurrency": bound}
        app = compile_graph(single(ask, **options))
        handles = [app.start({"n": n}) for n in range(40)]
        gate.until_waiting(expected)
        time.sleep(0.1)  # give a bound that does not hold the chance to show it
        assert gate.most == expected
        gate.opened.set()
        assert all(h.result(timeout=30).status == "done" for h in handles)


def test_a_timeout_cancels_the_coroutine_and_the_retry_runs_it_again(compile_graph: Compile) -> None:
    gate = Gate()
    calls: list[int] = []

    async def slow_then_fast(state: dict[str, int]) -> dict[str, int]:
        calls.append(len(calls) + 1)
        if len(calls) == 1:
            await gate.wait()  # never opened: only the timeout ends it
        return {"n": state["n"] + 1}

    retry = ag.RetryPolicy(max_attempts=2, initial_interval=0, jitter=False)
    app = compile_graph(single(slow_then_fast, timeout=0.2, retry=retry))
    result = app.invoke({"n": 1})
    assert result.state == {"n": 2}
    assert calls == [1, 2]
    assert gate.cancelled == 1, "the timed-out coroutine was not cancelled"


def test_cancelling_a_run_cancels_its_coroutine_and_the_thread_resumes_it(compile_graph: Compile) -> None:
    gate = Gate()

    async def wait_for_gate(state: dict[str, int]) -> dict[str, int]:
        await gate.wait()
        return {"n": state["n"] + 1}

    app = compile_graph(single(wait_for_gate), checkpointer=MemoryCheckpointer())
    handle = app.start({"n": 1}, thread_id="t")
    gate.until_waiting(1)
    handle.cancel()
    with pytest.raises(ag.RunCancelledError):
        handle.result(timeout=10)
    deadline = time.monotonic() + 10  # the run ends at once; its coroutine is cancelled soon after
    while gate.cancelled < 1 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert gate.cancelled == 1
    gate.opened.set()
    assert app.invoke(None, thread_id="t").state == {"n": 2}


def test_close_cancels_awaiting_coroutines_and_ends_the_loop(compile_graph: Compile) -> None:
    gate = Gate()

    async def wait_for_gate(state: dict[str, int]) -> dict[str, int]:
        await gate.wait()
        return state

    app = single(wait_for_gate).compile()
    handles = [app.start({"n": n}) for n in range(5)]
    gate.until_waiting(5)
    app.close()
    assert gate.cancelled == 5
    for handle in handles:
        with pytest.raises(ag.ActorGraphError):
            handle.result(timeout=10)
    assert not [t for t in threading.enumerate() if t.name.startswith("actorgraph-loop-")]


def test_an_async_vertex_that_raises_system_exit_fails_its_task_and_the_loop_goes_on(
    compile_graph: Compile,
) -> None:
    calls: list[int] = []

    async def dies_once(state: dict[str, int]) -> dict[str, int]:
        calls.append(1)
        if len(calls) == 1:
            raise SystemExit(3)
        return {"n": state["n"] + 1}

    app = compile_graph(single(dies_once, retry=ag.RetryPolicy(initial_interval=0, jitter=False)))
    assert app.invoke({"n": 1}).state == {"n": 2}
    assert len(calls) == 2


def test_interrupts_from_many_awaiting_runs_reach_their_own_threads(compile_graph: Compile) -> None:
    async def ask(state: dict[str, Any]) -> dict[str, Any]:
        await asyncio.sleep(0.01)
        return {**state, "answer": ag.interrupt(f"ok {state['n']}?")}

    app = compile_graph(single(ask), checkpointer=MemoryCheckpointer())
    handles = [app.start({"n": n}, thread_id=f"t{n}") for n in range(50)]
    paused = [h.result(timeout=30) for h in handles]
    assert [p.interrupts[0].value for p in paused] == [f"ok {n}?" for n in range(50)]
    for n in range(50):
        done = app.invoke(ag.Command(resume=f"yes {n}"), thread_id=f"t{n}")
        assert done.state == {"n": n, "answer": f"yes {n}"}
