"""Answers reach their own question once, decided by the store: a thread asked again (a new input after
its run was done) shows and takes the new question, while a replay of the old form gets 409 naming the
earlier answer and is never applied to the new one; an answer claimed by the command line, or by another
server on the same store, is refused here with who answered and when, before and after a restart."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest
import web_graphs
from web_http import Http, field_of, served, settled

import actorgraph as ag
from actorgraph.checkpoint import SqliteCheckpointer
from actorgraph.web import app

pytestmark = pytest.mark.timeout(60)


@pytest.fixture
def graph(tmp_path: Path) -> Iterator[ag.CompiledGraph[Any]]:
    with (
        SqliteCheckpointer(tmp_path / "runs.db") as store,
        web_graphs.approval.compile(store, context={"dir": os.environ["WEB_TEST_DIR"]}) as compiled,
    ):
        yield compiled


def answer_form(http: Http, thread_id: str) -> dict[str, str]:
    page = http.get(f"/threads/{thread_id}").text
    return {"csrf": field_of(page, "csrf"), "interrupt_id": field_of(page, "interrupt_id")}


@pytest.mark.slow
def test_a_thread_asked_again_takes_the_new_answer_and_refuses_a_replay_of_the_old_form(
    graph: ag.CompiledGraph[Any],
) -> None:
    graph.invoke({"topic": "first"}, thread_id="t1")
    with served(app(graph)) as http:
        old = answer_form(http, "t1")
        first = http.post("/threads/t1/answer", urlencode({**old, "text": "yes", "name": "Ada"}))
        assert first.status == 303
        assert settled(http, "/threads/t1")["status"] == "done"

        graph.invoke({"topic": "second"}, thread_id="t1")  # the done thread is asked again
        (asked,) = graph.get_state("t1").interrupts
        assert asked.id != old["interrupt_id"]
        inbox = http.get("/").text
        assert ">t1</a>" in inbox
        assert "second: draft" in inbox
        new = answer_form(http, "t1")
        assert new["interrupt_id"] == asked.id

        replay = http.post("/threads/t1/answer", urlencode({**old, "text": "no", "name": "Mallory"}))
        assert replay.status == 409
        assert "already answered" in replay.text
        assert "Answered by Ada (web inbox, 127.0.0.1)" in replay.text
        assert "&#34;yes&#34;" in replay.text  # the earlier answer, read from the store
        assert old["interrupt_id"] in replay.text
        snapshot = graph.get_state("t1")
        assert snapshot.status == "interrupted"  # the new question still waits: the replay did not take it
        assert [p.id for p in snapshot.interrupts] == [asked.id]

        second = http.post("/threads/t1/answer", urlencode({**new, "text": "ship it", "name": "Bob"}))
        assert second.status == 303
        status = settled(http, "/threads/t1")
        assert status["status"] == "done"
        assert status["state"]["answer"] == "ship it"
    assert web_graphs.runs("publish") == 2


def test_an_answer_given_at_the_command_line_is_named_on_the_409_page(graph: ag.CompiledGraph[Any]) -> None:
    graph.invoke({"topic": "x"}, thread_id="t1")
    with served(app(graph)) as http:
        form = answer_form(http, "t1")  # the page is open in a browser...
        command = ag.Command(resume={form["interrupt_id"]: "from the terminal"})
        graph.invoke(command, thread_id="t1", answered_by="Carol at the CLI")  # ...when Carol answers
        late = http.post("/threads/t1/answer", urlencode({**form, "text": "from the browser"}))
        assert late.status == 409
        assert "Answered by Carol at the CLI" in late.text
        assert "&#34;from the terminal&#34;" in late.text
    assert graph.get_state("t1").state["answer"] == "from the terminal"
    assert web_graphs.runs("publish") == 1


@pytest.mark.slow
def test_two_servers_on_one_store_apply_exactly_one_answer(
    graph: ag.CompiledGraph[Any], tmp_path: Path
) -> None:
    graph.invoke({"topic": "x"}, thread_id="t1")
    with (
        SqliteCheckpointer(tmp_path / "runs.db") as other_store,
        web_graphs.approval.compile(other_store, context={"dir": os.environ["WEB_TEST_DIR"]}) as other,
        served(app(graph)) as one,
        served(app(other)) as two,
    ):
        forms = [answer_form(one, "t1"), answer_form(two, "t1")]
        replies: dict[str, int] = {}
        barrier = threading.Barrier(2)

        def post(http: Http, form: dict[str, str], who: str) -> None:
            barrier.wait()
            replies[who] = http.post(
                "/threads/t1/answer", urlencode({**form, "text": who, "name": who})
            ).status

        posts = [
            threading.Thread(target=post, args=(one, forms[0], "Ada")),
            threading.Thread(target=post, args=(two, forms[1], "Bob")),
        ]
        for p in posts:
            p.start()
        for p in posts:
            p.join(30)
        assert sorted(replies.values()) == [303, 409], replies
        winner = next(who for who, code in replies.items() if code == 303)
        loser_server = two if winner == "Ada" else one
        assert settled(loser_server, "/threads/t1")["state"]["answer"] == winner
    assert web_graphs.runs("publish") == 1
