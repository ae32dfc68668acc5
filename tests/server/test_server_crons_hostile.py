"""Hostile cron requests and rows: each request a 4xx `{"detail": ...}` naming the field, nothing stored;
a damaged row left out of searches and stopped by the scheduler, never a 500 or a stuck server.
"""

from __future__ import annotations

import json
import sqlite3
import time
import uuid

import pytest
from web_http import Http

from actorgraph.server import Limits

pytestmark = pytest.mark.slow  # each test starts a server (uvicorn, the graphs compiled)

JSON = "application/json"


def send(http: Http, method: str, path: str, body: object) -> tuple[int, str]:
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    reply = http.request(method, path, data, content_type=JSON)
    detail = json.loads(reply.body).get("detail", "") if reply.body else ""
    return reply.status, detail


BAD_CREATES = [
    ({"schedule": "bad"}, 422, "schedule"),
    ({"schedule": "60 * * * *"}, 422, "schedule"),
    ({"schedule": "* * * * * * * *"}, 422, "schedule"),
    ({"schedule": "@reboot"}, 422, "schedule"),
    ({"schedule": "H * * * *"}, 422, "schedule"),
    ({"schedule": "0 0 30 2 *"}, 422, "never fires"),
    ({"schedule": "* * * * * * 1999"}, 422, "schedule"),
    ({"schedule": "\uff11 * * * *"}, 422, "schedule"),  # a full-width digit one
    ({"schedule": "* * * * *\n* * * * *"}, 422, "schedule"),
    ({"schedule": "1," * 300 + "1 * * * *"}, 422, "schedule"),
    ({"schedule": ""}, 422, "schedule"),
    ({"schedule": 5}, 422, "schedule"),
    ({"schedule": "* * * * *", "timezone": "Mars/Base"}, 422, "timezone"),
    ({"schedule": "* * * * *", "timezone": "../../etc/passwd"}, 422, "timezone"),
    ({"schedule": "* * * * *", "timezone": "America"}, 422, "timezone"),
    ({"schedule": "* * * * *", "timezone": "UTC+02:00"}, 422, "timezone"),
    ({"schedule": "* * * * *", "timezone": "x" * 500}, 422, "timezone"),
    ({"schedule": "* * * * *", "end_time": "yesterday"}, 422, "end_time"),
    ({"schedule": "* * * * *", "end_time": "2001-01-01T00:00:00Z"}, 422, "end_time"),
    ({"schedule": "* * * * *", "end_time": "10000-01-01T00:00:00"}, 422, "end_time"),
    (
        {"schedule": "0 0 1 1 *", "end_time": "2099-01-01T00:00:01Z", "timezone": "Pacific/Kiritimati"},
        200,
        "",
    ),
    ({"schedule": "@yearly", "end_time": (time.strftime("%Y") + "-12-31T23:59:58Z")}, 422, "end_time"),
    ({"schedule": "* * * * *", "enabled": "sometimes"}, 422, "enabled"),
    ({"schedule": "* * * * *", "webhook": "file:///etc/passwd"}, 422, "webhook"),
    ({"schedule": "* * * * *", "webhook": ""}, 422, "webhook"),
    ({"schedule": "* * * * *", "multitask_strategy": "whatever"}, 422, "multitask_strategy"),
    ({"schedule": "* * * * *", "on_run_completed": "burn"}, 422, "on_run_completed"),
    ({"schedule": "* * * * *", "interrupt_before": ["nowhere"]}, 422, "interrupt_before"),
    ({"schedule": "* * * * *", "stream_mode": "everything"}, 422, "stream_mode"),
    ({"schedule": "* * * * *", "input": {"x": "y" * (1024 * 1024 + 10)}}, 422, "input"),
    ({"schedule": "* * * * *", "metadata": {"x": "y" * (1024 * 1024 + 10)}}, 422, "metadata"),
    ({"schedule": "* * * * *", "metadata": "owner"}, 422, "metadata"),
    ({}, 422, "assistant_id"),
]


@pytest.mark.parametrize(("fields", "status", "words"), BAD_CREATES)
def test_a_bad_cron_is_refused_naming_the_field(sqlite_server, fields, status, words):
    body = {"assistant_id": "counter", **fields} if fields else {"schedule": "* * * * *"}
    code, detail = send(sqlite_server.http, "POST", "/runs/crons", body)
    assert (code, words in detail) == (status, True), detail
    assert sqlite_server.client().crons.count() == (1 if status == 200 else 0)


