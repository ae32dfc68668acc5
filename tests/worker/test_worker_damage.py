"""Damaged queue rows in front of good runs stop no worker: real `actorgraph worker` processes mark each
row they cannot read failed, with the reason (its thread, its column), warn once, and finish every good run.

The damage is what each database lets anyone write: SQLite keeps text in an INTEGER or REAL column and
bytes in a TEXT one; PostgreSQL's columns are typed, but a payload may not decode, `attempts` may be the
largest bigint (`attempts + 1` overflows), and a time may be NaN or Infinity (a lease that never ends).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import worker_graphs as wg

from actorgraph.checkpoint import PostgresCheckpointer, SqliteCheckpointer
from actorgraph.checkpoint._queue import run_queue

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]

TESTS = Path(__file__).resolve().parents[1]
GOOD = 8  # good runs queued behind the damaged ones
WORKERS = 2
WAIT = 60.0

# each: the SET clause that damages a queued row, and what the failed row's reason names
SQLITE = {
    "attempts-text": ("attempts = 'many'", "its attempts is 'many'"),
    "payload-text": ("payload = 'not bytes'", "its payload is 'not bytes'"),
    "lease-text": ("lease_until = 'soon'", "its lease_until is 'soon'"),
    "updated-bytes": ("updated_at = x'00ff'", "its updated_at is b'\\x00\\xff'"),
    "payload-undecodable": ("payload = x'00ff'", "cannot be read"),
    "lease-never-ends": ("state = 'running', worker = 'gone:1', lease_until = 'forever'", "its lease_until"),
}
POSTGRES = {
    "attempts-largest": ("attempts = 9223372036854775807", "its attempts is 9223372036854775807"),
    "payload-undecodable": ("payload = '\\x00ff'::bytea", "cannot be read"),
    "lease-nan": ("state = 'running', worker = 'gone:1', lease_until = 'NaN'", "its lease_until is nan"),
    "lease-infinite": (
        "state = 'running', worker = 'gone:1', lease_until = 'Infinity'",
        "its lease_until is inf",
    ),
    "submitted-before-time": ("submitted_at = '-Infinity'", "its submitted_at is -inf"),
}


@contextmanager
def _workers(target_store: list[str], tmp_path: Path) -> Iterator[list[subprocess.Popen[bytes]]]:
    """WORKERS `actorgraph worker worker_graphs:fan` processes on the store; stopped (SIGTERM) afterwards."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ACTORGRAPH_")}
    env |= {
        "PYTHONPATH": os.pathsep.join(p for p in (str(TESTS), os.environ.get("PYTHONPATH")) if p),
        "WORKER_LEDGER": str(tmp_path / "ledger"),
        "WORKER_PAUSE": "0",
    }
    if target_store[0] == "--db":
        env["WORKER_DB"] = target_store[1]
    else:
        env["WORKER_DSN"] = target_store[1]
    argv = [
        sys.executable,
        "-m",
        "actorgraph.cli",
        "worker",
        "worker_graphs:fan",
        *target_store,
        "--lease",
        "5",
    ]
    processes = []
    for i in range(WORKERS):
        with (tmp_path / f"w{i}.log").open("w") as log:  # the child keeps its own copy of the file
            processes.append(subprocess.Popen([*argv, "--name", f"w{i}"], env=env, cwd=tmp_path, stderr=log))
    try:
        yield processes
    finally:
        for process in processes:
            process.send_signal(signal.SIGTERM)
        for process in processes:
            try:
                process.wait(WAIT)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(5)


def _logs(tmp_path: Path) -> str:
    return "\n".join((tmp_path / f"w{i}.log").read_text() for i in range(WORKERS))


def _submit_and_damage(store: Any, damages: dict[str, tuple[str, str]]) -> None:
    """The damaged runs first (the oldest: the first any worker looks at), then the good ones."""
    with wg.fan().compile(store) as app:
        for kind in damages:
            app.submit({"seed": 0, "log": [], "total": 0}, thread_id=f"damaged-{kind}")
            time.sleep(0.01)  # submitted strictly before the good runs
        for i in range(GOOD):
            app.submit({"seed": i, "log": [], "total": 0}, thread_id=f"good-{i}")
    for kind, (assignments, _) in damages.items():
        where = f"WHERE thread_id = 'damaged-{kind}'"
        store._transaction(
            "damaging",
            lambda conn, a=assignments, w=where: conn.execute(f"UPDATE actorgraph_queue SET {a} {w}"),  # noqa: S608
        )


def _every_good_run_finishes(store: Any, damages: dict[str, tuple[str, str]], logs: str) -> None:
    queue = run_queue(store)
    with wg.fan().compile(store) as app:
        for i in range(GOOD):
            row = queue.get(f"good-{i}")
            assert row is not None and row.state == "done", (i, row, logs)
            assert app.get_state(f"good-{i}").state == wg.expected(i)
    for kind, (_, says) in damages.items():
        thread = f"damaged-{kind}"
        (state, error), *_ = store._read(
            "reading",
            f"SELECT state, error FROM actorgraph_queue WHERE thread_id = {store.dialect.mark}",  # noqa: S608
            (thread,),
        )
        assert state == "failed", (kind, state, error)
        assert thread in error, (kind, error)
        assert says in error, (kind, error)
        assert "submit" in error, (kind, error)  # what to do
        warned = [line for line in logs.splitlines() if f"thread_id={thread}" in line and "warning" in line]
        assert len(warned) == 1, (kind, warned)  # once, by the worker that marked it; never again


def _wait_for_good_runs(store: Any, processes: list[subprocess.Popen[bytes]]) -> None:
    queue = run_queue(store)
    deadline = time.monotonic() + WAIT
    while any(queue.state_of(f"good-{i}") != "done" for i in range(GOOD)):
        if time.monotonic() > deadline:
            return  # the assertions afterwards say which did not finish
        assert all(p.poll() is None for p in processes), "a worker stopped"
        time.sleep(0.1)


def test_damaged_sqlite_rows_are_failed_and_every_good_run_finishes(tmp_path: Path) -> None:
    db = str(tmp_path / "runs.db")
    with SqliteCheckpointer(db) as store:
        _submit_and_damage(store, SQLITE)
        with _workers(["--db", db], tmp_path) as processes:
            _wait_for_good_runs(store, processes)
        _every_good_run_finishes(store, SQLITE, _logs(tmp_path))


def test_damaged_postgres_rows_are_failed_and_every_good_run_finishes(
    tmp_path: Path, postgres_db: str
) -> None:
    with PostgresCheckpointer(postgres_db) as store:
        _submit_and_damage(store, POSTGRES)
        with _workers(["--dsn", postgres_db], tmp_path) as processes:
            _wait_for_good_runs(store, processes)
        _every_good_run_finishes(store, POSTGRES, _logs(tmp_path))
