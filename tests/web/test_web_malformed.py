"""Malformed requests get 400 (413 for a body too large) and a readable page, never a 500: the
answer is not applied, nothing is lost, and a good answer afterwards still goes through. Sent as
written to a real server on loopback, and through Starlette's TestClient."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

import pytest
import web_graphs
from starlette.testclient import TestClient
from web_http import Reply, field_of, served, settled

import actorgraph as ag
from actorgraph.checkpoint import SqliteCheckpointer
from actorgraph.web import app

pytestmark = pytest.mark.timeout(90)


@pytest.fixture
def graph(tmp_path: Path) -> Iterator[ag.CompiledGraph[Any]]:
    with (
        SqliteCheckpointer(tmp_path / "runs.db") as store,
        web_graphs.choices.compile(store, context={"dir": os.environ["WEB_TEST_DIR"]}) as compiled,
    ):
        compiled.invoke({}, thread_id="c1")  # a choice: ship / hold / {"delay": 2}
        yield compiled


def fields(page: str) -> dict[str, str]:
    return {"csrf": field_of(page, "csrf"), "interrupt_id": field_of(page, "interrupt_id")}


def form(base: dict[str, str], *pairs: tuple[str, str]) -> bytes:
    return "&".join(f"{quote(k, safe='')}={quote(v, safe='')}" for k, v in [*base.items(), *pairs]).encode()


def bodies(base: dict[str, str]) -> list[tuple[str, bytes, str | None, int]]:
    """(what, body, content type, expected status): each a request no inbox page makes."""
    csrf = f"csrf={base['csrf']}".encode()
    json_too_deep = "[" * 65 + "]" * 65
    return [
        ("a superscript digit", form(base, ("choice", "²")), None, 400),
        ("5,000 digits", form(base, ("choice", "9" * 5000)), None, 400),
        ("a choice not offered", form(base, ("choice", "3")), None, 400),
        ("a negative choice", form(base, ("choice", "-1")), None, 400),
        ("50,000 [ as JSON", form(base) + b"&json=" + b"[" * 50_000, None, 400),  # as curl --data sends it
        ("50,000 [ as JSON, escaped", form(base, ("json", "[" * 50_000)), None, 413),  # 150 KB
        ("JSON nested 65 deep", form(base, ("json", json_too_deep)), None, 400),
        ("a JSON number of 5,000 digits", form(base, ("json", "9" * 5000)), None, 400),
        ("NaN as JSON", form(base, ("json", "NaN")), None, 400),
        ("JSON that does not parse", form(base, ("json", "{nope")), None, 400),
        ("invalid UTF-8, escaped", csrf + b"&interrupt_id=x&text=%FF%FE", None, 400),
        ("invalid UTF-8, raw", csrf + b"&text=\xff\xfe", None, 400),
        ("a duplicate field", form(base, ("text", "a"), ("text", "b")), None, 400),
        ("a duplicate CSRF field", form(base, ("csrf", base["csrf"]), ("text", "a")), None, 400),
        ("no interrupt id", form({"csrf": base["csrf"]}, ("text", "yes")), None, 400),
        ("a made-up interrupt id", form({**base, "interrupt_id": "../../etc"}, ("text", "y")), None, 400),
        ("no answer field", form(base), None, 400),
        ("two answer fields", form(base, ("text", "a"), ("json", "1")), None, 400),
        ("a huge field", form(base, ("text", "x" * 70_000)), None, 413),
        ("JSON, not a form", b'{"csrf": "x", "text": "yes"}', "application/json", 400),
        ("text/plain", form(base, ("text", "yes")), "text/plain", 400),
        ("multipart", form(base, ("text", "yes")), "multipart/form-data; boundary=x", 400),
        (
            "another charset",
            form(base, ("text", "yes")),
            "application/x-www-form-urlencoded; charset=latin-1",
            400,
        ),
        ("a body that is not a form", b"just some words", None, 400),
        ("too many fields", form(base, *[(f"f{i}", "x") for i in range(40)], ("text", "y")), None, 400),
        ("an empty field name run", csrf + b"&&&text=y", None, 400),
    ]


def readable(reply: Reply | Any, code: int) -> None:
    status = reply.status if isinstance(reply, Reply) else reply.status_code
    text = reply.text
    assert status == code, text[:500]
    assert "Traceback" not in text
    assert "Internal Server Error" not in text
    assert ("<h1>" in text) or text.startswith(str(code)), text[:300]


@pytest.mark.slow
def test_malformed_answers_over_real_http_are_400_and_lose_nothing(graph: ag.CompiledGraph[Any]) -> None:
    with served(app(graph)) as http:
        base = fields(http.get("/threads/c1").text)
        for what, body, content_type, code in bodies(base):
            options = {"content_type": content_type} if content_type else {}
            reply = http.post("/threads/c1/answer", body, **options)
            readable(reply, code)
            assert graph.get_state("c1").status == "interrupted", what
        assert web_graphs.runs("publish") == 0
        good = http.post("/threads/c1/answer", form(base, ("choice", "1"), ("name", "Ada")))
        assert good.status == 303
        assert settled(http, "/threads/c1")["state"]["picked"] == "hold"
        assert web_graphs.runs("publish") == 1


def test_malformed_answers_through_the_test_client_are_400(graph: ag.CompiledGraph[Any]) -> None:
    client = TestClient(app(graph), base_url="http://127.0.0.1")
    base = fields(client.get("/threads/c1").text)
    for what, body, content_type, code in bodies(base):
        headers = {"content-type": content_type or "application/x-www-form-urlencoded"}
        reply = client.post("/threads/c1/answer", content=body, headers=headers)
        readable(reply, code)
        assert graph.get_state("c1").status == "interrupted", what
    assert web_graphs.runs("publish") == 0


@pytest.mark.slow
def test_a_body_declared_too_large_is_refused_before_it_is_read(graph: ag.CompiledGraph[Any]) -> None:
    with served(app(graph)) as http:
        head = (
            b"POST /threads/c1/answer HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            b"Content-Type: application/x-www-form-urlencoded\r\nContent-Length: 10000000\r\n\r\n"
        )
        answer = http.raw(head + b"csrf=x")  # the rest never comes
        assert answer.startswith(b"HTTP/1.1 413")


def test_malformed_json_shows_the_form_again_with_the_error(tmp_path: Path) -> None:
    with (
        SqliteCheckpointer(tmp_path / "runs.db") as store,
        web_graphs.approval.compile(store, context={"dir": os.environ["WEB_TEST_DIR"]}) as graph,
    ):
        graph.invoke({"topic": "x"}, thread_id="t1")
        with served(app(graph)) as http:
            base = fields(http.get("/threads/t1").text)
            deep = http.post("/threads/t1/answer", urlencode(base) + "&json=" + "[" * 50_000)
            assert deep.status == 400
            assert "nested 50000 levels deep" in deep.text
            assert 'name="json"' in deep.text  # the form, to fix the answer
            digits = http.post("/threads/t1/answer", urlencode({**base, "json": "9" * 5000}))
            assert digits.status == 400
            assert "not JSON this inbox takes" in digits.text


@pytest.mark.slow
def test_other_requests_no_page_makes_are_readable(graph: ag.CompiledGraph[Any]) -> None:
    with served(app(graph)) as http:
        csrf = fields(http.get("/threads/c1").text)["csrf"]
        readable(http.get("/no/such/page"), 404)
        readable(http.get("/threads/c1/answer"), 405)
        readable(http.post("/threads/c1", f"csrf={csrf}"), 405)
        readable(http.get("/?status=%FF"), 400)
        readable(http.get("/?status=" + "x" * 5000), 400)
        assert http.get("/?q=%FF%FE").status == 200
        assert http.get("/?q=" + "%00" * 1000).status == 200
        readable(http.post("/threads/c1/retry", b"\xff\xfe"), 400)
        readable(http.post("/threads/c1/cancel", f"csrf={csrf}&csrf={csrf}"), 400)
        readable(http.post("/login", b"token=a&token=b"), 400)
        readable(http.post("/threads/c1/retry", f"csrf={csrf}"), 409)  # not failed: refused, said why
        assert graph.get_state("c1").status == "interrupted"
