"""Users who own their threads, tested as an attacker through `langgraph-sdk`, on SQLite and PostgreSQL.

Alice has threads (one done, one paused with a question, one with a run going
on), runs and store items; Bob, with his own token, tries every route on
them: read, list, search by id and by metadata, stream, join, resume, update,
cancel, copy, delete. Every attempt is refused as if her things did not exist
(404, or nothing in his lists), and afterwards everything of hers is as it
was. The same `auth.py` handlers run on LangGraph's own `langgraph_sdk.Auth`
and on actorgraph's `actorgraph.server.Auth`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest
import server_auth
import server_graphs
from server_auth import bearer
from server_serving import served

pytestmark = pytest.mark.slow  # each test starts a server (uvicorn, the graphs compiled)

HI = {"messages": [{"role": "user", "content": "hi"}]}


@pytest.fixture(params=["langgraph_sdk", "actorgraph"])
def auth_class(request: pytest.FixtureRequest) -> Any:
    """LangGraph's `Auth`, as an `auth.py` for its server imports it, or actorgraph's."""
    if request.param == "langgraph_sdk":
        from langgraph_sdk import Auth

        return Auth
    from actorgraph.server import Auth

    return Auth


@pytest.fixture
def owned(store_options: dict[str, Any], auth_class: Any) -> Iterator[Any]:
    """A server whose users own their threads, on each store, with each `Auth`."""
    with served(server_graphs.graphs(), auth=server_auth.owners(auth_class), **store_options) as server:
        yield server


def refused(call: Callable[[], Any], status: int = 404) -> str:
    """Assert that `call` is answered `status`; its detail."""

    def consumed() -> None:
        result = call()
        if isinstance(result, Iterator):  # a stream: the answer comes as it is read
            list(result)

    with pytest.raises(httpx.HTTPStatusError) as answered:
        consumed()
    assert answered.value.response.status_code == status, answered.value.response.text
    detail: str = answered.value.response.json()["detail"]
    assert "Traceback" not in detail
    return detail


def alices_things(alice: Any) -> dict[str, str]:
    """Alice's threads (done, paused, busy), runs and store item."""
    done = alice.threads.create(metadata={"topic": "hers"})["thread_id"]
    alice.runs.wait(done, "counter", input={"n": 1})
    asked = alice.threads.create()["thread_id"]
    alice.runs.wait(asked, "chat", input=HI)
    busy = alice.threads.create()["thread_id"]
    busy_run = alice.runs.create(busy, "slow", input={"sleep": 2})["run_id"]
    alice.store.put_item(["notes"], "k", {"text": "alice's"})
    return {
        "done": done,
        "done_run": alice.runs.list(done)[0]["run_id"],
        "checkpoint": alice.threads.get_state(done)["checkpoint"]["checkpoint_id"],
        "asked": asked,
        "busy": busy,
        "busy_run": busy_run,
    }


def as_seen(alice: Any, things: dict[str, str]) -> Any:
    """What Alice sees of her threads and runs (their times and values), to compare before and after."""
    threads = [alice.threads.get(things[name]) for name in ("done", "asked")]
    return (
        threads,
        [alice.threads.get_history(things[name]) for name in ("done", "asked")],
        [alice.runs.list(things[name]) for name in ("done", "asked")],
    )


def bobs_attempts(bob: Any, things: dict[str, str], mine: str) -> list[Callable[[], Any]]:
    """Every way Bob reaches for Alice's threads and runs by id."""
    done, run, asked, busy, busy_run = (things[k] for k in ("done", "done_run", "asked", "busy", "busy_run"))
    return [
        lambda: bob.threads.get(done),
        lambda: bob.threads.update(done, metadata={"owner": "bob"}),
        lambda: bob.threads.delete(done),
        lambda: bob.threads.copy(done),
        lambda: bob.threads.get_state(done),
        lambda: bob.threads.get_state(done, checkpoint_id=things["checkpoint"]),
        lambda: bob.threads.update_state(done, {"n": 100}),
        lambda: bob.threads.get_history(done),
        lambda: bob.runs.list(done),
        lambda: bob.runs.get(done, run),
        lambda: bob.runs.get(mine, run),  # his own thread, her run
        lambda: bob.runs.join(done, run),
        lambda: bob.runs.join_stream(busy, busy_run),
        lambda: bob.runs.cancel(busy, busy_run),
        lambda: bob.runs.cancel(busy, busy_run, action="rollback"),
        lambda: bob.runs.cancel(mine, busy_run),
        lambda: bob.runs.delete(done, run),
        lambda: bob.runs.wait(done, "counter", input={"n": 50}),
        lambda: bob.runs.stream(done, "counter", input={"n": 50}),
        lambda: bob.runs.create(done, "counter", input={"n": 50}),
        lambda: bob.runs.wait(done, "counter", input={"n": 50}, if_not_exists="create"),
        lambda: bob.runs.wait(asked, "chat", command={"resume": "yes, says bob"}),
        lambda: bob.runs.create(busy, "slow", input={}, multitask_strategy="interrupt"),
        lambda: bob.runs.create(busy, "slow", input={}, multitask_strategy="rollback"),
    ]


