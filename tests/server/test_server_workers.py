"""`actorgraph worker --config/-g` takes the API server's runs: a run queued behind another on its thread is
taken by a worker process when the server is full, and its result is the one the server would give.

Real `actorgraph server` and `actorgraph worker` processes on one SQLite file, `langgraph-sdk` over HTTP.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from langgraph_sdk import get_sync_client
from server_processes import processes

from actorgraph.checkpoint import SqliteCheckpointer
from actorgraph.checkpoint._queue import run_queue

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]

WAIT = 60.0


def test_an_enqueued_run_is_taken_by_a_worker_process(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    with processes(tmp_path, ["--db", str(db)]) as running:
        client = get_sync_client(url=running.server(concurrency=1), timeout=WAIT)
        hog_thread = client.threads.create()["thread_id"]
        hog = client.runs.create(hog_thread, "steps", input={"sleep": 60, "log": []})  # the server's one run
        deadline = time.monotonic() + WAIT
        while client.runs.get(hog_thread, hog["run_id"])["status"] != "running":
            assert time.monotonic() < deadline, running.logs()
            time.sleep(0.05)
        running.worker(name="the-worker")
        thread = client.threads.create()["thread_id"]
        stream = client.runs.stream(thread, "steps", input={"sleep": 1, "log": []})  # the server runs it
        assert next(stream).event == "metadata"  # the request is sent as the stream is read
        queued = client.runs.create(thread, "steps", input={"sleep": 0, "log": ["next"]})
        assert client.runs.get(thread, queued["run_id"])["status"] == "pending"
        assert [p.data for p in stream if p.event == "values"][-1]["log"] == ["first", "second"]
        assert client.runs.join(thread, queued["run_id"]) == {"sleep": 0, "log": ["next", "first", "second"]}
        assert client.runs.get(thread, queued["run_id"])["status"] == "success"
        assert client.threads.get(thread)["status"] == "idle"
        with SqliteCheckpointer(db) as store:
            assert run_queue(store).run(queued["run_id"]).worker == "the-worker"
        client.runs.cancel(hog_thread, hog["run_id"])
    logs = running.logs().splitlines()  # each request and each run's end, through actorgraph's logging
    assert any(f"POST /threads/{thread}/runs 200" in line and "duration=" in line for line in logs)
    ended = [line for line in logs if "run ended" in line and f"thread_id={thread}" in line]
    assert len(ended) == 2, ended
    assert all("status=success" in line and "duration=" in line and "run_id=" in line for line in ended)
    assert any(f"run_id={hog['run_id']}" in line and "status=interrupted" in line for line in logs)
