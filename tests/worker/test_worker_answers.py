"""While a worker runs, an answer from the web inbox or `actorgraph answer` is claimed where it is given
and its run is finished by the worker: the worker's name is on the queue row, the answerer's on the claim."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest
import worker_graphs as wg
from cli_shell import Shell
from web_http import field_of, served

import actorgraph as ag
from actorgraph._api.queued import workers_running
from actorgraph.checkpoint import SqliteCheckpointer
from actorgraph.checkpoint._queue import run_queue
from actorgraph.web import app

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]

TESTS = Path(__file__).resolve().parents[1]
WAIT = 30.0


@pytest.fixture
def worker(tmp_path: Path) -> Iterator[str]:
    """A worker process on `tmp_path/runs.db` running `worker_graphs:asking`, registered; its name."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ACTORGRAPH_")}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(TESTS), os.environ.get("PYTHONPATH")) if p)
    db = str(tmp_path / "runs.db")
    SqliteCheckpointer(db).close()  # the schema, before two processes race to make it
    argv = [sys.executable, "-m", "actorgraph.cli", "worker", "worker_graphs:asking", "--db", db]
    process = subprocess.Popen([*argv, "--name", "the-worker", "--lease", "5"], env=env, cwd=tmp_path)
    try:
        with SqliteCheckpointer(db) as store:
            deadline = time.monotonic() + WAIT
            while not workers_running(store):
                assert time.monotonic() < deadline, "the worker did not register"
                assert process.poll() is None, "the worker stopped"
                time.sleep(0.05)
        yield db
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(WAIT)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(5)


def _paused(compiled: ag.CompiledGraph[Any], thread_id: str) -> str:
    """Submit a run of `asking`, let the worker run it to its question; the question's id."""
    assert compiled.submit({"topic": "x"}, thread_id=thread_id).wait(WAIT) == "done"
    (question,) = compiled.get_state(thread_id).interrupts
    return question.id


def _finished(compiled: ag.CompiledGraph[Any], thread_id: str) -> ag.Snapshot[Any]:
    deadline = time.monotonic() + WAIT
    while (snapshot := compiled.get_state(thread_id)).status != "done":
        assert time.monotonic() < deadline, f"{thread_id} is still {snapshot.status}"
        time.sleep(0.05)
    return snapshot


def test_an_answer_in_the_web_inbox_is_finished_by_the_worker(worker: str) -> None:
    with SqliteCheckpointer(worker) as store, wg.asking().compile(store) as compiled:
        asked = _paused(compiled, "t1")
        with served(app(compiled)) as http:
            page = http.get("/threads/t1").text
            form = {"csrf": field_of(page, "csrf"), "interrupt_id": asked, "json": '"ship"', "name": "Ada"}
            assert http.post("/threads/t1/answer", urlencode(form)).status == 303
        snapshot = _finished(compiled, "t1")
        assert snapshot.state == {"topic": "x", "noted": True, "approved": "ship"}
        row = run_queue(store).get("t1")
        assert row is not None
        assert (row.state, row.worker) == ("done", "the-worker")
        claim = store.get_answers("t1", [asked])[asked]
        assert claim.answered_by == "Ada (web inbox, 127.0.0.1)"


def test_actorgraph_answer_queues_the_resume_and_waits_for_it(worker: str, tmp_path: Path) -> None:
    shell = Shell(tmp_path)
    with SqliteCheckpointer(worker) as store, wg.asking().compile(store) as compiled:
        _paused(compiled, "t1")
        _paused(compiled, "t2")
        graph = ["-g", "worker_graphs:asking", "--db", worker]
        assert store.get_metadata("t1")["graph"] == "worker_graphs:asking"  # the worker recorded its TARGET
        queued = shell("answer", "t1", '"yes"', "--db", worker)  # so no -g is needed
        assert "its resume is queued for the workers" in queued.stdout
        assert _finished(compiled, "t1").state["approved"] == "yes"
        waited = shell.json("answer", "t2", '"no"', "--wait", *graph)
        assert (waited["status"], waited["state"]["approved"]) == ("done", "no")
        late = shell("answer", "t2", '"again"', *graph, code=4)
        assert "already answered" in late.stderr
