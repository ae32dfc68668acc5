"""A webhook owed survives its server: killed after a run ended and before the delivery was taken, the
server started again on the store (or an `actorgraph worker --config` of it) delivers it.

Real `actorgraph server` and `actorgraph worker` processes (the secret from `$ACTORGRAPH_WEBHOOK_SECRET`,
loopback allowed in the config file's `webhooks.allow`, `--webhook-allow` for the worker), `langgraph-sdk`
over HTTP, a receiver on loopback that holds the first delivery unanswered until the server is SIGKILLed,
a real SQLite file and a real PostgreSQL database.
"""

from __future__ import annotations

import importlib.util
import json
import threading
from pathlib import Path
from typing import Any

import pytest
from langgraph_sdk import get_sync_client
from server_processes import Processes, processes
from webhook_receiver import Receiver, receiving, until

from actorgraph.checkpoint import PostgresCheckpointer, SqliteCheckpointer
from actorgraph.server._webhook_outbox import Outbox

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

SECRET = "the-webhook-secret-of-these-tests-0123456789"  # noqa: S105 - the tests' own
WAIT = 60.0
_spec = importlib.util.spec_from_file_location(
    "webhook_verify", Path(__file__).resolve().parents[2] / "examples" / "webhook_verify.py"
)
assert _spec is not None and _spec.loader is not None
docs_verify = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(docs_verify)


def _config(folder: Path) -> list[str]:
    path = folder / "hooks.json"
    path.write_text(json.dumps({"webhooks": {"allow": ["127.0.0.1"], "timeout": 1}}))
    return ["--config", str(path)]


def _killed_while_delivering(running: Processes, receiver: Receiver, store: Any) -> str:
    """A run that ended, whose webhook the server was sending when it was killed; the run's id."""
    client = get_sync_client(url=running.server(extra=_config(running.folder)), timeout=WAIT)
    thread = client.threads.create()["thread_id"]
    assert client.runs.wait(thread, "slow", input={"sleep": 0}, webhook=receiver.url)["slept"] is True
    (run,) = client.runs.list(thread)
    assert receiver.arrived.wait(WAIT), running.logs()[-4000:]
    running.kill()
    assert Outbox(store).count() == 1  # owed still: the receiver never answered
    return str(run["run_id"])


def _delivered_again(receiver: Receiver, store: Any, run_id: str, running: Processes) -> None:
    until(lambda: len(receiver.received()) >= 2, f"not delivered again:\n{running.logs()[-4000:]}", WAIT)
    until(lambda: Outbox(store).count() == 0, "still owed", WAIT)
    got = receiver.received()
    assert {d.headers["webhook-id"] for d in got} == {run_id}  # the same idempotency key
    assert all(docs_verify.verify(SECRET, d.headers, d.body) for d in got)
    assert json.loads(got[-1].body)["status"] == "success"


def test_a_server_killed_before_the_delivery_delivers_it_when_started_again(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    hold = threading.Event()
    env = {"SERVER_DB": db, "ACTORGRAPH_WEBHOOK_SECRET": SECRET}
    with (
        processes(tmp_path, ["--db", str(db)], **env) as running,
        receiving(hold=hold) as receiver,
        SqliteCheckpointer(db) as store,
    ):
        run_id = _killed_while_delivering(running, receiver, store)
        hold.set()
        running.server(extra=_config(tmp_path))
        _delivered_again(receiver, store, run_id, running)


def test_a_server_killed_before_the_delivery_is_relieved_by_a_worker(
    tmp_path: Path, postgres_db: str
) -> None:
    hold = threading.Event()
    env = {"SERVER_DSN": postgres_db, "ACTORGRAPH_WEBHOOK_SECRET": SECRET}
    with (
        processes(tmp_path, ["--dsn", postgres_db], **env) as running,
        receiving(hold=hold) as receiver,
        PostgresCheckpointer(postgres_db) as store,
    ):
        run_id = _killed_while_delivering(running, receiver, store)
        hold.set()
        running.worker(name="the-worker", extra=["--webhook-allow", "127.0.0.1"])
        _delivered_again(receiver, store, run_id, running)
