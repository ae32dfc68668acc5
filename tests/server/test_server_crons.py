"""Crons through `langgraph-sdk`'s `client.crons`, against a real server on SQLite and PostgreSQL.

Every route: create (on a thread, and stateless), search (by assistant, thread,
enabled and metadata; sorted, paged, selected), count, get, update, delete; and
what the ticks do: one run each, carrying the cron's metadata, webhook and id,
on the cron's thread (after a busy thread's runs with `enqueue`, not at all with
`reject`) or on a new thread deleted or kept as `on_run_completed` says.
Every-second schedules (a sixth field, seconds, as LangGraph's server reads it)
keep each test within a few seconds of real time; every wait is bounded.
"""

from __future__ import annotations

import datetime as dt
import time
import uuid
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from actorgraph.server._cron_specs import tick_run_id
from actorgraph.server._graphs import assistant_uuid
from actorgraph.server._queued import decode

pytestmark = pytest.mark.slow  # each test starts a server, and waits for ticks

WAIT = 30.0
EVERY_SECOND = "* * * * * *"
CRON_KEYS = {
    "cron_id", "assistant_id", "thread_id", "on_run_completed", "end_time", "schedule", "timezone",
    "created_at", "updated_at", "payload", "user_id", "next_run_date", "metadata", "enabled",
}  # fmt: skip  # langgraph_sdk.schema.Cron's keys


def until(found: Callable[[], Any], what: str) -> Any:
    deadline = time.monotonic() + WAIT
    while not (value := found()):
        assert time.monotonic() < deadline, what
        time.sleep(0.1)
    return value


