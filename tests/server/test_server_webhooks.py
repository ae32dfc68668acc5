"""Webhooks: a run that ends is POSTed, signed, to its `webhook`, at least once, off the run's path.

Real servers (uvicorn on loopback, `create_app` with a secret), `langgraph-sdk`'s
`runs.create`, `runs.wait` and `runs.stream` with `webhook=`, and real receivers
(`tests/webhook_receiver.py`, an `http.server` on a loopback address the test
allows explicitly). Signatures are checked with the docs' own `verify`
(examples/webhook_verify.py). Each test waits (bounded) until the server's
outbox is empty, then counts what each receiver got.
"""

from __future__ import annotations

import importlib.util
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
import server_graphs
import server_queue_graphs
from webhook_receiver import Receiver, receiving, until

from actorgraph.checkpoint import SqliteCheckpointer
from actorgraph.checkpoint._queue import NewRun, run_queue
from actorgraph.checkpoint._queue_runs import ask_cancel, insert_run, lock_thread
from actorgraph.server import Webhooks
from actorgraph.server._queued import RunSpec, encode

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]

SECRET = "the-webhook-secret-of-these-tests-0123456789"  # noqa: S105 - the tests' own
_spec = importlib.util.spec_from_file_location(
    "webhook_verify", Path(__file__).resolve().parents[2] / "examples" / "webhook_verify.py"
)
assert _spec is not None and _spec.loader is not None
docs_verify = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(docs_verify)


def hooks(**options: Any) -> Webhooks:
    options.setdefault("allow", ["127.0.0.1"])
    options.setdefault("first_retry", 0.05)
    return Webhooks(secret=SECRET, **options)


def owed(server: Any) -> int:
    return int(server.app.state.server.runner.webhooks.outbox.count())


def settled(server: Any) -> None:
    until(lambda: owed(server) == 0, "a webhook is still owed")


@pytest.fixture
def hooked(serve_with: Callable[..., Any], store_options: dict[str, Any]) -> Any:
    """A server of the test graphs (and `steps`) that sends webhooks to 127.0.0.1, on each store."""
    graphs = {**server_graphs.graphs(), "steps": server_queue_graphs.steps()}
    return serve_with(graphs, webhooks=hooks(), **store_options)


def _signed(receiver: Receiver) -> None:
    for delivery in receiver.received():
        assert docs_verify.verify(SECRET, delivery.headers, delivery.body), delivery.headers
        assert delivery.headers["content-type"] == "application/json"
        assert delivery.path == "/hooks/runs?team=a"


def test_each_run_is_posted_once_signed_whether_created_waited_or_streamed(hooked: Any) -> None:
    client = hooked.client()
    with receiving() as receiver:
        thread = client.threads.create(metadata={"team": "a"})["thread_id"]
        waited = client.runs.wait(thread, "counter", input={"n": 1}, webhook=receiver.url, metadata={"m": 1})
        assert waited == {"n": 2}
        parts = list(client.runs.stream(thread, "counter", input={"n": 5}, webhook=receiver.url))
        assert parts[-1].data == {"n": 6}
        created = client.runs.create(thread, "counter", input={"n": 10}, webhook=receiver.url)
        client.runs.join(thread, created["run_id"])
        stateless = client.runs.wait(None, "counter", input={"n": 20}, webhook=receiver.url)
        assert stateless == {"n": 21}
        until(lambda: len(receiver.received()) == 4, "four runs, four deliveries")
        settled(hooked)
        runs = receiver.by_run()
        _signed(receiver)
    assert len(runs) == 4
    assert all(len(deliveries) == 1 for deliveries in runs.values())
    listed = {run["run_id"]: run for run in client.runs.list(thread)}
    for run_id, run in listed.items():
        sent = httpx.Response(200, content=runs[run_id][0].body).json()
        assert sent["run_id"] == run_id
        assert sent["thread_id"] == thread
        assert sent["assistant_id"] == run["assistant_id"]
        assert sent["status"] == "success"
        assert sent["created_at"] == run["created_at"]
        assert sent["kwargs"]["webhook"] == receiver.url == run["kwargs"]["webhook"]
        assert sent["metadata"]["graph_id"] == "counter"
        assert {
            "run_started_at",
            "run_ended_at",
            "updated_at",
            "webhook_sent_at",
            "multitask_strategy",
        } <= set(sent)
        assert "error" not in sent
    values = sorted(httpx.Response(200, content=d[0].body).json()["values"]["n"] for d in runs.values())
    assert values == [2, 6, 11, 21]


def _sent(receiver: Receiver) -> dict[str, Any]:
    until(receiver.received, "no delivery")
    return dict(httpx.Response(200, content=receiver.received()[-1].body).json())


def test_a_failed_run_sends_its_error_and_a_paused_one_success(hooked: Any) -> None:
    client = hooked.client()
    thread = client.threads.create()["thread_id"]
    with receiving() as receiver:
        client.runs.wait(thread, "failing", input={"n": 1}, webhook=receiver.url, raise_error=False)
        failed = _sent(receiver)
    assert failed["status"] == "error"
    assert failed["error"] == {"error": "ValueError", "message": "boom!"}
    paused_thread = client.threads.create()["thread_id"]
    with receiving() as receiver:
        client.runs.wait(paused_thread, "chat", input={"messages": []}, webhook=receiver.url)
        paused = _sent(receiver)
    assert paused["status"] == "success"  # as LangGraph's server: the run succeeded, the thread waits
    assert client.threads.get(paused_thread)["status"] == "interrupted"
    assert paused["values"]["log"] == ["greet"]


