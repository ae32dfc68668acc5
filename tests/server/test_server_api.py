"""Assistants, threads, their state and history, and the memory store, through `langgraph-sdk`."""

from __future__ import annotations

import httpx
import pytest

pytestmark = pytest.mark.slow  # each test starts a server (uvicorn, the graphs compiled)


def test_one_system_assistant_per_graph_found_by_id_or_name(running):
    client = running.client()
    found = {a["graph_id"]: a for a in client.assistants.search(limit=100)}
    assert set(found) == {"chat", "counter", "failing", "nested", "slow", "compiled", "doubled"}
    chat = found["chat"]
    assert client.assistants.get(chat["assistant_id"]) == chat
    assert client.assistants.get("chat") == chat
    assert client.assistants.search(graph_id="counter")[0]["graph_id"] == "counter"
    graph = client.assistants.get_graph("chat")
    assert {n["id"] for n in graph["nodes"]} == {"__start__", "greet", "ask", "finish", "__end__"}
    assert {"source": "greet", "target": "ask", "conditional": False} in graph["edges"]
    schemas = client.assistants.get_schemas("chat")
    assert set(schemas["state_schema"]["properties"]) == {"messages", "n", "log"}
    with pytest.raises(httpx.HTTPStatusError) as missing:
        client.assistants.get("nope")
    assert missing.value.response.status_code == 404


def test_assistant_ids_are_stable_and_those_langgraph_gives(sqlite_server):
    from actorgraph.server._graphs import assistant_uuid

    assert (
        assistant_uuid("echo") == "046b5dc7-2108-582c-9c6c-31d556d138f0"
    )  # LangGraph's server's id for "echo"
    assert sqlite_server.client().assistants.get("counter")["assistant_id"] == assistant_uuid("counter")


def test_threads_are_created_got_searched_patched_copied_and_deleted(running):
    client = running.client()
    made = client.threads.create(thread_id="t-1", metadata={"user": "ada"})
    assert made["thread_id"] == "t-1"
    assert made["status"] == "idle"
    assert made["values"] is None
    with pytest.raises(httpx.HTTPStatusError) as exists:
        client.threads.create(thread_id="t-1")
    assert exists.value.response.status_code == 409
    assert client.threads.create(thread_id="t-1", if_exists="do_nothing")["metadata"] == {"user": "ada"}
    client.threads.create(thread_id="t-2", metadata={"user": "bob"})
    client.runs.wait("t-2", "counter", input={"n": 1})
    assert [t["thread_id"] for t in client.threads.search(metadata={"user": "ada"})] == ["t-1"]
    assert [t["thread_id"] for t in client.threads.search(values={"n": 2})] == ["t-2"]
    assert {t["thread_id"] for t in client.threads.search(status="idle")} == {"t-1", "t-2"}
    assert len(client.threads.search(limit=1)) == 1
    assert client.threads.count() == 2
    patched = client.threads.update("t-1", metadata={"topic": "x"})
    assert patched["metadata"] == {"user": "ada", "topic": "x"}
    copied = client.threads.copy("t-2")
    assert client.threads.get(copied["thread_id"])["values"] == {"n": 2}
    client.threads.delete("t-2")
    with pytest.raises(httpx.HTTPStatusError) as gone:
        client.threads.get("t-2")
    assert gone.value.response.status_code == 404


def test_state_is_read_changed_as_a_vertex_and_read_at_a_checkpoint(running):
    client = running.client()
    thread = client.threads.create()["thread_id"]
    client.runs.wait(thread, "counter", input={"n": 1})
    state = client.threads.get_state(thread)
    assert state["values"] == {"n": 2}
    assert state["next"] == []
    first = state["checkpoint"]["checkpoint_id"]
    changed = client.threads.update_state(thread, {"n": 10}, as_node="increment")
    assert changed["checkpoint"]["checkpoint_id"] != first
    assert client.threads.get_state(thread)["values"] == {"n": 10}
    assert client.threads.get_state(thread, checkpoint_id=first)["values"] == {"n": 2}
    assert client.threads.get_state(thread, checkpoint={"checkpoint_id": first})["values"] == {"n": 2}


def test_a_paused_thread_is_answered_after_its_state_is_read(sqlite_server):
    client = sqlite_server.client()
    thread = client.threads.create()["thread_id"]
    client.runs.wait(thread, "chat", input={"messages": [{"type": "human", "content": "hi"}], "n": 1})
    state = client.threads.get_state(thread)
    assert state["next"] == ["ask"]
    assert state["tasks"][0]["interrupts"][0]["value"] == {"question": "go on?"}
    assert state["interrupts"] == state["tasks"][0]["interrupts"]
    assert client.runs.wait(thread, "chat", command={"resume": "ok"})["n"] == 20


def test_history_is_newest_first_with_limit_and_before(running):
    client = running.client()
    thread = client.threads.create()["thread_id"]
    client.runs.wait(thread, "counter", input={"n": 1})
    client.runs.wait(thread, "counter", input={"n": 5})
    history = client.threads.get_history(thread, limit=10)
    steps = [(h["metadata"]["step"], h["values"]) for h in history]
    assert steps[0][1] == {"n": 6}
    assert [h["created_at"] for h in history] == sorted((h["created_at"] for h in history), reverse=True)
    assert len(client.threads.get_history(thread, limit=2)) == 2
    older = client.threads.get_history(thread, before=history[0]["checkpoint"]["checkpoint_id"])
    assert older == history[1:]
    loops = client.threads.get_history(thread, metadata={"source": "loop"})
    assert {h["metadata"]["source"] for h in loops} == {"loop"}


def test_the_store_routes(running):
    client = running.client()
    client.store.put_item(["users", "ada"], "prefs", {"theme": "dark", "rank": 2})
    client.store.put_item(["users", "bob"], "prefs", {"theme": "light", "rank": 5})
    item = client.store.get_item(["users", "ada"], "prefs")
    assert (item["namespace"], item["key"], item["value"]) == (
        ["users", "ada"],
        "prefs",
        {"theme": "dark", "rank": 2},
    )
    assert client.store.get_item(["users", "ada"], "missing") is None
    found = client.store.search_items(["users"], filter={"rank": {"$gte": 3}})
    assert [i["namespace"] for i in found["items"]] == [["users", "bob"]]
    assert client.store.list_namespaces(prefix=["users"])["namespaces"] == [
        ["users", "ada"],
        ["users", "bob"],
    ]
    client.store.delete_item(["users", "ada"], "prefs")
    assert client.store.get_item(["users", "ada"], "prefs") is None


def test_health_info_openapi_and_docs(sqlite_server):
    assert httpx.get(f"{sqlite_server.url}/ok").json() == {"ok": True}
    assert httpx.get(f"{sqlite_server.url}/info").json()["server"] == "actorgraph"
    document = httpx.get(f"{sqlite_server.url}/openapi.json").json()
    assert "/threads/{thread_id}/runs/stream" in document["paths"]
    assert "RunCreate" in document["components"]["schemas"]
    page = httpx.get(f"{sqlite_server.url}/docs")
    assert page.status_code == 200
    assert "openapi.json" in page.text
