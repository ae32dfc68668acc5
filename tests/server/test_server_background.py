"""Background runs and the multitask strategies through `langgraph-sdk`, against real uvicorn servers.

A background run is pending (its thread busy) until a server takes it; join returns its result; a paused
one ends `success` with its thread `interrupted`. On a busy thread, `reject` is 409 and records nothing,
`enqueue` runs in order, `interrupt` ends the running run `interrupted` with its committed supersteps
kept, `rollback` deletes it and its checkpoints; cancel does the same to one run. A resumable stream is
joined after `Last-Event-ID`, from the server that runs it and from another one on the store;
`on_disconnect="cancel"` cancels a streamed run whose client left; `after_seconds` holds a run back.

One server per store for the module (SQLite, and PostgreSQL in the whole suite); each test has its threads.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import psycopg
import pykka
import pytest
import server_graphs
import server_queue_graphs
from pg_server import POSTGRES
from server_serving import Served as Running
from server_serving import served as serving

from actorgraph.checkpoint import PostgresCheckpointer, SqliteCheckpointer

pytestmark = pytest.mark.slow  # servers, and runs that take a while

WAIT = 30.0


def graphs() -> dict[str, Any]:
    return {**server_graphs.graphs(), "steps": server_queue_graphs.steps()}


@pytest.fixture(scope="module", params=["sqlite", POSTGRES])
def store(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[str, Any]]:
    """The store of the module's servers: a SQLite file, or a PostgreSQL database made for the module."""
    if request.param == "sqlite":
        yield {"db": str(tmp_path_factory.mktemp("store") / "server.db")}
        return
    admin_dsn, name = request.getfixturevalue("postgres_server").dsn(), f"test_{uuid.uuid4().hex}"
    with psycopg.connect(admin_dsn, autocommit=True) as admin:
        admin.execute(f"CREATE DATABASE {name}")
    yield {"dsn": request.getfixturevalue("postgres_server").dsn(name)}
    with psycopg.connect(admin_dsn, autocommit=True) as admin:
        admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


@pytest.fixture(autouse=True)
def no_leaks() -> None:
    """The module's server outlives each test: its actors are checked once it stopped (`server`)."""


@pytest.fixture(scope="module")
def server(store: dict[str, Any]) -> Iterator[Running]:
    with serving(graphs(), lease=5.0, **store) as running:
        yield running
    leftover = pykka.ActorRegistry.get_all()
    pykka.ActorRegistry.stop_all(block=True, timeout=5)
    assert not leftover, f"actors still running after the server stopped: {leftover}"


def until(found: Callable[[], Any], what: str) -> Any:
    deadline = time.monotonic() + WAIT
    while not (value := found()):
        assert time.monotonic() < deadline, what
        time.sleep(0.05)
    return value


def first_committed(client: Any, thread: str) -> None:
    """Wait until the `steps` run on `thread` committed its first superstep (its second now sleeps)."""
    until(lambda: client.threads.get_state(thread)["values"].get("log") == ["first"], "first not committed")


def test_a_background_run_is_pending_until_taken_and_join_returns_its_result(server: Running) -> None:
    client = server.client()
    thread = client.threads.create()["thread_id"]
    run = client.runs.create(thread, "slow", input={"sleep": 1})
    assert (run["status"], run["thread_id"], run["multitask_strategy"]) == ("pending", thread, "enqueue")
    assert client.threads.get(thread)["status"] == "busy"  # from the moment the run exists
    assert client.runs.join(thread, run["run_id"]) == {"sleep": 1, "slept": True}
    shown = client.runs.get(thread, run["run_id"])
    assert (shown["status"], shown["kwargs"]["input"]) == ("success", {"sleep": 1})
    assert [r["run_id"] for r in client.runs.list(thread, status="success")] == [run["run_id"]]
    assert client.threads.get(thread)["status"] == "idle"


def test_a_paused_background_run_succeeds_and_leaves_its_thread_interrupted(server: Running) -> None:
    client = server.client()
    thread = client.threads.create()["thread_id"]
    run = client.runs.create(thread, "chat", input={"messages": [{"role": "user", "content": "hi"}]})
    assert client.runs.join(thread, run["run_id"])["log"] == ["greet"]
    assert client.runs.get(thread, run["run_id"])["status"] == "success"
    assert client.threads.get(thread)["status"] == "interrupted"