@pytest.mark.parametrize(("action", "status"), [("interrupt", "interrupted"), ("rollback", "rollback")])
def test_a_cancelled_run_sends_how_it_was_cancelled(hooked: Any, action: str, status: str) -> None:
    client = hooked.client()
    thread = client.threads.create()["thread_id"]
    with receiving() as receiver:
        run = client.runs.create(thread, "steps", input={"sleep": 30, "log": []}, webhook=receiver.url)
        until(lambda: client.runs.get(thread, run["run_id"])["status"] == "running", "the run did not start")
        client.runs.cancel(thread, run["run_id"], action=action)
        sent = _sent(receiver)
        settled(hooked)
        assert len(receiver.received()) == 1
    assert (sent["run_id"], sent["status"]) == (run["run_id"], status)


def test_a_receiver_that_fails_twice_is_sent_the_same_delivery_until_it_takes_it(hooked: Any) -> None:
    client = hooked.client()
    thread = client.threads.create()["thread_id"]
    with receiving([500, (503, {"retry-after": "0"})]) as receiver:
        assert client.runs.wait(thread, "counter", input={"n": 1}, webhook=receiver.url) == {"n": 2}
        until(lambda: len(receiver.received()) == 3, "three attempts")
        settled(hooked)
        deliveries = receiver.received()
        _signed(receiver)
    assert len({d.headers["webhook-id"] for d in deliveries}) == 1  # one idempotency key: the run
    bodies = [httpx.Response(200, content=d.body).json() for d in deliveries]
    same = [{k: v for k, v in body.items() if k != "webhook_sent_at"} for body in bodies]
    assert same == [same[0]] * 3  # the same Run each time; only when it was sent differs
    assert client.threads.get(thread)["status"] == "idle"


def test_a_receiver_that_never_answers_does_not_hold_the_run(serve_with: Callable[..., Any]) -> None:
    hold = threading.Event()
    server = serve_with(webhooks=hooks(timeout=30.0))
    with receiving(hold=hold) as receiver:
        client = server.client()
        thread = client.threads.create()["thread_id"]
        assert client.runs.wait(thread, "counter", input={"n": 1}, webhook=receiver.url) == {"n": 2}
        assert client.runs.wait(thread, "counter", input={"n": 3}) == {"n": 4}  # the thread is free
        assert receiver.arrived.wait(30)
        assert owed(server) == 1  # the delivery goes on, beside the runs
        hold.set()
        settled(server)


def test_a_failed_delivery_is_given_up_after_its_time_for_retries(serve_with: Callable[..., Any]) -> None:
    server = serve_with(webhooks=hooks(retry_for=0.5))
    with receiving(then=500) as receiver:
        client = server.client()
        thread = client.threads.create()["thread_id"]
        client.runs.wait(thread, "counter", input={"n": 1}, webhook=receiver.url)
        settled(server)
        tried = len(receiver.received())
    assert tried >= 2


@pytest.fixture
def sqlite_db(tmp_path: Path) -> str:
    return str(tmp_path / "server.db")


def test_two_servers_on_one_store_deliver_each_webhook_once(
    serve_with: Callable[..., Any], store_options: dict[str, Any]
) -> None:
    one, two = serve_with(webhooks=hooks(), **store_options), serve_with(webhooks=hooks(), **store_options)
    with receiving() as receiver:
        client = one.client()
        threads = [client.threads.create()["thread_id"] for _ in range(6)]
        for thread in threads:
            client.runs.create(thread, "counter", input={"n": 1}, webhook=receiver.url)
        until(lambda: len(receiver.by_run()) == len(threads), "every run delivered")
        settled(one)
        settled(two)
        assert [len(d) for d in receiver.by_run().values()] == [1] * len(threads)


def test_a_run_whose_server_died_after_a_cancel_sends_its_webhook_when_another_ends_it(
    serve_with: Callable[..., Any], tmp_path: Path
) -> None:
    """The run was running on a server that died before it read the cancel: the next claim ends it."""
    db = str(tmp_path / "server.db")
    server = serve_with(db=db, webhooks=hooks())
    client = server.client()
    thread = client.threads.create()["thread_id"]
    assistant = client.assistants.search(graph_id="counter")[0]["assistant_id"]
    with receiving() as receiver, SqliteCheckpointer(db) as store:
        body = {"assistant_id": "counter", "input": {"n": 1}, "webhook": receiver.url}
        payload = encode(store, thread, RunSpec("counter", assistant, body))

        def died(conn: Any) -> None:
            lock_thread(store, conn, thread)
            new = NewRun(
                thread, payload, graph="counter", run_id="dead-run", holder="a-dead-server", lease=1.0
            )
            insert_run(store, conn, new, take_now=True, stamp=time.time() - 60)  # its lease ran out
            ask_cancel(store, conn, "dead-run", "interrupt", time.time())

        run_queue(store).transaction("a run whose server died", died)
        server.app.state.server.taker.wake()
        sent = _sent(receiver)
        settled(server)
    assert (sent["run_id"], sent["status"], sent["values"]) == ("dead-run", "interrupted", None)
    assert client.runs.get(thread, "dead-run")["status"] == "interrupted"
