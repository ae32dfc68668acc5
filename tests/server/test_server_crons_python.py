"""`actorgraph.server.Crons`: a server's crons from Python, on SQLite and PostgreSQL, with the route's checks.

A cron added from Python is the row the routes write: `langgraph-sdk` lists it,
and a server of the store fires it.
"""

from __future__ import annotations

import datetime as dt
import time
from pathlib import Path
from typing import Any

import pytest
from pg_server import POSTGRES

from actorgraph import ConfigError
from actorgraph.checkpoint import MemoryCheckpointer, SqliteCheckpointer
from actorgraph.server import Cron, Crons
from actorgraph.server._graphs import assistant_uuid
from actorgraph.server._tables import Tables


@pytest.fixture(params=["sqlite", POSTGRES])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> dict[str, Any]:
    if request.param == "postgres":
        return {"dsn": request.getfixturevalue("postgres_db")}
    return {"db": str(tmp_path / "server.db")}


def test_add_list_get_update_delete(store):
    with Crons(**store) as crons:
        daily = crons.add("agent", "0 9 * * *", input={"topic": "news"}, timezone="Europe/Paris")
        assert isinstance(daily, Cron)
        assert (daily.graph, daily.assistant_id, daily.thread_id) == ("agent", assistant_uuid("agent"), None)
        assert (daily.on_run_completed, daily.enabled, daily.timezone) == ("delete", True, "Europe/Paris")
        assert daily.payload == {"input": {"topic": "news"}, "multitask_strategy": "enqueue"}
        assert daily.next_run_at is not None and daily.next_run_at > time.time()
        kept = crons.add(
            "other", "@hourly", metadata={"owner": "ada"}, on_run_completed="keep", enabled=False
        )
        assert [c.cron_id for c in crons.list()] == [kept.cron_id, daily.cron_id]  # newest first
        assert [c.cron_id for c in crons.list(graph="agent")] == [daily.cron_id]
        assert [c.cron_id for c in crons.list(graph=assistant_uuid("other"))] == [kept.cron_id]
        assert [c.cron_id for c in crons.list(enabled=False)] == [kept.cron_id]
        assert crons.get(daily.cron_id) == daily
        end = dt.datetime.now(dt.UTC) + dt.timedelta(days=1)
        changed = crons.update(daily.cron_id, schedule="30 10 * * *", end_time=end, metadata={"k": 1})
        assert changed is not None
        assert (changed.schedule, changed.metadata) == ("30 10 * * *", {"k": 1})
        assert changed.end_time == pytest.approx(end.timestamp())
        assert crons.get(daily.cron_id) == changed
        assert crons.update("no-such-cron", enabled=True) is None
        assert crons.delete(kept.cron_id) is True
        assert crons.delete(kept.cron_id) is False
        assert [c.cron_id for c in crons.list()] == [daily.cron_id]


def test_a_cron_on_a_thread_needs_the_thread(store):
    with Crons(**store) as crons:
        with pytest.raises(ConfigError, match="thread_id: thread 'notes-1' not found"):
            crons.add("agent", "@daily", thread_id="notes-1")
        Tables(crons._store).put_thread("notes-1", {}, if_exists="raise")
        cron = crons.add("agent", "@daily", thread_id="notes-1", multitask_strategy="reject")
        assert (cron.thread_id, cron.on_run_completed, cron.payload["multitask_strategy"]) == (
            "notes-1",
            None,
            "reject",
        )
        with pytest.raises(ConfigError, match="on_run_completed"):
            crons.add("agent", "@daily", thread_id="notes-1", on_run_completed="keep")


@pytest.mark.parametrize(
    ("call", "words"),
    [
        (lambda c: c.add("agent", "not a schedule"), "schedule:"),
        (lambda c: c.add("agent", "* * * * *", timezone="Nowhere/Land"), "timezone:"),
        (lambda c: c.add("agent", "* * * * *", end_time=dt.datetime(2001, 1, 1)), "end_time:"),  # noqa: DTZ001 - UTC
        (lambda c: c.add("agent", "* * * * *", webhook="ftp://x"), "webhook:"),
        (lambda c: c.add("agent", "* * * * *", multitask_strategy="later"), "multitask_strategy"),
        (lambda c: c.add("agent", "* * * * *", sheduel="typo"), "sheduel: not a field"),
        (lambda c: c.add("", "* * * * *"), "assistant_id"),
        (lambda c: c.add("agent", "* * * * *", input={"x": "y" * (1024 * 1024)}), "input:"),
        (lambda c: c.update("any", enabled="sometimes"), "enabled"),
    ],
)
def test_a_bad_cron_is_a_config_error_naming_the_field(tmp_path, call, words):
    with Crons(db=str(tmp_path / "s.db")) as crons:
        with pytest.raises(ConfigError, match=words):
            call(crons)
        assert crons.list() == []


def test_a_store_that_keeps_no_sql_or_two_stores_are_refused(tmp_path):
    with pytest.raises(ConfigError, match="SQL database"):
        Crons(checkpointer=MemoryCheckpointer())
    with pytest.raises(ConfigError, match="db and dsn"):
        Crons(db=str(tmp_path / "a.db"), dsn="postgresql://nowhere")
    mine = SqliteCheckpointer(str(tmp_path / "mine.db"))
    with Crons(checkpointer=mine) as crons:
        crons.add("agent", "@daily")
    assert len(Crons(checkpointer=mine).list()) == 1  # the caller's store stays open
    mine.close()


@pytest.mark.slow
def test_a_server_fires_a_cron_added_from_python(tmp_path, serve_with):
    db = str(tmp_path / "server.db")
    server = serve_with(db=db)
    client = server.client()
    thread = client.threads.create()["thread_id"]
    with Crons(db=db) as crons:
        cron = crons.add("counter", "* * * * * *", thread_id=thread, input={"n": 41})
    assert [c["cron_id"] for c in client.crons.search()] == [cron.cron_id]
    deadline = time.monotonic() + 30
    while client.threads.get_state(thread)["values"] != {"n": 42}:
        assert time.monotonic() < deadline, "the cron added from Python did not fire"
        time.sleep(0.1)
