"""Cancelling a run: Ctrl-C while waiting, a cancelled awaiting task, `cancel()`.

Whatever stops the caller stops the run: nothing after the tasks in flight
starts, and the thread can be resumed at once, in the same process.
"""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

import pytest
from children import report_of
from shared import SharedEvent

import actorgraph as ag
from actorgraph.checkpoint import MemoryCheckpointer
from actorgraph.events import SuperstepCommitted

HERE = Path(__file__).resolve().parents[1]  # tests/, where the helper scripts are


@pytest.mark.slow
@pytest.mark.parametrize("how", ["invoke", "start", "stream"])
def test_ctrl_c_while_waiting_cancels_the_run_and_leaves_it_resumable(how: str, tmp_path: Path) -> None:
    report = report_of("ctrl_c_child.py", str(tmp_path / "runs.db"), how)
    assert report["at"] == 20
    assert report["later"] == report["at"]  # the tick in flight was dropped; nothing after it started
    assert report["status"] == "done"
    assert report["state"] == {"n": 100}  # resumed at once: no "another run advanced the thread"


def test_cancel_returns_once_the_run_has_let_go_so_a_resume_can_follow_at_once(compile_graph) -> None:
    entered, release = SharedEvent(), SharedEvent()
    g: ag.Graph = ag.Graph()

    def slow(state: dict[str, Any]) -> dict[str, Any]:
        if state["n"] == 3:
            entered.set()
            release.wait(5)
        return {"n": state["n"] + 1}

    g.add_vertex("tick", slow)
    g.add_edge(ag.START, "tick")
    g.add_conditional_edges("tick", lambda s: "tick" if s["n"] < 6 else ag.END, ["tick", ag.END])
    app = compile_graph(g, checkpointer=MemoryCheckpointer())
    handle = app.start({"n": 0}, thread_id="t")
    assert entered.wait(5)
    assert handle.cancel() is True
    release.set()
    with pytest.raises(ag.RunCancelledError):
        handle.result()
    assert app.invoke(None, thread_id="t").state == {"n": 6}


@pytest.mark.threads_only(
    "on Ray, cancelling a run abandons a running vertex but does not cancel its coroutine inside the "
    "worker, by design; this checks the thread backend's cancellation of the coroutine"
)
def test_cancelling_the_awaiting_task_cancels_an_async_vertex_coroutine(compile_graph) -> None:
    entered = threading.Event()
    cancelled = threading.Event()

    async def forever(state: dict[str, Any]) -> dict[str, Any]:
        entered.set()
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return state

    g: ag.Graph = ag.Graph()
    g.add_vertex("forever", forever)
    g.add_edge(ag.START, "forever")
    g.add_edge("forever", ag.END)
    app = compile_graph(g)

    async def main() -> None:
        task = asyncio.create_task(app.ainvoke({}))
        await asyncio.to_thread(entered.wait, 5)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    assert cancelled.wait(5), "the async vertex's coroutine was never cancelled"


def test_a_listener_may_cancel_the_run_it_listens_to(compile_graph) -> None:
    holder: dict[str, ag.RunHandle[Any]] = {}
    ready = SharedEvent()
    seen: list[int] = []

    def listener(event: Any) -> None:
        if isinstance(event, SuperstepCommitted) and event.step == 2:
            seen.append(event.step)
            holder["handle"].cancel()  # on the coordinator's thread: must not wait for itself

    def tick(state: dict[str, Any]) -> dict[str, Any]:
        ready.wait(5)
        return {"n": state["n"] + 1}

    g: ag.Graph = ag.Graph()
    g.add_vertex("tick", tick)
    g.add_edge(ag.START, "tick")
    g.add_conditional_edges("tick", lambda s: "tick" if s["n"] < 50 else ag.END, ["tick", ag.END])
    app = compile_graph(g, listeners=[listener])
    holder["handle"] = app.start({"n": 0})
    ready.set()
    with pytest.raises(ag.RunCancelledError):
        holder["handle"].result(10)
    assert seen == [2]
