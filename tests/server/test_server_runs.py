"""Runs driven by `langgraph-sdk` over HTTP: every stream mode, pauses and answers, waits, errors."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

import actorgraph as ag
from actorgraph.func import entrypoint, task

pytestmark = pytest.mark.slow  # each test starts a server (uvicorn, the graphs compiled)

HI = {"messages": [{"role": "user", "content": "hi"}], "n": 1}


def parts(client: Any, thread_id: str | None, assistant: str, **options: Any) -> list[tuple[str, Any]]:
    return [(p.event, p.data) for p in client.runs.stream(thread_id, assistant, **options)]


def named(found: list[tuple[str, Any]], event: str) -> list[Any]:
    return [data for name, data in found if name == event]


def test_a_stream_starts_with_metadata_and_names_its_run(running):
    client = running.client()
    thread = client.threads.create()
    created = []
    found = [
        (p.event, p.data)
        for p in client.runs.stream(
            thread["thread_id"], "counter", input={"n": 1}, on_run_created=created.append
        )
    ]
    assert found[0][0] == "metadata"
    assert set(found[0][1]) == {"run_id", "attempt"}
    assert created == [{"run_id": found[0][1]["run_id"], "thread_id": thread["thread_id"]}]
    assert named(found, "values") == [{"n": 1}, {"n": 2}]
    run = client.runs.get(thread["thread_id"], found[0][1]["run_id"])
    assert run["status"] == "success"
    assert client.threads.get(thread["thread_id"])["status"] == "idle"


def test_updates_are_what_each_vertex_changed_even_when_it_returns_the_whole_state(sqlite_server):
    client = sqlite_server.client()
    thread = client.threads.create()["thread_id"]
    found = parts(client, thread, "counter", input={"n": 1, "other": "kept"}, stream_mode="updates")
    assert named(found, "updates") == [{"increment": {"n": 2}}]


def test_a_pause_shows_in_values_and_updates_and_an_answer_continues_it(running):
    client = running.client()
    thread = client.threads.create()["thread_id"]
    found = parts(client, thread, "chat", input=HI, stream_mode=["values", "updates"])
    updates = named(found, "updates")
    assert updates[0]["greet"]["log"] == ["greet"]
    assert [m["type"] for m in updates[0]["greet"]["messages"]] == ["ai"]
    question = updates[-1]["__interrupt__"]
    assert [q["value"] for q in question] == [{"question": "go on?"}]
    assert named(found, "values")[-1]["__interrupt__"] == question
    shown = client.threads.get(thread)
    assert shown["status"] == "interrupted"
    assert shown["interrupts"] == {"ask": [{"id": question[0]["id"], "value": {"question": "go on?"}}]}
    assert client.runs.list(thread)[0]["status"] == "success"
    resumed = parts(client, thread, "chat", command={"resume": "yes"}, stream_mode="values")
    final = named(resumed, "values")[-1]
    assert final["log"] == ["greet", "ask:yes", "finish"]
    assert final["n"] == 20
    assert client.threads.get(thread)["status"] == "idle"


def test_an_answer_by_interrupt_id(sqlite_server):
    client = sqlite_server.client()
    thread = client.threads.create()["thread_id"]
    paused = client.runs.wait(thread, "chat", input=HI)
    asked = paused["__interrupt__"][0]["id"]
    done = client.runs.wait(thread, "chat", command={"resume": {asked: "by id"}})
    assert done["log"] == ["greet", "ask:by id", "finish"]
    assert "__interrupt__" not in done


def test_a_breakpoint_pauses_with_an_empty_interrupt_and_input_none_goes_on(sqlite_server):
    client = sqlite_server.client()
    thread = client.threads.create()["thread_id"]
    found = parts(
        client,
        thread,
        "counter",
        input={"n": 1},
        stream_mode=["values", "updates"],
        interrupt_before=["increment"],
    )
    assert named(found, "updates") == [{"__interrupt__": []}]
    assert named(found, "values") == [{"n": 1}]
    assert client.threads.get(thread)["status"] == "interrupted"
    assert named(parts(client, thread, "counter", input=None), "values")[-1] == {"n": 2}


def test_messages_are_langchain_dicts_and_stream_as_tuples_naming_their_vertex(running):
    client = running.client()
    thread = client.threads.create()["thread_id"]
    found = parts(client, thread, "chat", input=HI, stream_mode="messages-tuple")
    pieces = named(found, "messages")
    streamed = [(m["content"], meta["langgraph_node"]) for m, meta in pieces if m["id"] == "streamed"]
    assert streamed == [("hel", "greet"), ("lo", "greet")]
    returned = [m for m, _ in pieces if m["id"] != "streamed"]
    assert [(m["type"], m["content"]) for m in returned] == [("ai", "hello")]
    values = client.threads.get_state(thread)["values"]["messages"]
    assert [(m["type"], m["content"]) for m in values] == [("human", "hi"), ("ai", "hello")]
    assert all(m["id"] for m in values)


def test_custom_tasks_checkpoints_and_debug_modes(sqlite_server):
    client = sqlite_server.client()
    thread = client.threads.create()["thread_id"]
    found = parts(client, thread, "chat", input=HI, stream_mode=["custom", "tasks", "checkpoints", "debug"])
    assert named(found, "custom") == [{"progress": 1}]
    tasks = named(found, "tasks")
    assert [t["name"] for t in tasks if "input" in t] == ["greet", "ask"]
    ended = [t for t in tasks if "result" in t]
    assert ended[-1]["interrupts"][0]["value"] == {"question": "go on?"}
    checkpoints = named(found, "checkpoints")
    assert checkpoints[-1]["next"] == ["ask"]
    head = client.threads.get_state(thread)["checkpoint"]["checkpoint_id"]
    assert checkpoints[-1]["config"]["configurable"]["checkpoint_id"] == head
    kinds = {d["type"] for d in named(found, "debug")}
    assert kinds == {"task", "task_result", "checkpoint"}


def test_events_and_legacy_messages_modes(sqlite_server):
    client = sqlite_server.client()
    thread = client.threads.create()["thread_id"]
    found = parts(client, thread, "chat", input=HI, stream_mode=["events", "messages"])
    kinds = [e["event"] for e in named(found, "events")]
    assert kinds[0] == "on_chain_start"
    assert "on_chat_model_stream" in kinds
    assert "on_custom_event" in kinds
    partial = named(found, "messages/partial")
    assert partial[-1][0]["content"] == "hello"
    assert named(found, "messages/complete")[0][0]["content"] == "hello"


def test_subgraph_parts_are_named_with_their_namespace(sqlite_server):
    client = sqlite_server.client()
    thread = client.threads.create()["thread_id"]
    found = parts(client, thread, "nested", input={"n": 1}, stream_mode="updates", stream_subgraphs=True)
    names = [name for name, _ in found]
    inner = [name for name in names if name.startswith("updates|")]
    assert inner
    assert inner[0].split("|")[1].startswith("inner:")
    assert ("updates", {"inner": {"n": 2}}) in found
    plain = parts(client, thread, "nested", input={"n": 1}, stream_mode="updates")
    assert all("|" not in name for name, _ in plain)


def test_a_failed_run_ends_with_an_error_event(running):
    client = running.client()
    thread = client.threads.create()["thread_id"]
    found = parts(client, thread, "failing", input={"n": 1})
    assert found[-1] == ("error", {"error": "ValueError", "message": "boom!"})
    assert client.threads.get(thread)["status"] == "error"
    assert client.runs.list(thread)[0]["status"] == "error"
    with pytest.raises(Exception, match="ValueError: boom!"):
        client.runs.wait(thread, "failing", input={"n": 1})


def test_stateless_runs_leave_no_thread(sqlite_server):
    client = sqlite_server.client()
    assert client.runs.wait(None, "counter", input={"n": 41}) == {"n": 42}
    assert named(parts(client, None, "counter", input={"n": 1}, stream_mode="updates"), "updates") == [
        {"increment": {"n": 2}}
    ]
    assert client.threads.search() == []


def test_wait_answers_with_where_the_run_is(sqlite_server):
    client = sqlite_server.client()
    thread = client.threads.create()["thread_id"]
    reply = httpx.post(
        f"{sqlite_server.url}/threads/{thread}/runs/wait",
        json={"assistant_id": "counter", "input": {"n": 1}},
        timeout=30,
    )
    assert reply.status_code == 200
    assert reply.json() == {"n": 2}
    run_id = reply.headers["content-location"].rsplit("/", 1)[1]
    assert reply.headers["content-location"] == f"/threads/{thread}/runs/{run_id}"
    assert reply.headers["location"] == f"/threads/{thread}/runs/{run_id}/join"


def test_the_stream_is_sent_as_the_run_goes(sqlite_server):
    """The first values arrive while the vertex still sleeps: nothing is buffered to the end."""
    client = sqlite_server.client()
    thread = client.threads.create()["thread_id"]
    stream = client.runs.stream(thread, "slow", input={"sleep": 1})
    first = [next(stream), next(stream)]
    assert [p.event for p in first] == ["metadata", "values"]
    assert client.threads.get(thread)["status"] == "busy"
    rest = list(stream)
    assert rest[-1].data == {"sleep": 1, "slept": True}


def test_a_second_run_on_a_busy_thread_is_refused(sqlite_server):
    client = sqlite_server.client()
    thread = client.threads.create()["thread_id"]
    stream = client.runs.stream(thread, "slow", input={"sleep": 1})
    next(stream)
    with pytest.raises(httpx.HTTPStatusError) as refused:
        client.runs.wait(thread, "counter", input={"n": 1}, multitask_strategy="reject")
    assert refused.value.response.status_code == 409
    list(stream)
    assert [r["status"] for r in client.runs.list(thread)] == ["success"]


def test_an_entrypoint_and_a_compiled_graph_are_served(sqlite_server):
    client = sqlite_server.client()
    thread = client.threads.create()["thread_id"]
    assert client.runs.wait(thread, "doubled", input=21) == 42
    assert client.threads.get(thread)["values"] == 42
    assert client.runs.wait(None, "compiled", input={"n": 1}) == {"n": 2}


@task
def draft(topic: str) -> str:
    return f"a draft about {topic}"


def review_flow() -> Any:
    """An entrypoint that writes a draft in a task, then asks a person.

    Made by the server: an entrypoint left open would keep its tasks' actors running.
    """

    @entrypoint()
    def review(topic: str) -> dict[str, Any]:
        text = draft(topic).result()
        verdict = ag.interrupt({"review": text})
        return {"text": text, "verdict": verdict}

    return review


@pytest.mark.threads_only("an entrypoint whose function calls a task is refused on Ray")
def test_an_entrypoint_streams_its_task_calls_and_return_value_and_shows_it_as_its_state(serve_with):
    """Issue 37, item 7: the server shows an entrypoint's thread as LangGraph's functional API does.

    `updates` are each task call's `{task: result}` and `{entrypoint: return value}`; a
    pause is `{"__interrupt__": [...]}` in `updates` and `values` (no record beside it); the
    thread's `values` and its state's are the return value, never `{"input", "output", "save"}`.
    """
    client = serve_with({"review": review_flow}).client()  # the server makes it: closed with it
    thread = client.threads.create()["thread_id"]
    found = parts(client, thread, "review", input="actors", stream_mode=["updates", "values"])
    question = [{"value": {"review": "a draft about actors"}, "id": found[-1][1]["__interrupt__"][0]["id"]}]
    assert found[1:] == [
        ("updates", {"draft": "a draft about actors"}),
        ("updates", {"__interrupt__": question}),
        ("values", {"__interrupt__": question}),
    ]
    paused = client.threads.get(thread)
    assert (paused["status"], paused["values"]) == ("interrupted", None)
    assert client.threads.get_state(thread)["values"] is None
    resumed = parts(client, thread, "review", command={"resume": "ok"}, stream_mode=["updates", "values"])
    value = {"text": "a draft about actors", "verdict": "ok"}
    assert resumed[1:] == [("updates", {"review": value}), ("values", value)]
    assert client.threads.get(thread)["values"] == value
    state = client.threads.get_state(thread)
    assert (state["values"], state["next"]) == (value, [])
    assert client.threads.get_history(thread)[0]["values"] == value
    edited = {"text": "edited", "verdict": "ok"}
    client.threads.update_state(thread, edited)  # as if the function had returned it
    assert client.threads.get(thread)["values"] == edited


def test_an_unknown_thread_is_404_unless_asked_to_create_it(sqlite_server):
    client = sqlite_server.client()
    with pytest.raises(httpx.HTTPStatusError) as missing:
        client.runs.wait("no-such-thread", "counter", input={"n": 1})
    assert missing.value.response.status_code == 404
    assert client.runs.wait("made-now", "counter", input={"n": 1}, if_not_exists="create") == {"n": 2}
    assert client.threads.get("made-now")["values"] == {"n": 2}
