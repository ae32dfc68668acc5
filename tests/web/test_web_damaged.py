"""A damaged thread never takes the inbox down: its stored checkpoint record is truncated, not msgpack,
or names a class the serializer does not allow (bytes written straight into the SQLite file); the inbox
lists it as damaged with what is wrong, its page, status.json and /runs say so, and every other thread
is served and answered as usual. No answer is ever a bare 500."""

from __future__ import annotations

import dataclasses
import json
import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest
import web_graphs
from web_http import field_of, served, settled

import actorgraph as ag
from actorgraph.checkpoint import MsgpackSerializer, SqliteCheckpointer
from actorgraph.web import app

pytestmark = pytest.mark.timeout(60)


@dataclasses.dataclass
class Smuggled:
    """A class the inbox's serializer does not allow: loading a record that names it must refuse."""

    payload: str


def _truncated(data: bytes) -> bytes:
    return data[: len(data) // 2]


def _not_msgpack(_data: bytes) -> bytes:
    return b"this is not what any serializer wrote"


def _disallowed_class(data: bytes) -> bytes:
    record = MsgpackSerializer().loads(data)
    return MsgpackSerializer(allowed=[Smuggled]).dumps({**record, "position": Smuggled("x")})


DAMAGES = {
    "truncated": (_truncated, "damaged or truncated"),
    "not msgpack": (_not_msgpack, "not written by MsgpackSerializer"),
    "a disallowed class": (_disallowed_class, "does not allow"),
}


def damage(db: Path, thread_id: str, how: Any) -> str:
    """Rewrite the thread's newest checkpoint record in the SQLite file; its checkpoint id."""
    with sqlite3.connect(db) as connection:
        (head,) = connection.execute(
            "SELECT head FROM actorgraph_threads WHERE thread_id = ?", (thread_id,)
        ).fetchone()
        (data,) = connection.execute(
            "SELECT data FROM actorgraph_checkpoints WHERE thread_id = ? AND checkpoint_id = ?",
            (thread_id, head),
        ).fetchone()
        connection.execute(
            "UPDATE actorgraph_checkpoints SET data = ? WHERE thread_id = ? AND checkpoint_id = ?",
            (how(bytes(data)), thread_id, head),
        )
    connection.close()
    return str(head)


@pytest.fixture(params=list(DAMAGES))
def damaged(
    request: pytest.FixtureRequest, tmp_path: Path
) -> Iterator[tuple[ag.CompiledGraph[Any], str, str]]:
    """A store with two healthy paused threads, a failed one, and `broken` (paused, then damaged)."""
    db = tmp_path / "runs.db"
    with SqliteCheckpointer(db) as store, web_graphs.approval.compile(store) as graph:
        for thread_id in ("healthy-1", "broken", "healthy-2"):
            graph.invoke({"topic": thread_id}, thread_id=thread_id)
    how, says = DAMAGES[request.param]
    head = damage(db, "broken", how)
    with (
        SqliteCheckpointer(db) as store,
        web_graphs.approval.compile(store, context={"dir": os.environ["WEB_TEST_DIR"]}) as graph,
    ):
        yield graph, head, says


def test_the_inbox_lists_a_damaged_thread_as_damaged_and_serves_the_rest(
    damaged: tuple[ag.CompiledGraph[Any], str, str],
) -> None:
    graph, head, says = damaged
    with served(app(graph)) as http:
        inbox = http.get("/")
        assert inbox.status == 200
        row = inbox.text.split('<tr class="damaged">', 1)[1].split("</tr>", 1)[0]
        assert ">broken</a>" in row
        assert "damaged" in row
        assert head in row  # which checkpoint
        assert says in row.replace("&#39;", "'")  # what is wrong with it
        for healthy in ("healthy-1", "healthy-2"):
            assert f">{healthy}</a>" in inbox.text
        assert inbox.text.count("Publish this draft?") == 2  # the readable threads' questions
        everything = http.get("/?status=all")
        assert everything.status == 200
        assert ">broken</a>" in everything.text


def test_a_damaged_threads_page_status_and_runs_say_what_is_wrong(
    damaged: tuple[ag.CompiledGraph[Any], str, str],
) -> None:
    graph, head, says = damaged
    with served(app(graph)) as http:
        page = http.get("/threads/broken")
        assert page.status == 200
        assert 'class="status damaged"' in page.text
        assert "cannot be read from the store" in page.text
        assert head in page.text
        assert says in page.text.replace("&#39;", "'")
        assert "Traceback" not in page.text
        status = http.get("/threads/broken/status.json")
        assert status.status == 200
        found = json.loads(status.body)
        assert found["status"] == "damaged"
        assert says in found["error"]
        assert http.get("/runs").status == 200
        for path in ("/threads/broken/graph.svg", "/threads/broken/state.json"):
            reply = http.get(path)
            assert reply.status == 503, path
            assert "SerializationError" in reply.text
        assert http.get("/threads/broken/question.json?id=int-0000000000000000").status == 503


@pytest.mark.slow
def test_answering_a_damaged_thread_is_refused_and_the_others_are_answered(
    damaged: tuple[ag.CompiledGraph[Any], str, str],
) -> None:
    graph, _, says = damaged
    with served(app(graph)) as http:
        healthy = http.get("/threads/healthy-1").text
        csrf, interrupt_id = field_of(healthy, "csrf"), field_of(healthy, "interrupt_id")
        for answer in ({"text": "yes"}, {"json": "true"}, {"choice": "0"}):
            body = urlencode(
                {"csrf": csrf, "interrupt_id": interrupt_id.replace("int-", "int-f")[:20], **answer}
            )
            refused = http.post("/threads/broken/answer", body)
            assert refused.status == 409, refused.text
            assert "cannot be read" in refused.text
            assert says in refused.text.replace("&#39;", "'")
        retried = http.post("/threads/broken/retry", urlencode({"csrf": csrf}))
        assert retried.status == 409
        answered = http.post(
            "/threads/healthy-1/answer",
            urlencode({"csrf": csrf, "interrupt_id": interrupt_id, "text": "yes"}),
        )
        assert answered.status == 303
        assert settled(http, "/threads/healthy-1")["status"] == "done"
        assert web_graphs.runs("publish") == 1


def test_a_failed_thread_that_is_damaged_is_listed_on_the_runs_page(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    with SqliteCheckpointer(db) as store, web_graphs.failing.compile(store) as graph:
        for thread_id in ("failed-1", "failed-2"):
            with pytest.raises(ag.VertexError):
                graph.invoke({}, thread_id=thread_id)
    head = damage(db, "failed-2", _not_msgpack)
    with (
        SqliteCheckpointer(db) as store,
        web_graphs.failing.compile(store) as graph,
        served(app(graph)) as http,
    ):
        runs = http.get("/runs")
        assert runs.status == 200
        assert "ConnectionError: the service is down" in runs.text  # the readable failure
        assert head in runs.text
        assert "not written by MsgpackSerializer" in runs.text


def test_a_store_that_cannot_be_read_at_all_is_a_readable_503(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    with SqliteCheckpointer(db) as store, web_graphs.approval.compile(store) as graph:
        graph.invoke({"topic": "x"}, thread_id="t1")
        with served(app(graph)) as http:
            assert http.get("/").status == 200
            with sqlite3.connect(db) as connection:
                connection.execute("DROP TABLE actorgraph_threads")
            connection.close()
            for path in ("/", "/runs"):
                reply = http.get(path)
                assert reply.status == 503, reply.text
                assert "CheckpointError" in reply.text
                assert "Traceback" not in reply.text


def test_an_exception_no_page_handled_is_a_readable_500_without_a_traceback(
    caplog: pytest.LogCaptureFixture,
) -> None:
    from starlette.testclient import TestClient

    from actorgraph.web._app import Caught

    async def broken(scope: Any, receive: Any, send: Any) -> None:
        raise RuntimeError("a bug with a secret in its message")

    client = TestClient(Caught(broken), raise_server_exceptions=False)
    reply = client.get("/")
    assert reply.status_code == 500
    assert "The inbox failed to answer this request" in reply.text
    assert "secret" not in reply.text
    assert "Traceback" not in reply.text
    assert reply.headers["content-security-policy"].startswith("default-src 'none'")
    assert "a bug with a secret" in caplog.text  # the log says why


@pytest.mark.parametrize(
    ("column", "forged"),
    [("updated_at", "yesterday"), ("updated_at", b"\x00\x01"), ("thread_id", b"\xffbroken")],
)
def test_a_damaged_thread_row_is_listed_never_a_500(tmp_path: Path, column: str, forged: str | bytes) -> None:
    """The thread table's own row forged (a time that is text or bytes, an id that is bytes): every list
    page still answers, the row shown with `?` where its time cannot be read."""
    db = tmp_path / "runs.db"
    with SqliteCheckpointer(db) as store, web_graphs.approval.compile(store) as graph:
        for thread_id in ("healthy", "broken", "failed"):
            graph.invoke({"topic": thread_id}, thread_id=thread_id)
    with sqlite3.connect(db) as connection:
        connection.execute("UPDATE actorgraph_threads SET status = 'error' WHERE thread_id = 'failed'")
        for thread_id, value in (("broken", forged), ("failed", forged * 2)):  # ids are unique
            connection.execute(
                f"UPDATE actorgraph_threads SET {column} = ? WHERE thread_id = ?",  # noqa: S608 - a test's own
                (value, thread_id),
            )
    connection.close()
    with (
        SqliteCheckpointer(db) as store,
        web_graphs.approval.compile(store) as graph,
        served(app(graph)) as http,
    ):
        for path in ("/", "/?status=all", "/?status=error", "/?q=b", "/?status=all&q=e", "/runs"):
            reply = http.get(path)
            assert reply.status == 200, (path, reply.text)
            assert "Traceback" not in reply.text
        inbox = http.get("/").text
        assert ">healthy</a>" in inbox
        if column == "updated_at":
            assert inbox.count("<td>?</td>") == 1  # the broken thread's age; the healthy one's is a time
            assert "? ago" in http.get("/runs").text
