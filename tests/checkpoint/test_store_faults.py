"""Stores that stop answering fail within their bounds with errors that say what to do; read-only SQLite.

Waits are bounded with join timeouts (the bound is generous: this host is bursty); nothing asserts speed.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from shared import SharedEvent

import actorgraph as ag
from actorgraph.checkpoint import PostgresCheckpointer, SqliteCheckpointer

pytestmark = pytest.mark.slow  # stores that stop answering, waited out

BOUND = 60.0  # seconds any single wait below may take before the test calls it a hang


def loop(steps: int = 3) -> ag.Graph:
    g: ag.Graph = ag.Graph()
    g.add_vertex("inc", lambda s: {"n": s["n"] + 1})
    g.add_edge(ag.START, "inc")
    g.add_conditional_edges("inc", lambda s: "inc" if s["n"] < steps else ag.END)
    return g


def bounded(call: Callable[[], Any], timeout: float = BOUND) -> Any:
    """Run `call` in a thread; fail the test if it has not ended within `timeout` (a hang)."""
    outcome: list[Any] = []

    def run() -> None:
        try:
            outcome.append(("ok", call()))
        except BaseException as exc:
            outcome.append(("raised", exc))

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(timeout)
    assert not worker.is_alive(), f"still waiting after {timeout} s: the call hangs"
    kind, value = outcome[0]
    if kind == "raised":
        raise value
    return value


# -- PostgreSQL: a frozen server ----------------------------------------------------------------


@pytest.fixture
def frozen_able() -> Iterator[Any]:
    """A server of its own (freezing the session's would stall other tests), thawed in the end."""
    from pg_server import PostgresServer

    with PostgresServer() as server:
        try:
            yield server
        finally:
            server.thaw()


def test_a_frozen_server_fails_a_run_with_a_checkpoint_error_that_says_what_to_do(
    frozen_able: Any, compile_graph: Callable[..., ag.CompiledGraph]
) -> None:
    store = PostgresCheckpointer(frozen_able.dsn(), statement_timeout=1, connect_timeout=2)
    try:
        app = compile_graph(loop(), checkpointer=store)
        assert app.invoke({"n": 0}, thread_id="before").state == {"n": 3}
        frozen_able.freeze()
        with pytest.raises(ag.CheckpointError, match="did not answer within 2 s") as info:
            bounded(lambda: app.invoke({"n": 0}, thread_id="t"))
        message = str(info.value)
        assert "frozen, overloaded or cut off" in message and "reconnects" in message
        frozen_able.thaw()
        assert bounded(lambda: app.invoke({"n": 0}, thread_id="after")).state == {"n": 3}
    finally:
        frozen_able.thaw()
        store.close()


def test_connecting_to_a_frozen_server_fails_within_the_connect_timeout(frozen_able: Any) -> None:
    frozen_able.freeze()
    with pytest.raises(ag.CheckpointError, match=r"could not be reached|frozen, overloaded"):
        bounded(lambda: PostgresCheckpointer(frozen_able.dsn(), connect_timeout=2, statement_timeout=1))


def test_close_does_not_wait_for_a_call_stuck_on_a_frozen_server(frozen_able: Any) -> None:
    store = PostgresCheckpointer(frozen_able.dsn(), statement_timeout=5)
    assert store.threads() == []
    frozen_able.freeze()
    started = threading.Event()
    errors: list[Exception] = []

    def stuck() -> None:
        started.set()
        try:
            store.threads()
        except ag.CheckpointError as exc:
            errors.append(exc)

    caller = threading.Thread(target=stuck, daemon=True)
    caller.start()
    started.wait(BOUND)
    bounded(lambda: store.close(timeout=0.1))  # returns while the call still waits
    caller.join(BOUND)
    assert not caller.is_alive() and errors, "the stuck call did not end within its bound"
    with pytest.raises(ag.CheckpointError, match="closed"):
        store.threads()


def test_closing_a_graph_whose_run_waits_on_a_frozen_server_ends(frozen_able: Any) -> None:
    entered, release = SharedEvent(), SharedEvent()

    def slow(state: dict[str, int]) -> dict[str, int]:
        entered.set()
        release.wait(BOUND)
        return {"n": state["n"] + 1}

    g: ag.Graph = ag.Graph()
    g.add_vertex("slow", slow)
    g.add_edge(ag.START, "slow")
    g.add_edge("slow", ag.END)
    store = PostgresCheckpointer(frozen_able.dsn(), statement_timeout=1)
    app = g.compile(checkpointer=store)
    try:
        handle = app.start({"n": 0}, thread_id="t")
        assert entered.wait(BOUND)
        frozen_able.freeze()
        release.set()  # the task's result now goes to a server that does not answer
        with pytest.raises(ag.ActorGraphError):
            bounded(lambda: handle.result(timeout=BOUND))
        bounded(app.close)
    finally:
        release.set()
        frozen_able.thaw()
        app.close()
        store.close()


def test_the_session_carries_the_timeouts_and_keepalives(postgres_db: str) -> None:
    with PostgresCheckpointer(postgres_db, statement_timeout=7, idle_timeout=9, keepalive=4) as store:

        def show(conn: psycopg.Connection[Any]) -> tuple[Any, ...]:
            values = [conn.execute(f"SHOW {name}").fetchone()[0] for name in ("statement_timeout",
                      "idle_in_transaction_session_timeout")]  # fmt: skip
            return (*values, conn.info.get_parameters().get("keepalives_idle"))

        assert store._query("showing settings", show) == ("7s", "9s", "4")


def test_the_session_carries_the_tcp_user_timeout_in_milliseconds(postgres_db: str) -> None:
    def user_timeout(conn: psycopg.Connection[Any]) -> str | None:
        return conn.info.get_parameters().get("tcp_user_timeout")

    with PostgresCheckpointer(postgres_db) as default:
        assert default._query("reading settings", user_timeout) == "20000"
    with PostgresCheckpointer(postgres_db, tcp_user_timeout=7.5, keepalive=None) as chosen:
        assert chosen._query("reading settings", user_timeout) == "7500"
    with PostgresCheckpointer(postgres_db, tcp_user_timeout=None) as off:
        assert off._query("reading settings", user_timeout) in (None, "0")


def test_a_statement_past_its_timeout_is_a_checkpoint_error(postgres_db: str) -> None:
    with PostgresCheckpointer(postgres_db, statement_timeout=0.2) as store:
        with pytest.raises(ag.CheckpointError, match="ran past the statement timeout") as info:
            store._query("sleeping", lambda conn: conn.execute("SELECT pg_sleep(5)"))
        assert "statement_timeout=" in str(info.value)
        assert isinstance(info.value.__cause__, psycopg.errors.QueryCanceled)
        assert store.threads() == []  # the same store goes on


# -- SQLite: a locked file --------------------------------------------------------------------------


LOCKER = """
import sqlite3, sys
connection = sqlite3.connect(sys.argv[1], isolation_level=None)
connection.execute("BEGIN EXCLUSIVE")
print("locked", flush=True)
sys.stdin.read()
"""


def hold_lock(path: Path) -> subprocess.Popen[str]:
    """Another process that holds an exclusive lock on the file until its stdin closes."""
    holder = subprocess.Popen(
        [sys.executable, "-c", LOCKER, str(path)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
    return holder


def test_a_file_locked_by_another_process_fails_a_run_with_a_clear_error(
    tmp_path: Path, compile_graph: Callable[..., ag.CompiledGraph]
) -> None:
    path = tmp_path / "cp.db"
    with SqliteCheckpointer(path, timeout=0.2) as store:
        app = compile_graph(loop(), checkpointer=store)
        holder = hold_lock(path)
        try:
            with pytest.raises(ag.CheckpointError, match="locked") as info:
                bounded(lambda: app.invoke({"n": 0}, thread_id="t"))
            assert "longer than the busy timeout" in str(info.value) and "timeout=" in str(info.value)
            with pytest.raises(ag.CheckpointError, match="locked"):  # opening it, too
                bounded(lambda: SqliteCheckpointer(path, timeout=0.2))
        finally:
            holder.communicate("", timeout=BOUND)
        assert app.invoke({"n": 0}, thread_id="t").state == {"n": 3}  # the lock gone, the file works


# -- SQLite: read-only ------------------------------------------------------------------------------


@pytest.fixture
def written(tmp_path: Path) -> Path:
    path = tmp_path / "runs.db"
    with SqliteCheckpointer(path) as store, loop().compile(checkpointer=store) as app:
        app.invoke({"n": 0}, thread_id="t")
    return path


def test_readonly_reads_and_refuses_every_write(written: Path) -> None:
    before = written.read_bytes()
    with SqliteCheckpointer(written, readonly=True) as store, loop().compile(checkpointer=store) as app:
        assert store.readonly
        assert app.get_state("t").state == {"n": 3}
        assert len(app.get_history("t")) == 4
        assert [i.thread_id for i in store.threads()] == ["t"]
        with pytest.raises(ag.CheckpointError, match="read-only") as info:
            app.invoke({"n": 0}, thread_id="new")
        assert "without readonly=True" in str(info.value)
        for write in (lambda: store.delete_thread("t"), lambda: store.prune("t", keep=1)):
            with pytest.raises(ag.CheckpointError, match="read-only"):
                write()
    assert written.read_bytes() == before


def test_a_file_this_process_cannot_write_opens_read_only(
    written: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import actorgraph.checkpoint.sqlite as module

    monkeypatch.setattr(module.os, "access", lambda path, mode: mode != os.W_OK)
    with SqliteCheckpointer(written) as store:
        assert store.readonly
        assert loop().compile(checkpointer=store).get_state("t").state == {"n": 3}


def test_readonly_on_a_file_without_actorgraph_tables_says_so(tmp_path: Path) -> None:
    path = tmp_path / "other.db"
    with sqlite3.connect(path) as raw:
        raw.execute("CREATE TABLE unrelated (x)")
    with pytest.raises(ag.CheckpointError, match="no actorgraph tables"):
        SqliteCheckpointer(path, readonly=True)
