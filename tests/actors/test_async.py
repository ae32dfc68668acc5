"""The async adapter over the one engine, and async vertex functions."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

import pytest
from shared import SharedBarrier, SharedDict, SharedEvent, SharedList

import actorgraph as ag
from actorgraph.checkpoint import MemoryCheckpointer
from actorgraph.testing import FakeClock

Compile = Callable[..., ag.CompiledGraph]


def single(fn: Callable[..., Any], **options: Any) -> ag.Graph:
    g: ag.Graph = ag.Graph()
    g.add_vertex("v", fn, **options)
    g.add_edge(ag.START, "v")
    g.add_edge("v", ag.END)
    return g


def test_ainvoke_and_astream(compile_graph: Compile) -> None:
    g: ag.Graph = ag.Graph()
    g.add_vertex("a", lambda s: {"n": s["n"] + 1})
    g.add_vertex("b", lambda s: {"n": s["n"] * 2})
    g.add_edge(ag.START, "a")
    g.add_edge("a", "b")
    g.add_edge("b", ag.END)
    app = compile_graph(g)

    async def main() -> tuple[Any, list[Any], Any]:
        result = await app.ainvoke({"n": 1})
        items = [item async for item in app.astream({"n": 1}, mode="updates")]
        handle = await app.astart({"n": 5})
        return result, items, await asyncio.wrap_future(handle.future)

    result, items, started = asyncio.run(main())
    assert result.state == {"n": 4}
    assert items == [{"a": {"n": 2}}, {"b": {"n": 4}}]
    assert started.state == {"n": 12}


def test_async_vertices_run_with_retry(compile_graph: Compile) -> None:
    calls = SharedDict({"n": 0})

    async def fetch(state: dict[str, int]) -> dict[str, int]:
        n = calls.add("n")
        await asyncio.sleep(0.01)
        if n < 3:
            raise ConnectionError("try again")
        return {"n": state["n"] + 1}

    clock = FakeClock()
    app = compile_graph(single(fetch, retry=ag.RetryPolicy(jitter=False)), clock=clock)
    assert app.invoke({"n": 1}).state == {"n": 2}
    assert calls["n"] == 3 and clock.sleeps == [0.5, 1.0]


def test_async_vertices_interrupt_and_resume(compile_graph: Compile) -> None:
    async def ask(state: dict[str, Any]) -> dict[str, Any]:
        await asyncio.sleep(0)
        first = ag.interrupt("first?")
        second = ag.interrupt("second?")
        return {"answers": [first, second]}

    app = compile_graph(single(ask), checkpointer=MemoryCheckpointer())

    async def main() -> Any:
        paused = await app.ainvoke({}, thread_id="aq")
        assert paused.interrupts[0].value == "first?"
        again = await app.ainvoke(ag.Command(resume=1), thread_id="aq")
        assert again.interrupts[0].value == "second?"
        return await app.ainvoke(ag.Command(resume=2), thread_id="aq")

    assert asyncio.run(main()).state == {"answers": [1, 2]}


def test_async_vertices_run_in_parallel_on_their_own_loops(compile_graph: Compile) -> None:
    from actorgraph.merge import add, by_key

    together = SharedBarrier(10)  # passes only if all ten wait at once

    def wait_for_all() -> None:
        together.wait(timeout=10)

    async def meet(state: dict[str, int]) -> dict[str, int]:
        await asyncio.sleep(0)
        await asyncio.get_running_loop().run_in_executor(None, wait_for_all)
        return {"n": state["n"] + 1}

    g: ag.Graph = ag.Graph(merge=by_key({"n": add}))
    for i in range(10):
        g.add_vertex(f"s{i}", meet)
        g.add_edge(ag.START, f"s{i}")
        g.add_edge(f"s{i}", ag.END)
    assert compile_graph(g).invoke({"n": 0}).state == {"n": 10}


def test_cancelling_the_awaiting_task_cancels_the_run(compile_graph: Compile) -> None:
    entered = SharedEvent()
    release = SharedEvent()
    after = SharedList()
    g: ag.Graph = ag.Graph()
    g.add_vertex("wait", lambda s: (entered.set(), release.wait(5), s)[2])
    g.add_vertex("after", lambda s: (after.append("ran"), s)[1])
    g.add_edge(ag.START, "wait")
    g.add_edge("wait", "after")
    g.add_edge("after", ag.END)
    app = compile_graph(g)

    async def main() -> None:
        task = asyncio.create_task(app.ainvoke({}))
        await asyncio.to_thread(entered.wait, 5)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    release.set()
    time.sleep(0.2)
    assert after == []


def test_ainvoke_timeout_cancels_the_run(compile_graph: Compile) -> None:
    release = SharedEvent()
    app = compile_graph(single(lambda s: (release.wait(5), s)[1]))

    async def main() -> None:
        with pytest.raises(ag.RunTimeoutError, match="cancelled"):
            await app.ainvoke({}, timeout=0.05)

    asyncio.run(main())
    release.set()


def test_breaking_out_of_astream_cancels_the_run(compile_graph: Compile) -> None:
    ran = SharedList()
    g: ag.Graph = ag.Graph()
    g.add_vertex("tick", lambda s: (ran.append(s["n"]), time.sleep(0.01), {"n": s["n"] + 1})[2])
    g.add_edge(ag.START, "tick")
    g.add_conditional_edges("tick", lambda s: "tick")
    app = compile_graph(g)

    async def main() -> None:
        stream = app.astream({"n": 0})
        async for item in stream:
            if item["n"] == 2:
                break
        await stream.aclose()

    asyncio.run(main())
    time.sleep(0.1)
    settled = len(ran)
    time.sleep(0.1)
    assert len(ran) == settled <= 4


@pytest.mark.slow
def test_a_slow_async_vertex_times_out_and_is_retried(compile_graph: Compile) -> None:
    calls = SharedDict({"n": 0})

    async def slow_once(state: dict[str, int]) -> dict[str, int]:
        if calls.add("n") == 1:
            await asyncio.sleep(0.5)
        return {"n": state["n"] + 1}

    app = compile_graph(
        single(slow_once, timeout=0.1, retry=ag.RetryPolicy(max_attempts=2, jitter=False)), clock=FakeClock()
    )
    assert app.invoke({"n": 0}).state == {"n": 1}
    assert calls["n"] == 2
