"""`actorgraph worker`'s log names what each line is about: every line of a failed run carries its
thread, its run, the vertex that failed and the error (text: `key=value` after the event; `--log-format
json`: one JSON object a line)."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import worker_graphs as wg

from actorgraph.checkpoint import SqliteCheckpointer

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]

TESTS = Path(__file__).resolve().parents[1]
WAIT = 30.0


def _worker_log(tmp_path: Path, *options: str) -> tuple[str, list[str]]:
    """Run a worker until the submitted run of `failing` failed; its thread and the worker's stderr lines."""
    db = str(tmp_path / "runs.db")
    with SqliteCheckpointer(db) as store, wg.failing().compile(store) as app:
        handle = app.submit({"seed": 7}, thread_id="billing-7")
        env = {k: v for k, v in os.environ.items() if not k.startswith("ACTORGRAPH_")}
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(TESTS), os.environ.get("PYTHONPATH")) if p)
        argv = [sys.executable, "-m", "actorgraph.cli", "worker", "worker_graphs:failing", "--db", db]
        worker = subprocess.Popen(
            [*argv, "--name", "w-logs", *options], env=env, cwd=tmp_path, stderr=subprocess.PIPE, text=True
        )
        try:
            assert handle.wait(WAIT) == "failed"
        finally:
            worker.send_signal(signal.SIGTERM)
            try:
                _, err = worker.communicate(timeout=WAIT)
            except subprocess.TimeoutExpired:
                worker.kill()
                _, err = worker.communicate()
    return handle.thread_id, err.splitlines()


def _event(line: str) -> str:
    """The event of a text log line (`TIME [level    ] event    key=value ...`); "" for another line."""
    found = re.match(r"\S+ \[\w+ *\] (.+?)(?: {2,}|$)", line)
    return found.group(1) if found else ""


def test_every_line_of_a_failed_run_names_its_thread_run_vertex_and_error(tmp_path: Path) -> None:
    thread, lines = _worker_log(tmp_path)
    failed = [line for line in lines if _event(line).endswith("failed")]
    assert {_event(line) for line in failed} == {"task failed", "run failed", "queued run failed"}
    for line in failed:
        for field in (f"thread_id={thread}", "run_id=", "vertex=call", "error="):
            assert field in line, (field, line)
        assert "the service is down (seed 7)" in line, line
    worker_line = next(line for line in failed if "queued run failed" in line)
    assert "worker=w-logs" in worker_line
    assert "ConnectionError: the service is down (seed 7)" in worker_line
    started = next(line for line in lines if "queued run started" in line)
    assert f"thread_id={thread}" in started
    assert "worker=w-logs" in started


def test_log_format_json_writes_one_object_a_line_with_the_fields(tmp_path: Path) -> None:
    thread, lines = _worker_log(tmp_path, "--log-format", "json")
    records = [json.loads(line) for line in lines if line.startswith("{")]
    assert len(records) >= 3, lines
    by_event = {record["event"]: record for record in records}
    failed = by_event["queued run failed"]
    assert failed["level"] == "error"
    assert (failed["thread_id"], failed["vertex"], failed["worker"]) == (thread, "call", "w-logs")
    assert failed["error"] == "ConnectionError: the service is down (seed 7)"
    assert failed["run_id"] == by_event["task failed"]["run_id"] == by_event["run failed"]["run_id"]
    for event in ("task failed", "run failed"):
        assert (by_event[event]["vertex"], by_event[event]["thread_id"]) == ("call", thread), event
        assert by_event[event]["error_message"] == "the service is down (seed 7)", event
