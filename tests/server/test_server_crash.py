"""A server SIGKILLed in the middle of a background run loses nothing: the server started again on the store
(or an `actorgraph worker` of the server's graphs) finishes the run once its lease ran out, without running
a committed superstep again, `runs.join` returns its result, and a thread paused before the kill is still
paused and answerable.

Real `actorgraph server` and `actorgraph worker` processes, `langgraph-sdk` over HTTP, a real SQLite file and
a real PostgreSQL database; the graph's vertices write a fsynced ledger line each time they run, and a
`RERUN` line if their result was stored already (`tests/server_queue_graphs.py`).
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from langgraph_sdk import get_sync_client
from server_processes import Processes, processes

from actorgraph.checkpoint import PostgresCheckpointer, SqliteCheckpointer
from actorgraph.checkpoint._queue import run_queue

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

WAIT = 60.0
DONE = {"log": ["a", "b", "c", "d"]}


def _until(found: Callable[[], Any], what: str, running: Processes) -> Any:
    deadline = time.monotonic() + WAIT
    while not (value := found()):
        assert time.monotonic() < deadline, f"{what}; the children's logs:\n{running.logs()[-4000:]}"
        time.sleep(0.1)
    return value


def _ledger(path: Path, thread: str) -> list[str]:
    return [line for line in path.read_text().splitlines() if f" {thread} " in line]


def _paused_thread(client: Any) -> str:
    thread = client.threads.create()["thread_id"]
    asked = client.runs.wait(thread, "asking", input={})
    assert asked["__interrupt__"][0]["value"] == {"question": "go on?"}
    return str(thread)


def _killed_mid_run(running: Processes, ledger: Path) -> tuple[str, str, str]:
    """A server, a paused thread, a background run killed after its second vertex began; the ids."""
    client = get_sync_client(url=running.server(), timeout=WAIT)
    paused = _paused_thread(client)
    thread = client.threads.create()["thread_id"]
    run = client.runs.create(thread, "ledger", input={"log": []})
    assert run["status"] == "pending"
    assert client.threads.get(thread)["status"] == "busy"
    _until(lambda: len(_ledger(ledger, thread)) >= 2, "the run did not get to its second vertex", running)
    running.kill()
    return paused, thread, run["run_id"]


def _ran_once(ledger: Path, thread: str) -> None:
    """No finished vertex ran again; only the one the kill interrupted may have started twice."""
    lines = _ledger(ledger, thread)
    assert [line for line in lines if line.startswith("RERUN")] == [], lines
    counts = Counter(line.split()[3] for line in lines)
    assert set(counts) == set(DONE["log"]), lines
    assert sum(counts.values()) - len(counts) <= 1, lines
    assert len({line.split()[4] for line in lines}) == 2, lines  # two processes ran it


def _answered_after(client: Any, paused: str) -> None:
    shown = client.threads.get(paused)
    assert shown["status"] == "interrupted"
    assert next(iter(shown["interrupts"].values()))[0]["value"] == {"question": "go on?"}
    assert client.runs.wait(paused, "asking", command={"resume": "yes"}) == {"answer": "yes"}


def test_a_server_killed_during_a_background_run_and_started_again_finishes_it(tmp_path: Path) -> None:
    db, ledger = tmp_path / "runs.db", tmp_path / "ledger"
    ledger.touch()
    env = {"SERVER_DB": db, "SERVER_LEDGER": ledger}
    with processes(tmp_path, ["--db", str(db)], **env) as running:
        paused, thread, run_id = _killed_mid_run(running, ledger)
        client = get_sync_client(url=running.server(), timeout=WAIT)
        assert client.runs.join(thread, run_id) == DONE
        assert client.runs.get(thread, run_id)["status"] == "success"
        assert client.threads.get(thread)["status"] == "idle"
        _ran_once(ledger, thread)
        _answered_after(client, paused)
    with SqliteCheckpointer(db) as store:
        assert run_queue(store).run(run_id).attempts == 2


def test_a_server_killed_during_a_background_run_is_finished_by_a_worker(
    tmp_path: Path, postgres_db: str
) -> None:
    ledger = tmp_path / "ledger"
    ledger.touch()
    env = {"SERVER_DSN": postgres_db, "SERVER_LEDGER": ledger}
    with (
        processes(tmp_path, ["--dsn", postgres_db], **env) as running,
        PostgresCheckpointer(postgres_db) as store,
    ):
        paused, thread, run_id = _killed_mid_run(running, ledger)
        running.worker(name="the-worker")
        queue = run_queue(store)
        row = _until(
            lambda: (r := queue.run(run_id)) is not None and r.state == "done" and r, "no end", running
        )
        assert (row.worker, row.attempts) == ("the-worker", 2)
        client = get_sync_client(url=running.server(), timeout=WAIT)
        assert client.runs.join(thread, run_id) == DONE
        assert client.threads.get(thread)["status"] == "idle"
        _ran_once(ledger, thread)
        _answered_after(client, paused)
