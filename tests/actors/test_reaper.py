"""Finalizers hand their work to the reaper thread: a collection anywhere never deadlocks (issue 38, item 21).

A graph, a `@task` or a stream left to the garbage collector is closed (or
cancelled) by a finalizer; the collection that runs it may happen on any thread,
inside any lock. Each test runs `collect_child.py` in a child process with a
timeout, so a finalizer that takes a lock fails the test instead of hanging it.
"""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
import threading
import time
from typing import Any

import pykka
import pytest
from children import HERE

import actorgraph as ag
from actorgraph._actors import reaper

pytestmark = pytest.mark.threads_only(
    "the child process runs its graphs on threads; the reaper is the same on Ray"
)


def _child(mode: str, timeout: float) -> list[dict[str, Any]]:
    """Run `collect_child.py mode`; fail naming the lock it hung in when it does not end in time."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")])}
    with subprocess.Popen(
        [sys.executable, str(HERE / "collect_child.py"), mode],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as child:
        try:
            out, err = child.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            child.kill()
            out, err = child.communicate()
            lines = out.strip().splitlines()
            pytest.fail(f"the process hung (deadlocked in a collection?) after {lines[-1:]}: {err[-2000:]}")
    assert child.returncode == 0, err
    return [json.loads(line) for line in out.strip().splitlines()]


@pytest.mark.slow
def test_a_collection_inside_any_lock_of_the_package_returns_and_the_leftovers_close() -> None:
    *_, report = _child("locks", timeout=600)
    rounds = report["rounds"]
    # the locks the issue met, and the runtime's own, were held while collecting
    assert "actorgraph._actors.live._LOCK" in rounds
    assert "actorgraph.func._task._graphs_lock" in rounds
    assert any(r.startswith("leftover:pools.v._lock") for r in rounds), rounds
    assert any(r.startswith("open:coordinators._lock") for r in rounds), rounds
    assert report["unclosed"] == []


@pytest.mark.slow
def test_a_collection_in_every_locked_section_of_live_answers_with_leftover_tasks_never_hangs() -> None:
    *_, report = _child("sections", timeout=600)
    assert report["answered"] == 2
    assert report["live"] >= 2  # the entrypoints' questions waited live, so `adopt` took them over


def test_a_graph_dropped_without_close_is_closed_once_collected() -> None:
    g: ag.Graph = ag.Graph()
    g.add_vertex("v", lambda s: s).add_edge(ag.START, "v").add_edge("v", ag.END)
    app = g.compile()
    app.invoke({"n": 1})
    runtime = app._runtime
    app.cycle = app  # type: ignore[attr-defined] - only a collection frees it
    del app
    gc.collect()
    deadline = time.monotonic() + 10
    while (not runtime.closed or pykka.ActorRegistry.get_all()) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert runtime.closed
    assert pykka.ActorRegistry.get_all() == []  # its actors stopped, no test fixture did it


def test_a_closed_graph_leaves_nothing_to_the_reaper() -> None:
    before = reaper.pending()
    g: ag.Graph = ag.Graph()
    g.add_vertex("v", lambda s: s).add_edge(ag.START, "v").add_edge("v", ag.END)
    with g.compile() as app:
        assert reaper.pending() == before + 1
        app.invoke({})
    assert reaper.pending() == before


def test_settling_from_the_reapers_own_work_does_not_wait_for_itself(compile_graph) -> None:
    g: ag.Graph = ag.Graph()
    g.add_vertex("v", lambda s: s).add_edge(ag.START, "v").add_edge("v", ag.END)
    compile_graph(g)  # an open graph: the reaper runs
    settled: list[bool] = []
    done = threading.Event()
    reaper.later(lambda: (settled.append(reaper.settle(timeout=5)), done.set()))
    assert done.wait(30)
    assert settled == [True]  # not False: waiting for itself would have timed out


def test_a_work_that_fails_is_logged_and_the_reaper_goes_on(caplog: pytest.LogCaptureFixture) -> None:
    class Owner:
        pass

    done = threading.Event()

    def fails() -> None:
        raise RuntimeError("boom")

    first, second = Owner(), Owner()
    reaper.when_collected(first, fails)
    reaper.when_collected(second, done.set)
    with caplog.at_level("WARNING", logger="actorgraph"):
        del first, second
        assert done.wait(10)
    assert any(r.exc_info and "boom" in str(r.exc_info[1]) for r in caplog.records)
