"""The Host header check (DNS rebinding): a real server on loopback answers requests that name it by a
loopback name, its bound address or an allowed name, and refuses `Host: evil.example` with a readable
400 before anything else happens; `actorgraph serve --allow-host` says which names more."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest
import web_graphs
from test_web import free_port, serve, stop
from web_http import Http, Reply, field_of, served

import actorgraph as ag
from actorgraph.checkpoint import SqliteCheckpointer
from actorgraph.web import app

pytestmark = pytest.mark.timeout(60)


def up(call: Callable[[], Reply]) -> Reply:
    """`call` once the server listens (bounded)."""
    deadline = time.monotonic() + 30
    while True:
        try:
            return call()
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


def refused(reply: Reply) -> None:
    assert reply.status == 400, reply.text
    assert "answers only to the host names localhost, 127.0.0.1, [::1]" in reply.text
    assert "--allow-host" in reply.text
    assert reply.headers["x-content-type-options"] == "nosniff"


def test_a_foreign_host_is_refused_on_every_path_and_nothing_is_applied(graph: ag.CompiledGraph[Any]) -> None:
    with served(app(graph)) as http:
        page = http.get("/threads/t1")
        form = {"csrf": field_of(page.text, "csrf"), "interrupt_id": field_of(page.text, "interrupt_id")}
        for path in ("/", "/runs", "/login", "/static/style.css", "/threads/t1", "/threads/t1/status.json"):
            refused(http.get(path, host="evil.example"))
            refused(http.get(path, host=f"evil.example:{http.port}"))
        refused(http.post("/threads/t1/answer", urlencode({**form, "text": "evil"}), host="evil.example"))
        refused(http.post("/login", urlencode({"csrf": form["csrf"], "token": "x"}), host="evil.example"))
        assert graph.get_state("t1").status == "interrupted"
        assert web_graphs.runs("publish") == 0


def test_loopback_names_with_any_port_are_admitted(graph: ag.CompiledGraph[Any]) -> None:
    with served(app(graph)) as http:
        for host in ("localhost", "127.0.0.1", "[::1]", "LOCALHOST", f"localhost:{http.port}", "[::1]:8000"):
            assert http.get("/", host=host).status == 200, host
        for host in ("localhost.evil.example", "127.0.0.1.nip.io", "evil.example#@localhost", "", "[::2]"):
            assert http.get("/", host=host).status == 400, host


def test_a_request_without_a_host_header_is_refused(graph: ag.CompiledGraph[Any]) -> None:
    with served(app(graph)) as http:
        answer = http.raw(b"GET / HTTP/1.0\r\n\r\n")
        assert answer.startswith(b"HTTP/1.1 400")
        assert b"answers only to the host names" in answer


def test_allowed_names_and_wildcards_are_admitted(graph: ag.CompiledGraph[Any]) -> None:
    with served(app(graph, allow_hosts=["Inbox.Example", "*.corp.example", "192.0.2.7", "::2"])) as http:
        for host in (
            "inbox.example",
            "inbox.example:8443",
            "a.corp.example",
            "b.a.corp.example",
            "192.0.2.7",
        ):
            assert http.get("/", host=host).status == 200, host
        assert http.get("/", host="[::2]:80").status == 200
        for host in ("evil.example", "corp.example.evil", "inbox.example.evil"):
            assert http.get("/", host=host).status == 400, host


@pytest.mark.parametrize("bad", ["inbox.example:8000", "http://inbox.example", "a b", "*evil", "a.*.b", ""])
def test_an_allowed_host_that_is_not_a_name_is_a_config_error(graph: ag.CompiledGraph[Any], bad: str) -> None:
    with pytest.raises(ag.ConfigError, match="is not a host name the inbox can allow"):
        app(graph, allow_hosts=[bad])


@pytest.mark.slow
def test_serve_admits_its_allow_host_names_and_refuses_others(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    with SqliteCheckpointer(db) as store, web_graphs.approval.compile(store) as graph:
        graph.invoke({"topic": "served"}, thread_id="s1")
    port = free_port()
    server = serve(tmp_path, "--db", str(db), "--port", str(port), "--allow-host", "inbox.example")
    try:
        http = Http(port)
        first = up(lambda: http.get("/", host="inbox.example"))
        assert first.status == 200
        assert "s1" in first.text
        refused(http.get("/", host="evil.example"))
        assert http.get("/").status == 200  # 127.0.0.1, the bound address
    finally:
        stop(server)


@pytest.mark.slow
def test_serve_refuses_an_allow_host_that_is_not_a_name(tmp_path: Path) -> None:
    server = serve(tmp_path, "--db", str(tmp_path / "runs.db"), "--allow-host", "inbox.example:80")
    out, _ = server.communicate(timeout=30)
    assert server.returncode == 2, out
    assert "is not a host name the inbox can allow" in out
    assert "Traceback" not in out