def test_bad_routes_bodies_and_ids(serve_with):
    server = serve_with(limits=Limits(body=64 * 1024))
    http, client = server.http, server.client()
    thread = client.threads.create()["thread_id"]
    cron = client.crons.create_for_thread(thread, "counter", schedule="@hourly")["cron_id"]
    daily = {"assistant_id": "counter", "schedule": "@daily"}
    cases = [
        ("POST", "/runs/crons", b"{not json", 400, "not JSON"),
        ("POST", "/runs/crons", b"", 422, "JSON body"),
        ("POST", "/runs/crons", {**daily, "input": "x" * 70_000}, 413, ""),
        ("POST", "/runs/crons", {**daily, "assistant_id": "nobody"}, 404, "nobody"),
        ("POST", f"/threads/{uuid.uuid4()}/runs/crons", daily, 404, ""),
        ("POST", "/threads/a%7Cb/runs/crons", daily, 422, "thread_id"),
        (
            "POST",
            f"/threads/{thread}/runs/crons",
            {**daily, "on_run_completed": "keep"},
            422,
            "on_run_completed",
        ),
        ("GET", f"/runs/crons/{uuid.uuid4()}", b"", 404, "not found"),
        ("GET", "/runs/crons/" + "x" * 300, b"", 422, "cron_id"),
        ("DELETE", "/runs/crons/a%20b", b"", 422, "cron_id"),
        ("PATCH", f"/runs/crons/{uuid.uuid4()}", {"enabled": False}, 404, "not found"),
        ("PATCH", f"/runs/crons/{cron}", {}, 422, "changes nothing"),
        ("PATCH", f"/runs/crons/{cron}", {"schedule": "61 * * * *"}, 422, "schedule"),
        ("PATCH", f"/runs/crons/{cron}", {"timezone": "Nowhere/Land"}, 422, "timezone"),
        ("PATCH", f"/runs/crons/{cron}", {"end_time": "1999-01-01T00:00:00Z"}, 422, "end_time"),
        ("PATCH", f"/runs/crons/{cron}", {"on_run_completed": "keep"}, 422, "on_run_completed"),
        ("PATCH", f"/runs/crons/{cron}", {"interrupt_after": ["nowhere"]}, 422, "interrupt_after"),
        ("POST", "/runs/crons/search", {"sort_by": "schedule"}, 422, "sort_by"),
        ("POST", "/runs/crons/search", {"select": ["password"]}, 422, "select"),
        ("POST", "/runs/crons/search", {"limit": 0}, 422, "limit"),
        ("POST", "/runs/crons/search", {"thread_id": "a b"}, 422, "thread_id"),
        ("POST", "/runs/crons/count", {"metadata": ["x"]}, 422, "metadata"),
        ("POST", "/runs/crons/search", {"metadata": {str(k): k for k in range(101)}}, 422, "metadata"),
    ]
    for method, path, body, status, words in cases:
        code, detail = send(http, method, path, body)
        assert (method, path, code, words in detail) == (method, path, status, True), detail
    stored = client.http.get(f"/runs/crons/{cron}")
    assert (stored["schedule"], stored["timezone"], stored["end_time"]) == ("@hourly", None, None)
    assert client.crons.count() == 1


def test_a_metadata_search_with_odd_keys_matches_only_what_it_names(sqlite_server):
    client = sqlite_server.client()
    odd = {"a.b": 1, '"q"': "x", "$.path": True, "ü": None, "n": 1.5, "l": [1, {"z": 0, "y": 1}]}
    client.crons.create("counter", schedule="@daily", metadata=odd)
    client.crons.create("counter", schedule="@daily", metadata={"a": {"b": 1}, "n": 2})
    for key, value in odd.items():
        assert client.crons.count(metadata={key: value}) == 1, key
    assert client.crons.count(metadata={"l": [1, {"y": 1, "z": 0}]}) == 1
    assert client.crons.count(metadata={"a.b": 2}) == 0
    assert client.crons.count(metadata={"ü": False}) == 0
    assert client.crons.count(metadata={"n": "1.5"}) == 0
    assert client.crons.count(metadata={"' OR 1=1 --": 1}) == 0


def test_damaged_rows_are_left_out_and_stopped_never_a_500(tmp_path, serve_with):
    db = tmp_path / "server.db"
    server = serve_with(db=str(db))
    client = server.client()
    good = client.crons.create(
        "counter", schedule="* * * * * *", on_run_completed="keep", metadata={"k": "good"}
    )
    bad_ids = [client.crons.create("counter", schedule="@hourly")["cron_id"] for _ in range(3)]
    with sqlite3.connect(db) as conn:
        conn.execute(
            "UPDATE actorgraph_crons SET metadata = 'not json', next_run_at = 0 WHERE cron_id = ?",
            (bad_ids[0],),
        )
        conn.execute(
            "UPDATE actorgraph_crons SET schedule = 'garbage', next_run_at = 0 WHERE cron_id = ?",
            (bad_ids[1],),
        )
        conn.execute(
            "UPDATE actorgraph_crons SET payload = x'00ff', next_run_at = 0 WHERE cron_id = ?", (bad_ids[2],)
        )
    listed = {c["cron_id"] for c in client.crons.search(limit=100)}
    assert bad_ids[0] not in listed and good["cron_id"] in listed
    assert client.crons.count(metadata={"k": "good"}) == 1
    code, _ = send(server.http, "GET", f"/runs/crons/{bad_ids[0]}", b"")
    assert code == 404

    def looked_at() -> dict[str, float | None]:
        with sqlite3.connect(db) as conn:
            return dict(conn.execute("SELECT cron_id, next_run_at FROM actorgraph_crons").fetchall())

    until = time.monotonic() + 30
    while any(looked_at()[bad] == 0 for bad in bad_ids):  # each damaged row was due at once
        assert time.monotonic() < until, "the scheduler did not get past the damaged rows"
        time.sleep(0.1)
    stopped = looked_at()
    assert stopped[bad_ids[0]] is None  # unreadable: stopped
    assert stopped[bad_ids[1]] is None  # a schedule with no next tick: stopped after its one tick
    assert stopped[bad_ids[2]] > time.time() - 5  # a run it cannot read: the tick passed, the cron goes on
    before = len(client.threads.search(metadata={"k": "good"}, limit=100))
    while (
        len(client.threads.search(metadata={"k": "good"}, limit=100)) <= before
    ):  # and the good one fires on
        assert time.monotonic() < until, "the scheduler stopped at a damaged row"
        time.sleep(0.1)
    assert client.crons.delete(bad_ids[0]) is None  # and it can still be deleted
