"""Workers on a real PostgreSQL finish every queued run while one of them is SIGKILLed again and again.

Three `actorgraph worker` processes take 200 queued runs of `worker_graphs.fan`;
every couple of seconds one of them is killed with SIGKILL and a new one is
started in its place. Every run ends, each final state equals the
uninterrupted run's, no committed task ran again (the probe in the graph
writes `RERUN` to the ledger if one did), and no superstep was committed twice
(no checkpoint of a thread has two children).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
import worker_graphs as wg

from actorgraph.checkpoint import PostgresCheckpointer
from actorgraph.checkpoint._queue import run_queue

pytestmark = pytest.mark.slow

TESTS = Path(__file__).resolve().parents[1]
RUNS = 200
WORKERS = 3
KILL_EVERY = 2.0  # seconds between kills
LEASE = 3.0
BOUND = 300.0  # seconds the whole test may take before it fails


def _worker(dsn: str, ledger: Path, name: str) -> subprocess.Popen[bytes]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ACTORGRAPH_")}
    env |= {
        "PYTHONPATH": os.pathsep.join(p for p in (str(TESTS), os.environ.get("PYTHONPATH")) if p),
        "WORKER_DSN": dsn,
        "WORKER_LEDGER": str(ledger),
        "WORKER_PAUSE": "0.1",  # tasks long enough for kills to land inside runs
    }
    argv = [sys.executable, "-m", "actorgraph.cli", "worker", "worker_graphs:fan", "--dsn", dsn]
    argv += ["--lease", str(LEASE), "--concurrency", "4", "--name", name]
    return subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def _submit(dsn: str) -> None:
    with PostgresCheckpointer(dsn) as store, wg.fan().compile(store) as app:
        for i in range(RUNS):
            app.submit({"seed": i, "log": [], "total": 0}, thread_id=f"run-{i}")


def _left(dsn: str) -> int:
    with PostgresCheckpointer(dsn) as store:
        return len(run_queue(store).rows())


def _kill_while_working(dsn: str, ledger: Path) -> int:
    """Run the workers, killing one every KILL_EVERY seconds until every run is done; the number of kills."""
    workers = [_worker(dsn, ledger, f"w{i}") for i in range(WORKERS)]
    kills, deadline = 0, time.monotonic() + BOUND
    try:
        while _left(dsn) and time.monotonic() < deadline:
            time.sleep(KILL_EVERY)
            victim = kills % WORKERS
            workers[victim].send_signal(signal.SIGKILL)
            workers[victim].wait(10)
            kills += 1
            workers[victim] = _worker(dsn, ledger, f"w{victim}-{kills}")
    finally:
        for w in workers:
            w.send_signal(signal.SIGTERM)
        for w in workers:
            try:
                w.wait(20)
            except subprocess.TimeoutExpired:
                w.kill()
                w.wait(5)
    return kills


def test_killed_workers_lose_no_run_and_rerun_no_committed_task(postgres_db: str, tmp_path: Path) -> None:
    ledger = tmp_path / "ledger"
    ledger.touch()
    _submit(postgres_db)
    kills = _kill_while_working(postgres_db, ledger)
    lines = ledger.read_text().splitlines()
    assert kills >= 2
    assert [line for line in lines if line.startswith("RERUN")] == []
    with PostgresCheckpointer(postgres_db) as store, wg.fan().compile(store) as app:
        queue = run_queue(store)
        rows = [queue.get(f"run-{i}") for i in range(RUNS)]
        assert Counter(r.state if r else None for r in rows) == {"done": RUNS}
        assert any(r is not None and r.attempts > 1 for r in rows), (
            "no run was taken over from a killed worker"
        )
        for i in range(RUNS):
            snapshot = app.get_state(f"run-{i}")
            assert (snapshot.status, snapshot.state) == ("done", wg.expected(i))
            parents = [row.parent_id for row in store.history(f"run-{i}")]
            assert len(parents) == len(set(parents)), f"run-{i}: a superstep was committed twice"
