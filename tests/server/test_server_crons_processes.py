"""Crons across real `actorgraph server` processes: each tick makes one run, whoever fires it.

Three servers on one PostgreSQL database and an every-second cron for ten
seconds, one server SIGKILLed in the middle: each tick's run exists once (its id
is the cron's and the tick's), the ticks follow each other, and every run ends.
After an hour of downtime, a worker (with no server) fires the missed ticks of
a cron once, not once per missed tick, and runs it. `langgraph-sdk` clients over HTTP, children
killed with SIGKILL (`tests/server_processes.py`).
"""

from __future__ import annotations

import datetime as dt
import itertools
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from langgraph_sdk import get_sync_client
from server_processes import Processes, processes

from actorgraph.checkpoint import SqliteCheckpointer
from actorgraph.checkpoint._queue import run_queue
from actorgraph.server import Crons
from actorgraph.server._cron_specs import tick_run_id

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

WAIT = 60.0


def _until(found: Callable[[], Any], what: str, running: Processes) -> Any:
    deadline = time.monotonic() + WAIT
    while not (value := found()):
        assert time.monotonic() < deadline, f"{what}; the children's logs:\n{running.logs()[-4000:]}"
        time.sleep(0.2)
    return value


def test_three_servers_fire_each_tick_once_and_a_kill_changes_nothing(
    tmp_path: Path, postgres_db: str
) -> None:
    with processes(tmp_path, ["--dsn", postgres_db]) as running:
        urls = [running.server(log=f"server-{k}.log") for k in range(3)]
        victim = running.children[1]
        clients = [get_sync_client(url=url, timeout=WAIT) for url in urls]
        thread = clients[0].threads.create()["thread_id"]
        cron = clients[0].crons.create_for_thread(thread, "slow", schedule="* * * * * *", input={"sleep": 0})
        first = dt.datetime.fromisoformat(cron["next_run_date"]).timestamp()
        time.sleep(first - time.time() + 5)
        running.kill(victim)  # mid-way: whatever it held (a tick, a run) is the others' now
        time.sleep(5)
        clients[2].crons.delete(cron["cron_id"])
        runs = _until(
            lambda: (
                (r := clients[0].runs.list(thread, limit=1000))
                and all(x["status"] == "success" for x in r)
                and r
            ),
            "the cron's runs did not all end",
            running,
        )
    by_id = {tick_run_id(cron["cron_id"], first + k): first + k for k in range(60)}
    ticks = sorted(by_id[run["run_id"]] for run in runs)  # a KeyError: a run that is no tick's
    assert len(ticks) == len(set(ticks))  # each tick's run exists once
    assert len(ticks) >= 8  # ten seconds of ticks (a tick more than a second late is merged into the next)
    gaps = [b - a for a, b in itertools.pairwise(ticks)]
    assert sum(gap - 1 for gap in gaps) <= 2, ticks  # every tick in the window fired but for late ones
    logs = running.logs()
    assert "could not fire" not in logs, logs[-4000:]
    assert "duplicate key" not in logs and "UNIQUE constraint" not in logs, logs[-4000:]


def test_after_downtime_the_missed_ticks_fire_once_even_from_a_worker(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    with processes(tmp_path, ["--db", str(db)]) as running:
        client = get_sync_client(url=running.server(), timeout=WAIT)
        thread = client.threads.create()["thread_id"]
        running.stop()
    with Crons(db=str(db)) as crons:
        cron = crons.add("slow", "* * * * *", thread_id=thread, input={"sleep": 0})
    hour_ago = time.time() - 3600
    with sqlite3.connect(db) as conn:  # no server or worker ran for an hour: sixty ticks missed
        conn.execute(
            "UPDATE actorgraph_crons SET next_run_at = ? WHERE cron_id = ?", (hour_ago, cron.cron_id)
        )
    store = SqliteCheckpointer(str(db))
    queue = run_queue(store)
    try:
        with processes(tmp_path, ["--db", str(db)]) as running:
            running.worker(name="w", log="worker.log")  # a worker alone: it fires the ticks and runs them
            _until(
                lambda: [r for r in queue.runs_of(thread) if r.state == "done"],
                "the missed tick did not run",
                running,
            )
            time.sleep(2)  # more looks of the scheduler: nothing more fires before the next minute
            this_minute = time.time() // 60 * 60  # a minute boundary passed meanwhile: that tick is its own
            runs = [
                r.run_id for r in queue.runs_of(thread) if r.run_id != tick_run_id(cron.cron_id, this_minute)
            ]
    finally:
        store.close()
    assert runs == [tick_run_id(cron.cron_id, hour_ago)]
    with Crons(db=str(db)) as crons:
        again = crons.get(cron.cron_id)
    assert again is not None and again.next_run_at is not None and again.next_run_at > hour_ago + 3600