def test_bob_reaches_nothing_of_alices_and_changes_nothing(owned):
    alice, bob = owned.client(headers=bearer("alice")), owned.client(headers=bearer("bob"))
    things = alices_things(alice)
    before = as_seen(alice, things)
    mine = bob.threads.create()["thread_id"]
    bob.runs.wait(mine, "counter", input={"n": 1})

    for attempt in bobs_attempts(bob, things, mine):
        refused(attempt)
    for if_exists in ("raise", "do_nothing"):  # her id taken: a conflict, and nothing of hers in the answer
        assert "exists" in refused(
            lambda e=if_exists: bob.threads.create(thread_id=things["done"], if_exists=e), 409
        )

    hers = {things[k] for k in ("done", "asked", "busy")}
    assert {t["thread_id"] for t in bob.threads.search(limit=100)} == {mine}
    assert bob.threads.search(ids=sorted(hers)) == []
    assert bob.threads.search(metadata={"owner": "alice"}) == []
    assert bob.threads.search(metadata={"topic": "hers"}) == []
    assert bob.threads.search(status="interrupted") == []
    assert bob.threads.count() == 1

    assert bob.store.get_item(["notes"], "k") is None
    assert bob.store.search_items(["notes"])["items"] == []
    assert bob.store.search_items(["alice", "notes"])["items"] == []
    assert all(ns[0] == "bob" for ns in bob.store.list_namespaces()["namespaces"])
    bob.store.delete_item(["notes"], "k")
    bob.store.put_item(["notes"], "k", {"text": "bob's"})
    assert bob.store.get_item(["notes"], "k")["value"] == {"text": "bob's"}

    assert alice.runs.join(things["busy"], things["busy_run"])["slept"] is True  # not cancelled by Bob
    assert alice.runs.get(things["busy"], things["busy_run"])["status"] == "success"
    assert len(alice.runs.list(things["busy"])) == 1
    assert as_seen(alice, things) == before
    assert alice.store.get_item(["notes"], "k")["value"] == {"text": "alice's"}
    assert alice.threads.get(things["asked"])["status"] == "interrupted"
    alice.runs.wait(things["asked"], "chat", command={"resume": "yes"})
    assert alice.threads.get_state(things["asked"])["values"]["log"][-2:] == ["ask:yes", "finish"]


def test_what_a_user_makes_is_theirs_and_in_no_one_elses_lists(owned):
    alice, bob = owned.client(headers=bearer("alice")), owned.client(headers=bearer("bob"))
    made = alice.threads.create(metadata={"owner": "bob", "topic": "x"})  # the handler writes the owner
    assert made["metadata"] == {"owner": "alice", "topic": "x"}
    run = bob.runs.create(None, "counter", input={"n": 1}, on_completion="keep")  # a stateless run's thread
    assert bob.runs.join(run["thread_id"], run["run_id"]) == {"n": 2}
    assert bob.threads.get(run["thread_id"])["metadata"]["owner"] == "bob"
    assert bob.runs.get(run["thread_id"], run["run_id"])["metadata"]["owner"] == "bob"
    refused(lambda: alice.threads.get(run["thread_id"]))
    copied = alice.threads.copy(made["thread_id"])
    assert copied["metadata"]["owner"] == "alice"
    given = alice.threads.update(made["thread_id"], metadata={"owner": "bob"})  # a patch cannot give it away
    assert given["metadata"]["owner"] == "alice"
    refused(lambda: bob.threads.get(made["thread_id"]))
    assert {t["thread_id"] for t in alice.threads.search()} == {made["thread_id"], copied["thread_id"]}
    assert [t["thread_id"] for t in bob.threads.search()] == [run["thread_id"]]
    assert len(bob.assistants.search(limit=100)) == 7  # the system assistants are everyone's


