"""The web inbox of an `@entrypoint`'s threads: the state it shows is the function's return value.

Issue 37, item 7: an entrypoint's thread must never show its internal record
(`{"input", "output", "save"}`), in the inbox as in `get_state`.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

import actorgraph as ag
from actorgraph.checkpoint import SqliteCheckpointer
from actorgraph.func import Entrypoint, entrypoint, task
from actorgraph.web import app

pytestmark = pytest.mark.threads_only("an entrypoint whose function calls a task is refused on Ray")

WAIT = 30.0


@task
def draft(topic: str) -> str:
    return f"a draft about {topic}"


@pytest.fixture
def review(tmp_path: Path) -> Iterator[Entrypoint[Any]]:
    """The functional API guide's review loop: a task writes, a person approves."""
    with SqliteCheckpointer(tmp_path / "runs.db") as store:

        @entrypoint(checkpointer=store)
        def review(topic: str) -> dict[str, Any]:
            text = draft(topic).result()
            verdict = ag.interrupt({"review": text})
            return {"text": text, "verdict": verdict}

        with review:
            yield review


def field(page: str, name: str) -> str:
    found = re.search(rf'name="{name}" value="([^"]+)"', page)
    assert found, f"no field {name} in the page"
    return found.group(1)


def settled(client: TestClient, thread: str) -> dict[str, Any]:
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        status: dict[str, Any] = client.get(f"/threads/{thread}/status.json").json()
        if not status["running"] and status["status"] != "running":
            return status
        time.sleep(0.05)
    pytest.fail(f"thread {thread} still running after {WAIT} s")


def test_an_entrypoint_s_thread_shows_its_question_then_its_return_value(review: Entrypoint[Any]) -> None:
    review.invoke("actors", thread_id="r1")
    client = TestClient(app(review.graph), base_url="http://127.0.0.1")
    page = client.get("/threads/r1").text
    assert "a draft about actors" in page  # the question
    assert '"output"' not in page and '"save"' not in page  # never the record
    assert client.get("/threads/r1/status.json").json()["state"] is None  # nothing returned yet
    fields = {name: field(page, name) for name in ("csrf", "interrupt_id")}
    answered = client.post("/threads/r1/answer", data={**fields, "json": '"ok"', "name": "Ada"})
    assert answered.status_code == 200, answered.text
    value = {"text": "a draft about actors", "verdict": "ok"}
    assert settled(client, "r1")["state"] == value
    assert json.loads(client.get("/threads/r1/state.json").content) == value
    page = client.get("/threads/r1").text
    assert '"output"' not in page and '"save"' not in page
    assert review.get_state("r1").state == value