def test_enqueue_runs_a_threads_runs_in_order(server: Running) -> None:
    client = server.client()
    thread = client.threads.create()["thread_id"]
    runs = [client.runs.create(thread, "steps", input={"sleep": 0.3, "log": [], "tag": i}) for i in range(3)]
    listed = client.runs.list(thread)
    assert [r["run_id"] for r in listed] == [r["run_id"] for r in reversed(runs)]
    assert [r["status"] for r in listed][:2] == ["pending", "pending"]
    for run in runs:
        client.runs.join(thread, run["run_id"])
    assert [r["status"] for r in client.runs.list(thread)] == ["success"] * 3
    tags = [s["values"]["tag"] for s in reversed(client.threads.get_history(thread, limit=100))]
    assert list(dict.fromkeys(tags)) == [0, 1, 2]  # each run began after the one before it ended
    assert client.threads.get(thread)["status"] == "idle"


def test_reject_on_a_busy_thread_is_409_and_records_nothing(server: Running) -> None:
    client = server.client()
    thread = client.threads.create()["thread_id"]
    first = client.runs.create(thread, "slow", input={"sleep": 1})
    with pytest.raises(httpx.HTTPStatusError) as refused:
        client.runs.create(thread, "counter", input={"n": 1}, multitask_strategy="reject")
    assert refused.value.response.status_code == 409
    assert [r["run_id"] for r in client.runs.list(thread)] == [first["run_id"]]
    client.runs.join(thread, first["run_id"])


def test_interrupt_ends_the_running_run_keeping_its_commits_and_starts_the_new_one(server: Running) -> None:
    client = server.client()
    thread = client.threads.create()["thread_id"]
    old = client.runs.create(thread, "steps", input={"sleep": 30, "log": []})
    first_committed(client, thread)
    new = client.runs.create(
        thread, "steps", input={"sleep": 0, "log": ["new"]}, multitask_strategy="interrupt"
    )
    assert client.runs.join(thread, new["run_id"])["log"] == ["new", "first", "second"]
    assert client.runs.get(thread, old["run_id"])["status"] == "interrupted"
    kept = [s["values"]["log"] for s in client.threads.get_history(thread, limit=100)]
    assert ["first"] in kept  # the old run's committed superstep stays in the history
    assert client.threads.get(thread)["status"] == "idle"


def test_rollback_deletes_the_running_run_and_every_checkpoint_it_wrote(server: Running) -> None:
    client = server.client()
    thread = client.threads.create()["thread_id"]
    client.runs.wait(thread, "steps", input={"sleep": 0, "log": ["before"]})
    before = client.threads.get_history(thread, limit=100)
    old = client.runs.create(thread, "steps", input={"sleep": 30, "log": []})
    until(lambda: client.threads.get_state(thread)["values"]["log"] == ["first"], "first not committed")
    new = client.runs.create(thread, "counter", input={"n": 1}, multitask_strategy="rollback")
    client.runs.join(thread, new["run_id"])
    with pytest.raises(httpx.HTTPStatusError) as gone:
        client.runs.get(thread, old["run_id"])
    assert gone.value.response.status_code == 404
    after = client.threads.get_history(thread, limit=100)
    ids = [s["checkpoint"]["checkpoint_id"] for s in after]
    assert ids[-len(before) :] == [s["checkpoint"]["checkpoint_id"] for s in before]  # what was there stays
    added = after[: -len(before)]  # the new run's checkpoints only: the old run's are gone
    assert added
    assert all(s["values"]["n"] == 1 or s["values"]["n"] == 2 for s in added)


def test_cancel_with_interrupt_leaves_the_thread_interrupted_and_resumable(server: Running) -> None:
    client = server.client()
    thread = client.threads.create()["thread_id"]
    run = client.runs.create(thread, "steps", input={"sleep": 30, "log": []})
    first_committed(client, thread)
    client.runs.cancel(thread, run["run_id"], wait=True, action="interrupt")
    assert client.runs.get(thread, run["run_id"])["status"] == "interrupted"
    assert client.threads.get(thread)["status"] == "interrupted"
    client.threads.update_state(thread, {"sleep": 0})
    assert client.runs.wait(thread, "steps", input=None)["log"] == ["first", "second"]


def test_cancel_with_rollback_deletes_the_run_and_its_checkpoints(server: Running) -> None:
    client = server.client()
    thread = client.threads.create()["thread_id"]
    done = client.runs.wait(thread, "steps", input={"sleep": 0, "log": []})
    run = client.runs.create(thread, "steps", input={"sleep": 30, "log": ["again"]})
    until(lambda: client.threads.get_state(thread)["values"]["log"] == ["again", "first"], "not committed")
    client.runs.cancel(thread, run["run_id"], wait=True, action="rollback")
    assert [r["run_id"] for r in client.runs.list(thread)] != [run["run_id"]]
    assert client.threads.get_state(thread)["values"] == done
    assert client.threads.get(thread)["status"] == "idle"


