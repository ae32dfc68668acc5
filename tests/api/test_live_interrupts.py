"""Live interrupts: a vertex that asks waits in its actor and goes on from that line (issue 28, item 1).

Side effects are counted: on the live path the code before a question runs
once; on the fallback path (no live wait, the wait over, another process, an
update before the answer) twice.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import threading
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from children import HERE
from live_child import asking

import actorgraph as ag
from actorgraph._actors import live
from actorgraph.checkpoint import MemoryCheckpointer, SqliteCheckpointer
from actorgraph.func import entrypoint, task

pytestmark = pytest.mark.threads_only(
    "the side effects are counted in this process's memory, and Ray workers run no live path"
)


LIVE = timedelta(minutes=10)
_base = [0]


@pytest.fixture(autouse=True)
def _seats_before() -> None:
    _base[0] = live.waiting()  # other tests' graphs are closed, but count from here all the same


def waiting() -> int:
    """How many vertices of this process began to wait for an answer since the test began."""
    return live.waiting() - _base[0]


def line_graph(*vertices: tuple[str, Any], **options: Any) -> ag.Graph:
    g: ag.Graph = ag.Graph(**options)
    names = [name for name, _ in vertices]
    for name, fn in vertices:
        g.add_vertex(name, fn)
    for src, dst in zip((ag.START, *names), (*names, ag.END), strict=True):
        g.add_edge(src, dst)
    return g


def asks(effects: list[str], label: str = "ask") -> Any:
    def vertex(state: dict[str, Any]) -> dict[str, Any]:
        effects.append(f"{label}:before")
        answer = ag.interrupt(f"{label}?")
        effects.append(f"{label}:after={answer}")
        return {**state, label: answer}

    return vertex


@pytest.mark.slow
def test_an_answer_in_this_process_goes_on_from_the_line_that_asked(store: Any) -> None:
    effects: list[str] = []
    with line_graph(("ask", asks(effects))).compile(store) as app:
        paused = app.invoke({"n": 1}, thread_id="t")
        assert paused.status == "interrupted"  # returned at once while the vertex waits
        assert waiting() == 1
        time.sleep(live.POLL * 1.5)  # the watcher looks for answers from elsewhere meanwhile: none
        assert waiting() == 1
        done = app.invoke(ag.Command(resume="yes"), thread_id="t")
        assert waiting() == 0
    assert done.state == {"n": 1, "ask": "yes"}
    assert effects == ["ask:before", "ask:after=yes"]  # live path: the first side effect once


def test_without_the_live_path_the_answer_runs_the_vertex_again() -> None:
    effects: list[str] = []
    with line_graph(("ask", asks(effects))).compile(MemoryCheckpointer(), live_interrupts=None) as app:
        app.invoke({"n": 1}, thread_id="t")
        assert waiting() == 0
        done = app.invoke(ag.Command(resume="yes"), thread_id="t")
    assert done.state == {"n": 1, "ask": "yes"}
    assert effects == ["ask:before", "ask:before", "ask:after=yes"]  # fallback path: twice


def test_several_questions_in_one_vertex_each_answered_live() -> None:
    effects: list[str] = []

    def interview(state: dict[str, Any]) -> dict[str, Any]:
        effects.append("start")
        name = ag.interrupt("name?")
        effects.append(f"name={name}")
        age = ag.interrupt(f"age of {name}?")
        effects.append(f"age={age}")
        return {"name": name, "age": age}

    recorded = []
    for wait in (LIVE, None):
        effects.clear()
        with line_graph(("interview", interview)).compile(MemoryCheckpointer(), live_interrupts=wait) as app:
            first = app.invoke({}, thread_id="f")
            second = app.invoke(ag.Command(resume="Ada"), thread_id="f")
            assert [i.value for i in second.interrupts] == ["age of Ada?"]
            assert second.interrupts[0].id != first.interrupts[0].id
            done = app.invoke(ag.Command(resume=36), thread_id="f")
            recorded.append([(s.status, s.step, s.next, len(s.interrupts)) for s in app.get_history("f")])
        assert done.state == {"name": "Ada", "age": 36}
        if wait is LIVE:
            assert effects == ["start", "name=Ada", "age=36"]
    assert effects == ["start", "start", "name=Ada", "start", "name=Ada", "age=36"]
    assert recorded[0] == recorded[1]  # both paths record the same checkpoints


def test_parallel_vertices_each_wait_and_are_answered_together_or_one_by_one() -> None:
    effects: list[str] = []
    lock = threading.Lock()

    def approve(state: dict[str, Any]) -> dict[str, Any]:
        with lock:
            effects.append(f"{state['item']}:before")
        verdict = ag.interrupt(f"approve {state['item']}?")
        with lock:
            effects.append(f"{state['item']}:after")
        return {"verdicts": [f"{state['item']}={verdict}"]}

    from actorgraph.merge import append, by_key

    g: ag.Graph = ag.Graph(merge=by_key({"verdicts": append}))
    g.add_vertex("approve", approve, returns="update")
    g.add_conditional_edges(
        ag.START, lambda s: [ag.Send("approve", {"item": i, "verdicts": []}) for i in s["items"]], ["approve"]
    )
    g.add_edge("approve", ag.END)
    with g.compile(MemoryCheckpointer()) as app:
        first = app.invoke({"items": ["a", "b", "c"], "verdicts": []}, thread_id="p")
        assert len(first.interrupts) == 3 and waiting() == 3
        by_value = {i.value: i.id for i in first.interrupts}
        second = app.invoke(ag.Command(resume={by_value["approve a?"]: "yes"}), thread_id="p")
        assert sorted(i.value for i in second.interrupts) == ["approve b?", "approve c?"]
        done = app.invoke(ag.Command(resume={i.id: "no" for i in second.interrupts}), thread_id="p")
    assert sorted(done.state["verdicts"]) == ["a=yes", "b=no", "c=no"]
    assert sorted(effects) == sorted(f"{x}:{when}" for x in "abc" for when in ("before", "after"))


def test_a_question_inside_a_subgraph_is_answered_live() -> None:
    effects: list[str] = []
    inner = line_graph(("ask", asks(effects)), name="inner")
    outer: ag.Graph = ag.Graph(name="outer")
    outer.add_vertex("child", inner)
    outer.add_edge(ag.START, "child")
    outer.add_edge("child", ag.END)
    with outer.compile(MemoryCheckpointer()) as app:
        paused = app.invoke({"n": 1}, thread_id="s")
        assert [i.vertex for i in paused.interrupts] == ["child/ask"]
        done = app.invoke(ag.Command(resume="ok"), thread_id="s")
    assert done.state == {"n": 1, "ask": "ok"}
    assert effects == ["ask:before", "ask:after=ok"]


def test_questions_in_an_entrypoint_and_in_a_task_are_answered_live() -> None:
    effects: list[str] = []

    @task
    def check(x: int) -> int:
        effects.append("task:before")
        extra = ag.interrupt({"check": x})
        effects.append("task:after")
        return x + extra

    @entrypoint(checkpointer=MemoryCheckpointer())
    def flow(n: int) -> int:
        effects.append("entry:before")
        factor = ag.interrupt("factor?")
        effects.append("entry:after")
        return check(n * factor).result()

    with flow:
        assert flow.invoke(2, thread_id="e").status == "interrupted"
        second = flow.invoke(ag.Command(resume=10), thread_id="e")
        assert [i.value for i in second.interrupts] == [{"check": 20}]
        assert flow.invoke(ag.Command(resume=1), thread_id="e").state == 21
    # the entrypoint went on from its question live; its task's question paused it, so it ran again
    # from its top (its answered question returning at once), while the task went on live
    assert effects == [
        "entry:before",
        "entry:after",
        "task:before",
        "entry:before",
        "entry:after",
        "task:after",
    ]


def test_an_entrypoint_without_the_live_path_runs_its_function_and_its_tasks_again() -> None:
    effects: list[str] = []

    @task
    def check(x: int) -> int:
        effects.append("task:before")
        extra = ag.interrupt({"check": x})
        effects.append("task:after")
        return x + extra

    @entrypoint(checkpointer=MemoryCheckpointer(), live_interrupts=None)
    def flow(n: int) -> int:
        effects.append("entry:before")
        factor = ag.interrupt("factor?")
        effects.append("entry:after")
        return check(n * factor).result()

    with flow:
        assert flow.invoke(2, thread_id="off").status == "interrupted"
        assert waiting() == 0  # nothing waits live: the function's question, nor (later) its task's
        assert flow.invoke(ag.Command(resume=10), thread_id="off").status == "interrupted"
        assert waiting() == 0
        assert flow.invoke(ag.Command(resume=1), thread_id="off").state == 21
    assert effects == [
        "entry:before",
        "entry:before",  # the answer ran the function again, from its top
        "entry:after",
        "task:before",
        "entry:before",
        "entry:after",
        "task:before",  # and the task again
        "task:after",
    ]


@pytest.mark.parametrize("wait", [0, "soon", True])
def test_an_entrypoint_refuses_a_live_interrupts_that_is_no_duration(wait: Any) -> None:
    with pytest.raises(ag.ConfigError, match="live_interrupts must be a positive timedelta"):
        entrypoint(live_interrupts=wait)


def test_a_wait_that_ends_leaves_the_fallback_path() -> None:
    effects: list[str] = []
    app = line_graph(("ask", asks(effects))).compile(
        MemoryCheckpointer(), live_interrupts=timedelta(seconds=0.2)
    )
    with app:
        app.invoke({"n": 1}, thread_id="w")
        deadline = time.monotonic() + 10
        while waiting() and time.monotonic() < deadline:
            time.sleep(0.02)
        assert waiting() == 0
        done = app.invoke(ag.Command(resume="late"), thread_id="w")
    assert done.state == {"n": 1, "ask": "late"}
    assert effects == ["ask:before", "ask:before", "ask:after=late"]


def test_closing_the_graph_frees_waiting_vertices_at_once() -> None:
    effects: list[str] = []
    app = line_graph(("ask", asks(effects))).compile(MemoryCheckpointer())
    for thread in ("x", "y", "z"):
        app.invoke({"n": 1}, thread_id=thread)
    assert waiting() == 3
    began = time.monotonic()
    app.close(timeout=30)
    assert time.monotonic() - began < 5  # not the ten minutes of the wait
    assert waiting() == 0
    assert effects == ["ask:before"] * 3  # none went on


def test_an_update_before_the_answer_runs_the_vertex_again_on_the_new_state() -> None:
    effects: list[str] = []
    with line_graph(("ask", asks(effects))).compile(MemoryCheckpointer()) as app:
        app.invoke({"n": 1}, thread_id="u")
        done = app.invoke(ag.Command(resume="ok", update={"n": 2}), thread_id="u")
        assert waiting() == 0  # the vertex that waited was released, not left for ten minutes
    assert done.state == {"n": 2, "ask": "ok"}  # the waiting vertex held n=1: it did not go on
    assert effects == ["ask:before", "ask:before", "ask:after=ok"]


def test_a_waiting_vertex_does_not_hold_its_vertexs_concurrency() -> None:
    effects: list[str] = []
    g: ag.Graph = ag.Graph()
    g.add_vertex("ask", asks(effects), concurrency=1)
    g.add_edge(ag.START, "ask")
    g.add_edge("ask", ag.END)
    with g.compile(MemoryCheckpointer()) as app:
        for thread in ("a", "b"):  # the second run's task gets an actor although the first waits
            assert app.invoke({"n": 1}, thread_id=thread, timeout=30).status == "interrupted"
        assert waiting() == 2
        for thread in ("a", "b"):
            assert app.invoke(ag.Command(resume=thread), thread_id=thread).state["ask"] == thread
    assert effects.count("ask:before") == 2


def test_what_the_vertex_emits_after_its_answer_goes_to_the_resumed_runs_stream() -> None:
    def ask(state: dict[str, Any], ctx: ag.Context[Any]) -> dict[str, Any]:
        ctx.emit("asking")
        answer = ag.interrupt("go?")
        ctx.emit(f"got {answer} on attempt {ctx.attempt}")
        return {**state, "answer": answer}

    with line_graph(("ask", ask)).compile(MemoryCheckpointer()) as app:
        first = list(app.stream({"n": 1}, thread_id="st", mode="custom"))
        second = list(app.stream(ag.Command(resume="yes"), thread_id="st", mode="custom"))
    assert first == ["asking"]
    assert second == ["got yes on attempt 1"]


def test_an_async_vertex_takes_the_fallback_path() -> None:
    effects: list[str] = []

    async def ask(state: dict[str, Any]) -> dict[str, Any]:
        effects.append("before")
        answer = ag.interrupt("go?")
        return {**state, "answer": answer}

    with line_graph(("ask", ask)).compile(MemoryCheckpointer()) as app:
        app.invoke({"n": 1}, thread_id="as")
        assert waiting() == 0
        assert app.invoke(ag.Command(resume="y"), thread_id="as").state == {"n": 1, "answer": "y"}
    assert effects == ["before", "before"]


@pytest.mark.parametrize("wait", [0, -1, "soon", float("nan"), True, timedelta(0)])
def test_live_interrupts_must_be_a_positive_duration(wait: Any) -> None:
    with pytest.raises(ag.ConfigError, match="live_interrupts must be a positive timedelta"):
        line_graph(("ask", asks([]))).compile(MemoryCheckpointer(), live_interrupts=wait)


# -- other processes ---------------------------------------------------------------


def _pausing(db: Path, ledger: Path, thread: str) -> subprocess.Popen[str]:
    """A child process that runs `thread` to its question and keeps its vertex waiting."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")])}
    child = subprocess.Popen(
        [sys.executable, str(HERE / "live_child.py"), str(db), thread, str(ledger)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert child.stdout is not None
    line = child.stdout.readline()
    assert "paused" in json.loads(line), line
    return child


def _ask(child: subprocess.Popen[str], line: str) -> Any:
    assert child.stdin is not None and child.stdout is not None
    child.stdin.write(line + "\n")
    child.stdin.flush()
    return json.loads(child.stdout.readline())


@pytest.mark.slow
def test_after_the_process_died_the_answer_runs_the_vertex_again(tmp_path: Path) -> None:
    db, ledger = tmp_path / "runs.db", tmp_path / "ledger"
    child = _pausing(db, ledger, "k")
    child.send_signal(signal.SIGKILL)
    child.wait(30)
    with SqliteCheckpointer(db) as store, asking(str(ledger)).compile(store) as app:
        done = app.invoke(ag.Command(resume="ship"), thread_id="k")
    assert done.state == {"n": 1, "answer": "ship"}
    assert ledger.read_text().split() == ["before", "before", "after:ship"]  # the fallback path: twice


@pytest.mark.slow
def test_an_answer_claimed_by_another_process_is_never_continued_by_the_waiting_one(tmp_path: Path) -> None:
    db, ledger = tmp_path / "runs.db", tmp_path / "ledger"
    child = _pausing(db, ledger, "o")
    try:
        with SqliteCheckpointer(db) as store, asking(str(ledger)).compile(store) as app:
            done = app.invoke(ag.Command(resume="here"), thread_id="o")
        assert done.state == {"n": 1, "answer": "here"}
        deadline = time.monotonic() + 30
        while _ask(child, "count") != {"waiting": 0}:  # its watcher saw the answer stored elsewhere
            assert time.monotonic() < deadline, "the waiting vertex was not released"
            time.sleep(0.1)
        assert _ask(child, "close") == {"closed": 0, "left": 0}
    finally:
        if child.poll() is None:
            child.kill()
    # this process ran the vertex again; the waiting one never went on with the answer
    assert ledger.read_text().split() == ["before", "before", "after:here"]


def test_answers_through_start_and_ainvoke_go_on_live() -> None:
    effects: list[str] = []
    with line_graph(("ask", asks(effects))).compile(MemoryCheckpointer()) as app:
        app.invoke({"n": 1}, thread_id="h")
        handle = app.start(ag.Command(resume="by handle"), thread_id="h")
        assert handle.result(30).state == {"n": 1, "ask": "by handle"}
        app.invoke({"n": 2}, thread_id="a")
        done = asyncio.run(app.ainvoke(ag.Command(resume="by await"), thread_id="a"))
    assert done.state == {"n": 2, "ask": "by await"}
    assert effects == ["ask:before", "ask:after=by handle", "ask:before", "ask:after=by await"]