def test_metadata_every_search_must_read_is_checked_where_it_enters(owned):
    alice = owned.client(headers=bearer("alice"))
    for make in (
        lambda: alice.threads.create(metadata={"note": "a\x00b"}),
        lambda: alice.runs.wait(None, "counter", input={"n": 1}, metadata={"tags": ["\x00"]}),
    ):
        assert "NUL" in refused(make, 422)
    thread = alice.threads.create()["thread_id"]
    assert "NUL" in refused(lambda: alice.threads.update(thread, metadata={"\x00": 1}), 422)
    assert [t["thread_id"] for t in alice.threads.search()] == [thread]  # searching still reads every row


def test_refusals_a_client_meets(owned, caplog):
    anonymous = owned.client()
    assert refused(anonymous.threads.search, 401) == "unknown token"
    assert refused(
        lambda: owned.client(headers={"Authorization": "Bearer forged"}).runs.wait(None, "counter"), 401
    )
    mallory = owned.client(headers=bearer("mallory"))
    with caplog.at_level(logging.INFO, logger="actorgraph.server"):
        thread = mallory.threads.create()["thread_id"]
    assert any(
        getattr(r, "user", None) == "mallory" and "by 'mallory'" in r.getMessage() for r in caplog.records
    )
    assert refused(lambda: mallory.threads.delete(thread), 403) == "mallory may not delete"
    with caplog.at_level(logging.ERROR, logger="actorgraph.server"):
        detail = refused(lambda: mallory.threads.update(thread, metadata={"x": 1}), 403)
    assert "its log says why" in detail
    assert "bug in the handler" not in detail
    assert any(r.exc_info and "bug in the handler" in str(r.exc_info[1]) for r in caplog.records)
    assert mallory.threads.get(thread)["metadata"] == {"owner": "mallory"}  # nothing was changed
    assert httpx.get(f"{owned.url}/ok").status_code == 200  # public


def test_bob_reaches_none_of_alices_crons_and_changes_nothing(owned):
    alice, bob = owned.client(headers=bearer("alice")), owned.client(headers=bearer("bob"))
    thread = alice.threads.create()["thread_id"]
    daily = alice.crons.create("counter", schedule="0 9 * * *", input={"n": 1}, metadata={"topic": "hers"})
    on_thread = alice.crons.create_for_thread(thread, "counter", schedule="0 10 * * *", input={"n": 1})
    assert daily["metadata"] == {"topic": "hers", "owner": "alice"}  # the handler wrote the owner
    assert daily["user_id"] == "alice"
    before = alice.crons.search(limit=100)
    ids = {daily["cron_id"], on_thread["cron_id"]}
    assert {c["cron_id"] for c in before} == ids

    for cron_id in sorted(ids):
        refused(lambda c=cron_id: bob.crons.update(c, schedule="* * * * *"))
        refused(lambda c=cron_id: bob.crons.update(c, enabled=False, metadata={"owner": "bob"}))
        refused(lambda c=cron_id: bob.crons.delete(c))
        refused(lambda c=cron_id: bob.http.get(f"/runs/crons/{c}"))
    refused(lambda: bob.crons.create_for_thread(thread, "counter", schedule="* * * * *"))  # her thread
    assert bob.crons.search(limit=100) == []
    assert bob.crons.search(metadata={"owner": "alice"}) == []
    assert bob.crons.search(thread_id=thread) == []
    assert bob.crons.count() == 0
    given = bob.crons.create("counter", schedule="0 8 * * *", metadata={"owner": "alice"})  # cannot give
    assert given["metadata"]["owner"] == "bob"
    assert [c["cron_id"] for c in bob.crons.search()] == [given["cron_id"]]

    assert alice.crons.search(limit=100) == before  # nothing of hers changed
    assert alice.crons.count() == 2
    alice.crons.delete(daily["cron_id"])
    assert [c["cron_id"] for c in alice.crons.search()] == [on_thread["cron_id"]]
