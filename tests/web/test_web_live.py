"""An answer given in the web inbox served by the process whose vertex waits goes on live (issue 28)."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlencode

import pytest
from live_child import asking
from web_http import field_of, served, settled

from actorgraph._actors import live
from actorgraph.checkpoint import SqliteCheckpointer
from actorgraph.web import app

pytestmark = [
    pytest.mark.timeout(60),
    pytest.mark.threads_only("the inbox answers a vertex waiting in this process; Ray runs no live path"),
]


def test_an_answer_from_the_inbox_of_this_process_goes_on_from_the_question(tmp_path: Path) -> None:
    ledger = tmp_path / "ledger"
    with SqliteCheckpointer(tmp_path / "runs.db") as store, asking(str(ledger)).compile(store) as graph:
        before = live.waiting()
        graph.invoke({"n": 1}, thread_id="t1")
        assert live.waiting() == before + 1
        with served(app(graph)) as http:
            page = http.get("/threads/t1").text
            form = {"csrf": field_of(page, "csrf"), "interrupt_id": field_of(page, "interrupt_id")}
            reply = http.post("/threads/t1/answer", urlencode({**form, "text": "yes", "name": "Ada"}))
            assert reply.status == 303
            status = settled(http, "/threads/t1")
        assert status["status"] == "done"
        assert status["state"]["answer"] == "yes"
    assert ledger.read_text().split() == ["before", "after:yes"]  # the question's vertex ran once