def test_a_resumable_stream_is_joined_after_its_last_event_id_here_and_on_another_server(
    server: Running, store: dict[str, Any]
) -> None:
    client = server.client()
    thread = client.threads.create()["thread_id"]
    stream = client.runs.stream(
        thread,
        "steps",
        input={"sleep": 1, "log": []},
        stream_mode=["values", "updates"],
        stream_resumable=True,
    )
    seen = [next(stream), next(stream), next(stream)]
    stream.close()  # the client leaves; the run goes on (on_disconnect="continue")
    run_id, last = seen[0].data["run_id"], seen[-1].id
    assert [p.id for p in seen] == ["0", "1", "2"]
    here = list(client.runs.join_stream(thread, run_id, last_event_id=last))
    with serving(graphs(), **store) as other:
        there = list(other.client().runs.join_stream(thread, run_id, last_event_id=last))
        whole = list(other.client().runs.join_stream(thread, run_id))
    assert [int(p.id) for p in here] == list(range(int(last) + 1, int(last) + 1 + len(here)))
    assert [(p.event, p.data) for p in there] == [(p.event, p.data) for p in here]
    assert [(p.event, p.data) for p in whole] == [(p.event, p.data) for p in seen + here]
    assert [p.data for p in whole if p.event == "values"][-1]["log"] == ["first", "second"]
    assert client.runs.get(thread, run_id)["status"] == "success"


def test_a_background_run_joined_while_queued_or_just_after_it_ended_streams_from_its_start(
    server: Running,
) -> None:
    client = server.client()
    thread = client.threads.create()["thread_id"]
    held = client.runs.create(thread, "steps", input={"sleep": 0, "log": []}, after_seconds=1)
    queued = list(
        client.runs.join_stream(thread, held["run_id"], stream_mode="values")
    )  # joined while queued
    quick = client.runs.create(thread, "steps", input={"sleep": 0, "log": ["again"]})
    until(lambda: client.runs.get(thread, quick["run_id"])["status"] == "success", "the run did not end")
    late = list(client.runs.join_stream(thread, quick["run_id"], stream_mode="values"))  # after its end
    for parts, run_id, log in (
        (queued, held, ["first", "second"]),
        (late, quick, ["again", "first", "second"]),
    ):
        assert parts[0].event == "metadata" and parts[0].data["run_id"] == run_id["run_id"]
        assert [p.data["log"] for p in parts if p.event == "values"][-1] == log


def test_on_disconnect_cancel_cancels_a_streamed_run_whose_client_left(server: Running) -> None:
    client = server.client()
    thread = client.threads.create()["thread_id"]
    stream = client.runs.stream(thread, "steps", input={"sleep": 30, "log": []}, on_disconnect="cancel")
    run_id = next(stream).data["run_id"]
    first_committed(client, thread)
    stream.close()
    until(lambda: client.runs.get(thread, run_id)["status"] == "interrupted", "the run was not cancelled")
    assert client.threads.get(thread)["status"] == "interrupted"


def test_after_seconds_holds_a_run_back_with_its_thread_busy(server: Running) -> None:
    client = server.client()
    thread = client.threads.create()["thread_id"]
    run = client.runs.create(thread, "counter", input={"n": 1}, after_seconds=2)
    assert run["status"] == "pending"
    assert client.threads.get(thread)["status"] == "busy"  # pending included
    assert client.runs.join(thread, run["run_id"]) == {"n": 2}
    ended = client.runs.get(thread, run["run_id"])
    started, finished = (
        time.mktime(time.strptime(ended[k][:19], "%Y-%m-%dT%H:%M:%S")) for k in ("created_at", "updated_at")
    )
    assert finished - started >= 1  # taken no sooner than it was due (whole seconds: the times are ISO)


def test_a_run_is_deleted_once_it_ended_and_not_before(server: Running) -> None:
    client = server.client()
    thread = client.threads.create()["thread_id"]
    run = client.runs.create(thread, "slow", input={"sleep": 1})
    with pytest.raises(httpx.HTTPStatusError) as busy:
        client.runs.delete(thread, run["run_id"])
    assert busy.value.response.status_code == 409
    client.runs.join(thread, run["run_id"])
    client.runs.delete(thread, run["run_id"])
    assert client.runs.list(thread) == []


