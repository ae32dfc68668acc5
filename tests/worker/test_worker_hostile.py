"""What comes from outside is refused plainly: bad leases, targets, stores, submissions and stored queue rows.

Each refusal is one line saying what was wrong (never a traceback), and a
damaged queue row fails its own run only.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest
import worker_graphs as wg
from cli_shell import Shell

import actorgraph as ag
import actorgraph.worker
from actorgraph.checkpoint import MemoryCheckpointer, SqliteCheckpointer
from actorgraph.checkpoint._queue import run_queue

WAIT = 30.0


@pytest.mark.slow
@pytest.mark.parametrize("lease", ["nan", "inf", "0", "-3", "abc", "1e9"])
def test_a_bad_lease_is_a_usage_error(tmp_path: Path, lease: str) -> None:
    done = Shell(tmp_path)("worker", "worker_graphs:fan", "--db", "q.db", "--lease", lease, code=2)
    assert "Traceback" not in done.stderr
    assert "lease" in done.stderr


@pytest.mark.slow
@pytest.mark.parametrize(
    ("target", "said"),
    [("nowhere:graph", "no module"), ("worker_graphs:nothing", "no attribute"), ("flow", "names no graph")],
)
def test_a_bad_target_is_a_usage_error(tmp_path: Path, target: str, said: str) -> None:
    done = Shell(tmp_path)("worker", target, "--db", "q.db", code=2)
    assert said in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.slow
@pytest.mark.parametrize(
    "args",
    [("--db", "q.db"), ("worker_graphs:fan", "-g", "x=worker_graphs:fan", "--db", "q.db")],
    ids=["neither", "both"],
)
def test_a_worker_takes_a_targets_runs_or_the_servers_not_both(tmp_path: Path, args: tuple[str, ...]) -> None:
    done = Shell(tmp_path)("worker", *args, code=2)
    assert "give TARGET" in done.stderr
    assert "--config/-g" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.slow
def test_an_unreachable_database_is_one_line(tmp_path: Path) -> None:
    done = Shell(tmp_path)(
        "worker", "worker_graphs:fan", "--dsn", "postgresql://nobody@127.0.0.1:1/x", code=1
    )
    assert "Traceback" not in done.stderr
    assert "PostgreSQL" in done.stderr


@pytest.mark.parametrize(
    "options",
    [{"concurrency": 0}, {"concurrency": True}, {"lease": float("nan")}, {}, {"db": "a", "dsn": "b"}],
)
def test_worker_run_refuses_bad_options(tmp_path: Path, options: dict[str, Any]) -> None:
    with pytest.raises(ag.ConfigError):
        actorgraph.worker.run(wg.fan(), **({"db": str(tmp_path / "q.db")} | options if options else {}))


def test_submit_needs_a_shared_store_and_one_run_per_thread(tmp_path: Path) -> None:
    with (
        wg.fan().compile(MemoryCheckpointer()) as memory,
        pytest.raises(ag.ConfigError, match="SqliteCheckpointer"),
    ):
        memory.submit({"seed": 1, "log": [], "total": 0}, thread_id="t1")
    with SqliteCheckpointer(tmp_path / "q.db") as store, wg.fan().compile(store) as app:
        handle = app.submit({"seed": 1, "log": [], "total": 0}, thread_id="t1")
        assert (handle.thread_id, handle.status(), handle.worker()) == ("t1", "queued", None)
        with pytest.raises(ag.CheckpointError, match="has a run queued already"):
            app.submit(None, thread_id="t1")
        with pytest.raises(ag.ConfigError, match="resume"):
            app.submit(ag.Command(goto="split"), thread_id="t2")
        with pytest.raises(ag.RunTimeoutError, match="is a worker running"):
            handle.wait(0.01)
        with pytest.raises(
            ag.ThreadNotFoundError, match="'t1' has no stored checkpoint yet: its submitted run is queued"
        ):
            app.get_state("t1")
        with pytest.raises(ag.ThreadNotFoundError, match=r"'t3' has no stored checkpoint$"):
            app.get_state("t3")
        app.checkpointer.delete_thread("t1")  # a deleted thread's queued run goes too: no worker revives it
        assert handle.status() == "done" and run_queue(store).get("t1") is None
        app.submit({"seed": 2, "log": [], "total": 0}, thread_id="t1")  # the thread id is free again


@pytest.mark.slow
def test_threads_lists_queued_runs_and_the_worker_holding_each(tmp_path: Path) -> None:
    with SqliteCheckpointer(tmp_path / "q.db") as store, wg.fan().compile(store) as app:
        app.submit({"seed": 1, "log": [], "total": 0}, thread_id="first")
        app.submit({"seed": 2, "log": [], "total": 0}, thread_id="second")
        run_queue(store).claim("host-a:42", 30.0)
    listed = {t["thread_id"]: t for t in Shell(tmp_path).json("threads", "--db", "q.db")}
    assert (listed["first"]["status"], listed["first"]["worker"]) == ("running", "host-a:42")
    assert (listed["second"]["status"], listed["second"]["worker"]) == ("queued", None)
    shown = Shell(tmp_path)("threads", "--db", "q.db").stdout
    assert "host-a:42" in shown
    assert "worker" in shown


@pytest.mark.slow
@pytest.mark.threads_only("the graph's probe reads its store and ledger from this process's environment")
def test_a_damaged_queue_row_fails_its_run_and_no_other(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("WORKER_DB", str(tmp_path / "q.db"))
    monkeypatch.setenv("WORKER_LEDGER", str(tmp_path / "ledger"))
    monkeypatch.setenv("WORKER_PAUSE", "0")
    with SqliteCheckpointer(tmp_path / "q.db") as store, wg.fan().compile(store) as app:
        app.submit({"seed": 1, "log": [], "total": 0}, thread_id="bad")
        good = app.submit({"seed": 2, "log": [], "total": 0}, thread_id="good")
        store._transaction(
            "damaging",
            lambda conn: conn.execute(
                "UPDATE actorgraph_queue SET payload = x'00ff' WHERE thread_id = 'bad'"
            ),
        )
        stop = threading.Event()
        worker = threading.Thread(
            target=actorgraph.worker.run, args=(wg.fan,), kwargs={"db": str(tmp_path / "q.db"), "stop": stop}
        )
        worker.start()
        try:
            assert good.wait(WAIT) == "done"
            deadline = time.monotonic() + WAIT
            while (row := run_queue(store).get("bad")) is not None and row.state != "failed":
                assert time.monotonic() < deadline
                time.sleep(0.05)
        finally:
            stop.set()
            worker.join(WAIT)
        assert row is not None
        assert "submit it again" in (row.error or "") or "SerializationError" in (row.error or "")
        assert app.get_state("good").state == wg.expected(2)
        store._transaction(
            "damaging",
            lambda conn: conn.execute("UPDATE actorgraph_queue SET state = 'bogus' WHERE thread_id = 'bad'"),
        )
        with pytest.raises(ag.CheckpointError, match="damaged"):
            run_queue(store).get("bad")


def test_a_claim_marks_a_row_it_cannot_read_failed_and_takes_the_next(tmp_path: Path) -> None:
    with SqliteCheckpointer(tmp_path / "q.db") as store, wg.fan().compile(store) as app:
        app.submit({"seed": 1, "log": [], "total": 0}, thread_id="bad")
        app.submit({"seed": 2, "log": [], "total": 0}, thread_id="good")
        store._transaction(
            "damaging",
            lambda conn: conn.execute("UPDATE actorgraph_queue SET attempts = 'x' WHERE thread_id = 'bad'"),
        )
        queue = run_queue(store)
        taken = queue.claim("w", 30.0)
        assert taken is not None
        assert (taken.thread_id, taken.attempts) == ("good", 1)
        assert queue.state_of("bad") == "failed"
        (error,) = store._read("reading", "SELECT error FROM actorgraph_queue WHERE thread_id = 'bad'", ())[0]
        assert "thread 'bad'" in error
        assert "its attempts is 'x'" in error
        assert queue.claim("w", 30.0) is None  # the damaged row is not taken again
        assert app.submit(None, thread_id="bad").status() == "queued"  # and it can be submitted again


def test_damaged_worker_rows_and_states_are_refused_plainly(tmp_path: Path) -> None:
    with SqliteCheckpointer(tmp_path / "q.db") as store, wg.fan().compile(store) as app:
        queue = run_queue(store)
        queue.heartbeat("alive", 30.0, [])
        queue.heartbeat("forged", 30.0, [])
        store._transaction(
            "damaging",
            lambda conn: conn.execute(
                "UPDATE actorgraph_workers SET started_at = 'x' WHERE worker = 'forged'"
            ),
        )
        assert [w.worker for w in queue.live_workers()] == ["alive"]  # a row it cannot read is no live worker
        handle = app.submit({"seed": 1, "log": [], "total": 0}, thread_id="t1")
        store._transaction(
            "damaging",
            lambda conn: conn.execute("UPDATE actorgraph_queue SET state = 'bogus' WHERE thread_id = 't1'"),
        )
        with pytest.raises(ag.CheckpointError, match="its state is 'bogus'"):
            handle.wait(1.0)
