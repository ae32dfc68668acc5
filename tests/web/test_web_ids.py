"""Thread ids in the web inbox's URLs: every id the API allows round-trips through its link and its
answer form over real HTTP (a uvicorn server on loopback, paths sent byte for byte), `x/../victim`
is never `victim`, and ids the API refuses get a readable 404 / 400."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest
import web_graphs
from markupsafe import escape
from web_http import field_of, hrefs, served, settled

import actorgraph as ag
from actorgraph.checkpoint import SqliteCheckpointer
from actorgraph.web import app
from actorgraph.web._ids import segment

pytestmark = pytest.mark.timeout(120)

TRICKY = [
    "a/b",
    "x/../victim",
    "..",
    ".",
    "../..",
    "./x",
    "%2f",
    "a%2Fb",
    "100%",
    "%",
    "a#b",
    "q?x=1&y=2",
    "back\\slash",
    "with space inside",
    "ünïcødé ✓ 東京",
    "semi;colon,comma",
    "plus+sign=eq",
    "<b>bold</b>",
    "\"quoted'",
    "answer",
    "status.json",
    "threads/x/answer",
]


@pytest.fixture
def graph(tmp_path: Path) -> Iterator[ag.CompiledGraph[Any]]:
    with (
        SqliteCheckpointer(tmp_path / "runs.db") as store,
        web_graphs.approval.compile(store, context={"dir": os.environ["WEB_TEST_DIR"]}) as compiled,
    ):
        yield compiled


def test_segment_encodes_every_reserved_character_and_escapes_dot_segments() -> None:
    assert segment("a/b") == "a%2Fb"
    assert segment("x/../victim") == "x%2F..%2Fvictim"
    assert segment("..") == "%7C.."
    assert segment(".") == "%7C."
    assert segment("...") == "..."  # not a dot segment: left as it is
    assert segment("a#b?c") == "a%23b%3Fc"
    assert segment("100%") == "100%25"
    assert segment("back\\slash") == "back%5Cslash"


@pytest.mark.slow
@pytest.mark.timeout(60)
def test_every_tricky_id_round_trips_through_its_link_and_its_answer_form(
    graph: ag.CompiledGraph[Any],
) -> None:
    for thread_id in [*TRICKY, "victim"]:
        graph.invoke({"topic": thread_id}, thread_id=thread_id)
    with served(app(graph)) as http:
        inbox = http.get("/?" + urlencode({"status": "all"}))
        assert inbox.status == 200
        links = {link for link in hrefs(inbox.text) if link.startswith("/threads/")}
        for thread_id in TRICKY:
            link = f"/threads/{segment(thread_id)}"
            assert link in links, thread_id  # the inbox links each thread by its own segment
            page = http.get(link)
            assert page.status == 200, (thread_id, page.text)
            assert f"<h1>Thread {escape(thread_id)} " in page.text  # its page, never another's
            assert f"{escape(thread_id)}: draft" in page.text
            action = f"{link}/answer"
            assert action in hrefs(page.text)
            form = {"csrf": field_of(page.text, "csrf"), "interrupt_id": field_of(page.text, "interrupt_id")}
            posted = http.post(action, urlencode({**form, "text": f"yes to {thread_id}"}))
            assert posted.status == 303, (thread_id, posted.text)
            assert posted.headers["location"] == link
            status = settled(http, link)
            assert status["thread_id"] == thread_id
            assert status["state"]["answer"] == f"yes to {thread_id}"
        for thread_id in TRICKY:
            assert graph.get_state(thread_id).state["answer"] == f"yes to {thread_id}"
        victim = graph.get_state("victim")
        assert victim.status == "interrupted"  # no path above reached it
        assert web_graphs.runs("publish") == len(TRICKY)


def test_x_dot_dot_victim_opens_its_own_page_never_victims(graph: ag.CompiledGraph[Any]) -> None:
    graph.invoke({"topic": "the attacker's"}, thread_id="x/../victim")
    graph.invoke({"topic": "the victim's"}, thread_id="victim")
    with served(app(graph)) as http:
        page = http.get("/threads/x%2F..%2Fvictim")
        assert page.status == 200
        assert "the attacker&#39;s: draft" in page.text
        assert "the victim" not in page.text
        assert http.get("/threads/x%2f..%2fvictim").status == 200  # lower-case escapes too
        split = http.get("/threads/x/../victim")  # not encoded: not one segment, so not a thread page
        assert split.status == 404
        assert "the victim" not in split.text


def test_the_raw_asgi_path_is_what_names_the_thread(graph: ag.CompiledGraph[Any]) -> None:
    """The decoded path (`/threads/a/b/status.json`) is ambiguous; the raw one is not."""
    graph.invoke({"topic": "t"}, thread_id="a/b")
    graph.invoke({"topic": "t"}, thread_id="b")
    web = app(graph)

    async def call(raw_path: bytes, path: str) -> tuple[int, bytes]:
        scope = {
            "type": "http",
            "asgi": {"version": "3.0"},
            "http_version": "1.1",
            "method": "GET",
            "scheme": "http",
            "path": path,
            "raw_path": raw_path,
            "root_path": "",
            "query_string": b"",
            "headers": [(b"host", b"127.0.0.1")],
            "client": ("127.0.0.1", 1234),
            "server": ("127.0.0.1", 80),
        }
        sent: list[dict[str, Any]] = []

        async def receive() -> dict[str, Any]:
            return {"type": "http.request", "body": b"", "more_body": False}

        async def send(message: dict[str, Any]) -> None:
            sent.append(message)

        await web(scope, receive, send)
        body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
        return sent[0]["status"], body

    status, body = asyncio.run(call(b"/threads/a%2Fb/status.json", "/threads/a/b/status.json"))
    assert status == 200
    assert b'"thread_id":"a/b"' in body
    status, body = asyncio.run(call(b"/threads/b/status.json", "/threads/b/status.json"))
    assert b'"thread_id":"b"' in body


@pytest.mark.parametrize(
    ("raw", "code", "says"),
    [
        ("/threads/%20leading", 404, "starts or ends with whitespace"),
        ("/threads/a%7Cb", 404, "contains &#39;|&#39;"),
        ("/threads/%00nul", 404, "control or invisible character"),
        ("/threads/%E2%80%AEbidi", 404, "control or invisible character"),
        ("/threads/" + "x" * 300, 404, "characters long"),
        ("/threads/%FF%FE", 400, "not UTF-8"),
        ("/threads/ok/unknown-page", 404, "no page"),
        ("/threads/ok/a/b", 404, "no such page"),
        ("/threads/", 404, "no thread can have this id"),
    ],
)
def test_ids_the_api_refuses_get_a_readable_page(
    graph: ag.CompiledGraph[Any], raw: str, code: int, says: str
) -> None:
    with served(app(graph)) as http:
        reply = http.get(raw)
        assert reply.status == code, reply.text
        assert reply.headers["content-type"].startswith("text/html")
        assert says in reply.text
        assert "Traceback" not in reply.text
        posted = http.post(raw + ("/answer" if raw.count("/") == 2 else ""), "csrf=x")
        assert posted.status in (400, 404, 405), posted.text


def test_an_unknown_thread_with_a_tricky_id_is_a_404_naming_it(graph: ag.CompiledGraph[Any]) -> None:
    with served(app(graph)) as http:
        reply = http.get(f"/threads/{segment('no/such <thread>')}")
        assert reply.status == 404
        assert "No thread no/such &lt;thread&gt;" in reply.text