def _ended(runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [run for run in runs if run["status"] == "success"]


def test_a_cron_on_a_thread_queues_one_run_per_tick(running):
    client = running.client()
    thread = client.threads.create()["thread_id"]
    cron = client.crons.create_for_thread(
        thread, "counter", schedule=EVERY_SECOND, input={"n": 1}, metadata={"owner": "ada"}
    )
    assert set(cron) == CRON_KEYS
    assert (cron["thread_id"], cron["assistant_id"], cron["enabled"]) == (
        thread,
        assistant_uuid("counter"),
        True,
    )
    assert cron["on_run_completed"] is None
    assert cron["payload"]["input"] == {"n": 1}
    first = dt.datetime.fromisoformat(cron["next_run_date"])
    assert first > dt.datetime.fromisoformat(cron["created_at"])
    runs = until(
        lambda: len(done := _ended(client.runs.list(thread, limit=100))) >= 2 and done, "no two runs"
    )
    ticks = {run["run_id"] for run in runs}
    assert len(ticks) == len(runs)  # one run per tick
    for run in runs:
        assert run["metadata"]["cron_id"] == cron["cron_id"]
        assert run["metadata"]["owner"] == "ada"
        assert run["kwargs"]["input"] == {"n": 1}
    # each run's id is the cron's and its tick's: a whole second at or after the first tick
    seconds = [first.timestamp() + k for k in range(120)]
    assert ticks <= {tick_run_id(cron["cron_id"], s) for s in seconds}
    assert client.threads.get_state(thread)["values"] == {"n": 2}
    later = client.http.get(f"/runs/crons/{cron['cron_id']}")
    assert dt.datetime.fromisoformat(later["next_run_date"]) > first


def test_a_cron_without_a_thread_runs_on_new_threads_deleted_or_kept(running):
    client = running.client()
    tag = uuid.uuid4().hex
    kept = client.crons.create(
        "counter", schedule=EVERY_SECOND, input={"n": 5}, metadata={"tag": tag}, on_run_completed="keep"
    )
    assert (kept["thread_id"], kept["on_run_completed"]) == (None, "keep")
    threads = until(
        lambda: len(t := client.threads.search(metadata={"tag": tag})) >= 2 and t, "no kept threads"
    )
    assert all(t["metadata"]["tag"] == tag for t in threads)  # each new thread carries the cron's metadata
    until(
        lambda: any(t["values"] == {"n": 6} for t in client.threads.search(metadata={"tag": tag})), "no run"
    )
    client.crons.delete(kept["cron_id"])

    other = uuid.uuid4().hex
    dropped = client.crons.create("counter", schedule=EVERY_SECOND, input={"n": 5}, metadata={"tag": other})
    assert dropped["on_run_completed"] == "delete"
    start = dropped["next_run_date"]
    until(lambda: client.http.get(f"/runs/crons/{dropped['cron_id']}")["next_run_date"] > start, "no tick")
    time.sleep(1.5)
    client.crons.update(dropped["cron_id"], enabled=False)
    until(lambda: client.threads.search(metadata={"tag": other}) == [], "a stateless run's thread stayed")


def test_search_count_get_update_and_delete(running):
    client = running.client()
    thread = client.threads.create()["thread_id"]
    on_thread = client.crons.create_for_thread(
        thread, "counter", schedule="0 9 * * *", timezone="Europe/Paris", metadata={"owner": "ada", "n": 1}
    )
    daily = client.crons.create(
        "chat", schedule="@daily", metadata={"owner": "bob", "team": {"b": 1, "a": 2}}
    )
    off = client.crons.create("counter", schedule="*/5 * * * *", enabled=False, metadata={"owner": "ada"})
    ids = {c["cron_id"] for c in (on_thread, daily, off)}
    assert {c["cron_id"] for c in client.crons.search(limit=100)} == ids
    assert client.crons.count() == 3
    assert [c["cron_id"] for c in client.crons.search(thread_id=thread)] == [on_thread["cron_id"]]
    assert client.crons.count(thread_id=thread) == 1
    by_name = {c["cron_id"] for c in client.crons.search(assistant_id="counter")}
    assert by_name == {c["cron_id"] for c in client.crons.search(assistant_id=assistant_uuid("counter"))}
    assert by_name == {on_thread["cron_id"], off["cron_id"]}
    assert client.crons.count(assistant_id="chat") == 1
    assert [c["cron_id"] for c in client.crons.search(enabled=False)] == [off["cron_id"]]
    assert {c["cron_id"] for c in client.crons.search(metadata={"owner": "ada"})} == by_name
    assert client.crons.count(metadata={"owner": "ada", "n": 1}) == 1
    assert client.crons.count(metadata={"team": {"a": 2, "b": 1}}) == 1  # a nested value, keys in any order
    assert client.crons.count(metadata={"owner": "nobody"}) == 0
    page = client.crons.search(limit=2, offset=1, sort_by="created_at", sort_order="asc")
    assert [c["cron_id"] for c in page] == [daily["cron_id"], off["cron_id"]]
    soonest = client.crons.search(sort_by="next_run_date", sort_order="asc", select=["cron_id", "schedule"])
    assert all(set(c) == {"cron_id", "schedule"} for c in soonest)
    raw = httpx.post(f"{running.url}/runs/crons/search", json={"limit": 1}, timeout=WAIT)
    assert raw.headers["x-pagination-total"] == "3"

    got = client.http.get(f"/runs/crons/{on_thread['cron_id']}")
    assert got == on_thread
    assert got["timezone"] == "Europe/Paris"
    assert got["next_run_date"].endswith(("T07:00:00+00:00", "T08:00:00+00:00"))  # 9:00 in Paris

    end = dt.datetime.now(dt.UTC) + dt.timedelta(days=30)
    changed = client.crons.update(
        on_thread["cron_id"], schedule="30 10 * * *", metadata={"n": 2}, end_time=end, input={"x": 1}
    )
    assert changed["schedule"] == "30 10 * * *"
    assert changed["metadata"] == {"owner": "ada", "n": 2}  # merged
    assert changed["payload"]["input"] == {"x": 1}
    assert abs(dt.datetime.fromisoformat(changed["end_time"]).timestamp() - end.timestamp()) < 0.001
    assert changed["next_run_date"] != on_thread["next_run_date"]
    cleared = client.crons.update(on_thread["cron_id"], end_time=None)
    assert cleared["end_time"] is None
    enabled = client.crons.update(off["cron_id"], enabled=True)
    assert enabled["enabled"] is True
    assert dt.datetime.fromisoformat(enabled["next_run_date"]) > dt.datetime.now(dt.UTC)

    client.crons.delete(daily["cron_id"])
    with pytest.raises(httpx.HTTPStatusError) as missing:
        client.http.get(f"/runs/crons/{daily['cron_id']}")
    assert missing.value.response.status_code == 404
    with pytest.raises(httpx.HTTPStatusError) as again:
        client.crons.delete(daily["cron_id"])
    assert again.value.response.status_code == 404
    assert client.crons.count() == 2


def test_a_cron_on_a_busy_thread_follows_its_multitask_strategy(running):
    client = running.client()
    queued, refused = client.threads.create()["thread_id"], client.threads.create()["thread_id"]
    for thread in (queued, refused):
        client.runs.create(thread, "slow", input={"sleep": 4})
    waits = client.crons.create_for_thread(queued, "slow", schedule=EVERY_SECOND, input={"sleep": 0})
    rejects = client.crons.create_for_thread(
        refused, "slow", schedule=EVERY_SECOND, input={"sleep": 0}, multitask_strategy="reject"
    )
    until(lambda: len(client.runs.list(queued)) >= 2, "no run queued behind the busy thread's run")
    pending = [r for r in client.runs.list(queued) if r["metadata"].get("cron_id") == waits["cron_id"]]
    assert pending and all(r["status"] in ("pending", "success") for r in pending)
    time.sleep(1.5)  # ticks pass on the busy thread
    runs = client.runs.list(refused)
    client.crons.delete(rejects["cron_id"])
    (busy,) = (r for r in runs if "cron_id" not in r["metadata"])
    ticks = [r for r in runs if "cron_id" in r["metadata"]]
    if busy["status"] in ("pending", "running"):
        assert ticks == []  # every tick while the thread was busy was passed
    else:  # a slow machine: the thread was free again; a tick's run may only come after
        assert all(r["created_at"] >= busy["updated_at"] for r in ticks)
    client.crons.delete(waits["cron_id"])
    until(
        lambda: all(r["status"] == "success" for r in client.runs.list(queued, limit=100)), "runs did not end"
    )


def test_a_cron_carries_its_webhook_in_each_runs_request(running):
    client = running.client()
    thread = client.threads.create()["thread_id"]
    hook = "https://hooks.example.com/done?x=1"
    cron = client.crons.create_for_thread(
        thread, "counter", schedule=EVERY_SECOND, input={"n": 1}, webhook=hook
    )
    assert cron["payload"]["webhook"] == hook
    run = until(lambda: client.runs.list(thread), "no run")[0]
    server = running.app.state.server
    row = server.runs.queue.run(run["run_id"])
    assert decode(server.checkpointer, row).body["webhook"] == hook  # where a run's own webhook is kept
    client.crons.delete(cron["cron_id"])


def test_deleting_a_thread_deletes_its_crons(running):
    client = running.client()
    thread = client.threads.create()["thread_id"]
    client.crons.create_for_thread(thread, "counter", schedule="@hourly")
    other = client.crons.create("counter", schedule="@hourly")
    client.threads.delete(thread)
    assert [c["cron_id"] for c in client.crons.search()] == [other["cron_id"]]


def test_the_server_says_it_serves_crons(running):
    info = httpx.get(f"{running.url}/info", timeout=WAIT).json()
    assert info["flags"]["crons"] is True
    paths = httpx.get(f"{running.url}/openapi.json", timeout=WAIT).json()["paths"]
    assert {
        "/runs/crons",
        "/threads/{thread_id}/runs/crons",
        "/runs/crons/search",
        "/runs/crons/count",
    } <= set(paths)
    assert set(paths["/runs/crons/{cron_id}"]) == {"get", "patch", "delete"}
    assert "requestBody" in paths["/runs/crons"]["post"]