def test_a_stateless_background_run_kept_or_deleted_on_completion(server: Running) -> None:
    client = server.client()
    kept = client.runs.create(None, "counter", input={"n": 1}, on_completion="keep")
    assert client.runs.join(kept["thread_id"], kept["run_id"]) == {"n": 2}
    gone = client.runs.create(None, "counter", input={"n": 1})
    until(lambda: _missing(client, gone["thread_id"]), "the stateless run's thread was not deleted")


def _missing(client: Any, thread: str) -> bool:
    try:
        client.threads.get(thread)
    except httpx.HTTPStatusError as exc:
        return exc.response.status_code == 404
    return False


def test_hostile_run_requests_are_refused_plainly(server: Running) -> None:
    client = server.client()
    thread = client.threads.create()["thread_id"]
    other = client.threads.create()["thread_id"]
    run = client.runs.create(thread, "counter", input={"n": 1})
    client.runs.join(thread, run["run_id"])
    base = f"{server.url}/threads/{thread}/runs"
    bad_action = httpx.post(f"{base}/{run['run_id']}/cancel?action=explode", timeout=WAIT)
    assert (bad_action.status_code, "action" in bad_action.json()["detail"]) == (422, True)
    early = httpx.post(base, json={"assistant_id": "counter", "after_seconds": -1}, timeout=WAIT)
    assert early.status_code == 422
    assert "after_seconds" in early.json()["detail"]
    assert httpx.get(f"{server.url}/threads/{other}/runs/{run['run_id']}", timeout=WAIT).status_code == 404
    with httpx.stream(
        "GET", f"{base}/{run['run_id']}/stream", headers={"last-event-id": "x" * 500}, timeout=WAIT
    ) as joined:
        assert joined.status_code == 200  # an id that is no number: nothing to resume after: from the start
        assert joined.read().startswith(b"event: metadata\r\n")  # the run ended just now: its parts stay
    assert [r["run_id"] for r in client.runs.list(thread)] == [run["run_id"]]


def test_a_run_whose_stored_request_is_damaged_fails_alone(server: Running, store: dict[str, Any]) -> None:
    client = server.client()
    thread = client.threads.create()["thread_id"]
    run = client.runs.create(thread, "counter", input={"n": 1}, after_seconds=1)
    opened = PostgresCheckpointer(store["dsn"]) if "dsn" in store else SqliteCheckpointer(store["db"])
    with opened as checkpointer:
        m = checkpointer.dialect.mark
        checkpointer._transaction(
            "damaging",
            lambda conn: conn.execute(
                f"UPDATE actorgraph_queue SET payload = {m} WHERE run_id = {m}",  # noqa: S608
                (b"\x00\xff", run["run_id"]),
            ),
        )
    client.runs.join(thread, run["run_id"])
    assert client.runs.get(thread, run["run_id"])["status"] == "error"
    shown = client.threads.get(thread)
    assert shown["status"] == "error"
    assert "cannot be started" in shown["error"]["message"]
    assert client.runs.wait(thread, "counter", input={"n": 1}) == {
        "n": 2
    }  # the thread, and the server, go on


@pytest.mark.parametrize("strategy", ["interrupt", "rollback"])
def test_a_run_going_on_in_another_server_is_stopped_by_a_new_run_here(
    server: Running, store: dict[str, Any], strategy: str
) -> None:
    """The running run's server reads the cancel from the store (two apps share nothing else)."""
    client = server.client()
    thread = client.threads.create()["thread_id"]
    stream = client.runs.stream(thread, "steps", input={"sleep": 30, "log": []})
    old = next(stream).data["run_id"]  # this server runs it
    first_committed(client, thread)
    with serving(graphs(), **store) as other:
        new = other.client().runs.create(
            thread, "steps", input={"sleep": 0, "log": ["new"]}, multitask_strategy=strategy
        )
        assert other.client().runs.join(thread, new["run_id"])["log"] == ["new", "first", "second"]
    assert [p.event for p in stream][-1] != "error"  # the old run's stream ended when it stopped
    if strategy == "interrupt":
        assert client.runs.get(thread, old)["status"] == "interrupted"
        assert ["first"] in [s["values"]["log"] for s in client.threads.get_history(thread, limit=100)]
    else:
        assert [r["run_id"] for r in client.runs.list(thread)] == [new["run_id"]]
        assert ["first"] not in [s["values"]["log"] for s in client.threads.get_history(thread, limit=100)]
    assert client.threads.get(thread)["status"] == "idle"
