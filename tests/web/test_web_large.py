"""Large values are shown cut, with their size, and downloaded whole: a thread with a 50 MB state (and
one asking a 50 MB question) gives an inbox page and a thread page of bounded size; `state.json` and
`question.json` give the whole value as a JSON attachment, behind the token like every page."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

import pytest
import web_graphs
from web_http import Http, field_of, hrefs, served, settled

import actorgraph as ag
from actorgraph.checkpoint import SqliteCheckpointer
from actorgraph.web import app

pytestmark = [pytest.mark.timeout(120), pytest.mark.slow]  # slow: a 50 MB state served

MB = 1024 * 1024
BIG = 50 * MB
PAGE = 200_000  # bytes a page may have, whatever the size of the values it shows
TOKEN = "large-test-token-0123456789"  # noqa: S105 - a test token


@pytest.fixture(scope="module")
def big_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One SQLite file for the module: a 50 MB state, a 50 MB question, and a question of many keys."""
    db = tmp_path_factory.mktemp("large") / "runs.db"
    with SqliteCheckpointer(db) as store, web_graphs.raw.compile(store) as graph:
        graph.invoke({"question": "Keep the big file?", "blob": "b" * BIG}, thread_id="big-state")
        graph.invoke({"question": "q" * BIG}, thread_id="big-question")
        many = {f"key-{i}": "v" * 2000 for i in range(5000)} | {"question": "Which keys?"}
        graph.invoke({"question": many}, thread_id="many-keys")
        pick = {"question": "Pick one", "choices": [f"option {i} " + "o" * 500 for i in range(10_000)]}
        graph.invoke({"question": pick}, thread_id="many-choices")
    return db


@pytest.fixture
def graph(big_store: Path) -> Iterator[ag.CompiledGraph[Any]]:
    with (
        SqliteCheckpointer(big_store) as store,
        web_graphs.raw.compile(store, context={"dir": os.environ["WEB_TEST_DIR"]}) as compiled,
    ):
        yield compiled


def test_the_inbox_and_thread_pages_stay_small_and_say_what_was_cut(graph: ag.CompiledGraph[Any]) -> None:
    with served(app(graph)) as http:
        inbox = http.get("/")
        assert inbox.status == 200
        assert len(inbox.body) < 3 * PAGE // 2
        assert "Keep the big file?" in inbox.text
        assert "showing 4,000 of 52,428,800 characters" in inbox.text  # the 50 MB question, cut
        assert "showing 30 of 5,001 keys" in inbox.text
        links = hrefs(inbox.text)
        assert "/threads/big-question/question.json?id=" in " ".join(links)
        for thread_id in ("big-state", "big-question", "many-keys"):
            page = http.get(f"/threads/{thread_id}")
            assert page.status == 200, thread_id
            assert len(page.body) < PAGE, (thread_id, len(page.body))
            assert f"/threads/{thread_id}/state.json" in hrefs(page.text)
        state_page = http.get("/threads/big-state").text
        assert "Cut: showing 4,000 characters of a state of 50.0 MiB as JSON." in state_page


def test_the_whole_state_downloads_as_a_json_attachment(graph: ag.CompiledGraph[Any]) -> None:
    with served(app(graph)) as http:
        reply = http.get("/threads/big-state/state.json")
        assert reply.status == 200
        assert reply.headers["content-type"] == "application/json"
        assert reply.headers["content-disposition"] == 'attachment; filename="big-state-state.json"'
        assert reply.headers["x-content-type-options"] == "nosniff"
        state = json.loads(reply.body)
        assert len(state["blob"]) == BIG
        status = json.loads(http.get("/threads/big-state/status.json").body)
        assert status["state"] is None  # too large to poll: linked instead
        assert status["state_size"] == "50.0 MiB"
        assert status["state_url"] == "/threads/big-state/state.json"


def test_a_whole_question_downloads_by_its_id(graph: ag.CompiledGraph[Any]) -> None:
    (pending,) = graph.get_state("big-question").interrupts
    with served(app(graph)) as http:
        reply = http.get(f"/threads/big-question/question.json?id={quote(pending.id)}")
        assert reply.status == 200
        assert reply.headers["content-disposition"].startswith("attachment;")
        record = json.loads(reply.body)
        assert record["id"] == pending.id
        assert record["value"] == "q" * BIG
        assert http.get("/threads/big-question/question.json?id=int-0000000000000000").status == 404
        assert http.get("/threads/big-question/question.json").status == 404


def test_downloads_need_the_token(graph: ag.CompiledGraph[Any]) -> None:
    with served(app(graph, token=TOKEN)) as http:
        assert http.get("/threads/big-state/state.json").status == 401
        (pending,) = graph.get_state("big-question").interrupts
        assert http.get(f"/threads/big-question/question.json?id={pending.id}").status == 401
        reply = Http(http.port).get(
            "/threads/many-keys/state.json", headers={"Authorization": f"Bearer {TOKEN}"}
        )
        assert reply.status == 200


def test_a_question_with_ten_thousand_choices_shows_some_and_takes_any(graph: ag.CompiledGraph[Any]) -> None:
    with served(app(graph)) as http:
        page = http.get("/threads/many-choices")
        assert page.status == 200
        assert len(page.body) < PAGE
        assert page.text.count('<button name="choice"') == 50
        assert "and 9950 more choices" in page.text
        form = {"csrf": field_of(page.text, "csrf"), "interrupt_id": field_of(page.text, "interrupt_id")}
        picked = http.post("/threads/many-choices/answer", urlencode({**form, "choice": "9999"}))
        assert picked.status == 303
        assert settled(http, "/threads/many-choices")["status"] == "done"
    assert graph.get_state("many-choices").state["said"].startswith("option 9999 ")
