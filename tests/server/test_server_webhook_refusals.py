"""Webhooks are safe by default: a URL the server would not send to is refused, when the run is created and
again when the delivery is sent; a redirect is never followed.

Refused at creation (422 `{"detail": "webhook: ..."}`, nothing stored): another scheme, credentials in the
URL, a URL too long, spaces or non-ASCII, no host, a host that does not resolve, and every address that is
not public (private, loopback, link-local, shared, multicast, unspecified; also in IPv6, IPv4-mapped and
decimal forms) unless `webhooks.allow` names it; a server without a secret refuses every webhook. At
delivery, the host is resolved and each address checked again (a store's owed delivery to an address this
server does not allow is dropped, the receiver never called), and a receiver's redirect is not followed.
Real servers and receivers on loopback addresses; `langgraph-sdk` and raw HTTP.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from webhook_receiver import receiving, until

from actorgraph.checkpoint import SqliteCheckpointer
from actorgraph.server import Webhooks
from actorgraph.server._webhook_outbox import Outbox

pytestmark = pytest.mark.slow

SECRET = "the-webhook-secret-of-these-tests-0123456789"  # noqa: S105 - the tests' own


def owed(server: Any) -> int:
    return int(server.app.state.server.runner.webhooks.outbox.count())


REFUSED = [
    ("ftp://example.com/hook", "http or https"),
    ("/hooks/runs", "http or https"),
    ("javascript:alert(1)", "http or https"),
    ("http://user:secret@example.com/", "credentials"),
    ("http://10.1.2.3/hook", "private"),
    ("http://192.168.0.10:8080/hook", "private"),
    ("http://127.0.0.1:9/hook", "loopback"),
    ("http://localhost:9/hook", "loopback"),
    ("http://2130706433/hook", "loopback"),  # 127.0.0.1, written as a number
    ("http://[::1]:9/hook", "loopback"),
    ("http://169.254.169.254/latest/meta-data/", "link-local"),
    ("http://[fe80::1]/hook", "link-local"),
    ("http://[::ffff:10.0.0.1]/hook", "private"),
    ("http://[64:ff9b::a00:1]/hook", "private"),  # NAT64 of 10.0.0.1
    ("http://0.0.0.0/hook", "unspecified"),
    ("http://100.64.0.1/hook", "non-public"),
    ("http://224.0.0.1/hook", "multicast"),
    ("http://exa mple.com/hook", "spaces"),
    ("http://b\u00fccher.example/hook", "non-ASCII"),
    ("http://example.com:99999/hook", "cannot be read"),
    ("http://:80/hook", "no host"),
    ("http://host.invalid/hook", "does not resolve"),
]


@pytest.mark.parametrize(("url", "why"), REFUSED)
def test_a_webhook_the_server_would_not_send_to_is_refused_when_the_run_is_created(
    serve_with: Callable[..., Any], url: str, why: str
) -> None:
    server = serve_with(webhooks=Webhooks(secret=SECRET))
    thread = server.client().threads.create()["thread_id"]
    for path in (f"/threads/{thread}/runs/wait", f"/threads/{thread}/runs", "/runs/wait"):
        answer = httpx.post(
            server.url + path, json={"assistant_id": "counter", "input": {"n": 1}, "webhook": url}
        )
        assert answer.status_code == 422, answer.text
        detail = answer.json()["detail"]
        assert detail.startswith("webhook: "), detail
        assert why in detail, detail
    assert server.client().runs.list(thread) == []
    assert server.client().threads.get(thread)["status"] == "idle"


def test_a_url_too_long_is_refused_naming_the_field(serve_with: Callable[..., Any]) -> None:
    server = serve_with(webhooks=Webhooks(secret=SECRET))
    url = "https://example.com/" + "a" * 2100
    answer = httpx.post(
        server.url + "/runs/wait", json={"assistant_id": "counter", "input": {"n": 1}, "webhook": url}
    )
    assert answer.status_code == 422
    assert "webhook" in answer.json()["detail"]


def test_a_server_without_a_secret_refuses_every_webhook(serve_with: Callable[..., Any]) -> None:
    server = serve_with()
    client = server.client()
    thread = client.threads.create()["thread_id"]
    with pytest.raises(httpx.HTTPStatusError) as refused:
        client.runs.wait(thread, "counter", input={"n": 1}, webhook="https://hooks.example.com/runs")
    assert refused.value.response.status_code == 422
    assert "--webhook-secret" in refused.value.response.json()["detail"]
    assert client.runs.wait(thread, "counter", input={"n": 1}) == {"n": 2}  # without one, runs go on


def test_an_allowed_name_is_sent_to_its_checked_address_with_its_own_host(
    serve_with: Callable[..., Any],
) -> None:
    server = serve_with(webhooks=Webhooks(secret=SECRET, allow=["localhost"], first_retry=0.05))
    client = server.client()
    with receiving() as receiver:
        url = receiver.url.replace("127.0.0.1", "localhost")
        client.runs.wait(None, "counter", input={"n": 1}, webhook=url)
        until(receiver.received, "no delivery")
        until(lambda: owed(server) == 0, "still owed")
        got = receiver.received()
    assert len(got) == 1
    assert got[0].headers["host"] == f"localhost:{receiver.port}"


def test_a_redirect_is_not_followed(serve_with: Callable[..., Any]) -> None:
    hooks = Webhooks(secret=SECRET, allow=["127.0.0.1/32"], first_retry=0.05, retry_for=1.0)
    server = serve_with(webhooks=hooks)
    with receiving(host="127.0.0.2") as elsewhere:  # loopback, but not the address allowed
        moved = [(302, {"location": elsewhere.url}), (307, {"location": "http://10.0.0.1/hook"})]
        with receiving(moved, then=301) as receiver:
            receiver.answers.append((301, {"location": elsewhere.url}))
            server.client().runs.wait(None, "counter", input={"n": 1}, webhook=receiver.url)
            until(lambda: len(receiver.received()) >= 2, "the receiver was not tried again")
            until(lambda: owed(server) == 0, "the delivery was not given up")
        assert elsewhere.received() == []


def test_an_owed_delivery_is_checked_again_when_it_is_sent(
    serve_with: Callable[..., Any], tmp_path: Any, caplog: pytest.LogCaptureFixture
) -> None:
    """A delivery another server owed (it allowed loopback) is dropped by a server that does not."""
    db = str(tmp_path / "server.db")
    with receiving() as receiver:
        with SqliteCheckpointer(db) as store:
            outbox = Outbox(store)
            body = {"run_id": "r-1", "status": "success"}
            store._write("owing", lambda conn: outbox.owe_in(conn, "r-1", "t-1", receiver.url, body))
        caplog.set_level(logging.WARNING, logger="actorgraph.server")
        server = serve_with(db=db, webhooks=Webhooks(secret=SECRET))  # public addresses only
        until(lambda: owed(server) == 0, "the delivery was not dropped")
        assert receiver.received() == []
    assert any("loopback" in record.getMessage() for record in caplog.records)


def test_a_damaged_outbox_row_is_dropped_and_the_others_delivered(
    serve_with: Callable[..., Any], tmp_path: Any
) -> None:
    db = str(tmp_path / "server.db")
    with receiving() as receiver:
        with SqliteCheckpointer(db) as store:
            outbox = Outbox(store)
            store._write("owing", lambda conn: outbox.owe_in(conn, "good", "t-1", receiver.url, {"ok": 1}))
            store._write(
                "damaging",
                lambda conn: conn.execute(
                    "INSERT INTO actorgraph_server_webhooks VALUES ('bad', 't-1', 'http://x/', X'00ff',"
                    " 'many', 0, 0, NULL, NULL, NULL)"
                ),
            )
        server = serve_with(db=db, webhooks=Webhooks(secret=SECRET, allow=["127.0.0.1"]))
        until(lambda: owed(server) == 0, "a row is still owed")
        got = receiver.received()
    assert [d.headers["webhook-id"] for d in got] == ["good"]
