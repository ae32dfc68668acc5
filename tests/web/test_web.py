"""The web inbox (`actorgraph.web.app`), served to Starlette's TestClient: a real ASGI app, a real
SQLite file, real graphs that pause (`web_graphs.py`); and `actorgraph serve` as a real process."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import web_graphs
from starlette.testclient import TestClient

import actorgraph as ag
from actorgraph.checkpoint import SqliteCheckpointer
from actorgraph.web import app

TESTS = Path(__file__).resolve().parents[1]
WAIT = 30.0


@pytest.fixture(autouse=True)
def _folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WEB_TEST_DIR", str(tmp_path))


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SqliteCheckpointer]:
    with SqliteCheckpointer(tmp_path / "runs.db") as checkpointer:
        yield checkpointer


def compiled(graph: ag.Graph[Any], store: SqliteCheckpointer) -> ag.CompiledGraph[Any]:
    """`graph` on `store`, its vertices counting runs in this test's folder (on any backend)."""
    return graph.compile(store, context={"dir": os.environ["WEB_TEST_DIR"]})


def local(web: Any) -> TestClient:
    """A test client that names the server as a browser on loopback does (the app refuses other hosts)."""
    return TestClient(web, base_url="http://127.0.0.1")


def field(page: str, name: str) -> str:
    found = re.search(rf'name="{name}" value="([^"]+)"', page)
    assert found, f"no field {name} in the page"
    return found.group(1)


def form(client: TestClient, thread: str, prefix: str = "") -> dict[str, str]:
    """The hidden fields of the thread's first answer form: CSRF token and interrupt id."""
    page = client.get(f"{prefix}/threads/{thread}").text
    return {"csrf": field(page, "csrf"), "interrupt_id": field(page, "interrupt_id")}


def settled(client: TestClient, thread: str) -> dict[str, Any]:
    """Poll status.json until the run started by the server has stopped (bounded)."""
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        status: dict[str, Any] = client.get(f"/threads/{thread}/status.json").json()
        if not status["running"] and status["status"] != "running":
            return status
        time.sleep(0.05)
    pytest.fail(f"thread {thread} still running after {WAIT} s")


# -- the inbox and the thread page -----------------------------------------------------------------


def test_the_inbox_lists_a_paused_thread_with_its_question(store: SqliteCheckpointer) -> None:
    with compiled(web_graphs.approval, store) as graph:
        graph.invoke({"topic": "release notes"}, thread_id="notes-1")
        graph.invoke({"topic": "other"}, thread_id="other-2")
        client = local(app(graph))
        page = client.get("/")
        assert page.status_code == 200
        assert "notes-1" in page.text
        assert "review" in page.text
        assert "Publish this draft?" in page.text
        assert "release notes: draft" in page.text  # the mapping is shown as a table
        assert '<table class="value">' in page.text
        searched = client.get("/", params={"q": "notes"}).text
        assert "notes-1" in searched
        assert "other-2" not in searched
        assert "notes-1" not in client.get("/", params={"status": "done"}).text
        assert client.get("/", params={"status": "bogus"}).status_code == 400


def test_the_choices_convention_renders_one_button_per_choice(store: SqliteCheckpointer) -> None:
    with compiled(web_graphs.choices, store) as graph:
        graph.invoke({}, thread_id="c1")
        client = local(app(graph))
        page = client.get("/threads/c1").text
        buttons = re.findall(r'<button name="choice" value="(\d+)">([^<]*)</button>', page)
        assert buttons == [("0", "ship"), ("1", "hold"), ("2", "{&#34;delay&#34;: 2}")]
        fields = form(client, "c1")
        done = client.post("/threads/c1/answer", data={**fields, "choice": "2"}, follow_redirects=False)
        assert done.status_code == 303
        assert settled(client, "c1")["state"]["picked"] == {"delay": 2}
        bad = client.post("/threads/c1/answer", data={**fields, "choice": "7"})
        assert bad.status_code in (400, 409)


def test_an_answer_resumes_the_run_in_the_background_until_done(store: SqliteCheckpointer) -> None:
    with compiled(web_graphs.approval, store) as graph:
        graph.invoke({"topic": "x"}, thread_id="t1")
        client = local(app(graph))
        answer = {**form(client, "t1"), "json": '{"approved": true}', "name": "Ada"}
        done = client.post("/threads/t1/answer", data=answer, follow_redirects=False)
        assert done.status_code == 303
        assert done.headers["location"] == "/threads/t1"
        status = settled(client, "t1")
        assert status["status"] == "done"
        assert status["state"]["answer"] == {"approved": True}
        page = client.get("/threads/t1").text
        assert 'class="status done"' in page
        assert "publish" in page  # the superstep timeline
        assert web_graphs.runs("publish") == 1


def test_bad_json_shows_the_form_again_with_the_error(store: SqliteCheckpointer) -> None:
    with compiled(web_graphs.approval, store) as graph:
        graph.invoke({"topic": "x"}, thread_id="t1")
        client = local(app(graph))
        page = client.post("/threads/t1/answer", data={**form(client, "t1"), "json": "{nope"})
        assert page.status_code == 400
        assert 'role="alert">not JSON' in page.text
        assert "{nope</textarea>" in page.text  # what was typed, to fix
        assert graph.get_state("t1").status == "interrupted"


def test_a_second_answer_is_refused_and_sees_the_first(store: SqliteCheckpointer) -> None:
    with compiled(web_graphs.approval, store) as graph:
        graph.invoke({"topic": "x"}, thread_id="t1")
        client = local(app(graph))
        fields = form(client, "t1")
        first = client.post("/threads/t1/answer", data={**fields, "text": "yes", "name": "Ada"})
        assert first.status_code == 200  # followed to the thread page
        second = client.post("/threads/t1/answer", data={**fields, "text": "no", "name": "Bob"})
        assert second.status_code == 409
        assert "already answered" in second.text
        assert "Answered by Ada" in second.text
        assert "&#34;yes&#34;" in second.text
        assert settled(client, "t1")["state"]["answer"] == "yes"
        assert web_graphs.runs("publish") == 1


def test_an_answer_after_a_restart_is_refused_naming_the_first_from_the_store(
    store: SqliteCheckpointer,
) -> None:
    with compiled(web_graphs.approval, store) as graph:
        graph.invoke({"topic": "x"}, thread_id="t1")
        client = local(app(graph))
        fields = form(client, "t1")
        client.post("/threads/t1/answer", data={**fields, "text": "yes"})
        settled(client, "t1")
        restarted = local(app(graph))  # a new server: its memory of answers is empty
        again = {**fields, "csrf": form_csrf(restarted), "text": "no"}
        refused = restarted.post("/threads/t1/answer", data=again)
        assert refused.status_code == 409  # the store knows who answered: not this server's memory
        assert "already answered" in refused.text
        assert "Answered by someone (web inbox, " in refused.text
        assert "&#34;yes&#34;" in refused.text


def form_csrf(client: TestClient) -> str:
    return field(client.get("/login").text, "csrf")


def test_two_answers_at_once_apply_exactly_one(store: SqliteCheckpointer) -> None:
    with compiled(web_graphs.approval, store) as graph:
        graph.invoke({"topic": "x"}, thread_id="t1")
        client = local(app(graph))
        fields = form(client, "t1")
        codes: list[int] = []
        barrier = threading.Barrier(4)

        def post(who: str) -> None:
            barrier.wait()
            reply = client.post("/threads/t1/answer", data={**fields, "text": who, "name": who})
            codes.append(reply.status_code)

        posts = [threading.Thread(target=post, args=(f"p{i}",)) for i in range(4)]
        for p in posts:
            p.start()
        for p in posts:
            p.join(WAIT)
        assert sorted(codes) == [200, 409, 409, 409]
        assert settled(client, "t1")["status"] == "done"
        assert web_graphs.runs("publish") == 1


# -- security ----------------------------------------------------------------------------------------


def test_a_script_in_an_interrupt_is_shown_as_text(store: SqliteCheckpointer) -> None:
    attack = "<script>alert('x')</script>"
    with compiled(web_graphs.raw, store) as graph:
        graph.invoke({"question": attack}, thread_id="x1")
        client = local(app(graph))
        for url in ("/", "/threads/x1"):
            page = client.get(url)
            assert "&lt;script&gt;" in page.text
            assert "<script" not in page.text
            assert "script-src" not in page.headers["content-security-policy"]  # none: default-src 'none'


def test_a_token_is_required_by_header_or_login_cookie(store: SqliteCheckpointer) -> None:
    with compiled(web_graphs.approval, store) as graph:
        graph.invoke({"topic": "x"}, thread_id="t1")
        client = local(app(graph, token="s3cret"))  # noqa: S106 - a test token
        for url in ("/", "/runs", "/threads/t1", "/threads/t1/status.json", "/threads/t1/graph.svg"):
            assert client.get(url).status_code == 401, url
        assert client.post("/threads/t1/answer", data={"text": "x"}).status_code == 401
        assert client.get("/", headers={"Authorization": "Bearer s3cret"}).status_code == 200
        assert client.get("/", headers={"Authorization": "Bearer wrong"}).status_code == 401
        csrf = form_csrf(client)
        wrong = client.post("/login", data={"csrf": csrf, "token": "guess"})
        assert wrong.status_code == 401
        logged = client.post("/login", data={"csrf": csrf, "token": "s3cret"}, follow_redirects=False)
        assert logged.status_code == 303
        cookie = logged.headers["set-cookie"].lower()
        assert "httponly" in cookie
        assert "samesite=strict" in cookie
        assert "s3cret" not in cookie
        assert client.get("/").status_code == 200  # the cookie is sent from now on


def test_a_post_without_the_csrf_token_is_refused(store: SqliteCheckpointer) -> None:
    with compiled(web_graphs.approval, store) as graph:
        graph.invoke({"topic": "x"}, thread_id="t1")
        client = local(app(graph))
        fields = form(client, "t1")
        missing = client.post(
            "/threads/t1/answer", data={"interrupt_id": fields["interrupt_id"], "text": "y"}
        )
        assert missing.status_code == 403
        forged = client.post("/threads/t1/answer", data={**fields, "csrf": "forged", "text": "y"})
        assert forged.status_code == 403
        assert client.post("/threads/t1/retry", data={}).status_code == 403
        assert graph.get_state("t1").status == "interrupted"


def test_an_oversize_answer_is_refused(store: SqliteCheckpointer) -> None:
    with compiled(web_graphs.approval, store) as graph:
        graph.invoke({"topic": "x"}, thread_id="t1")
        client = local(app(graph))
        huge = client.post("/threads/t1/answer", data={**form(client, "t1"), "text": "x" * 70_000})
        assert huge.status_code == 413
        assert graph.get_state("t1").status == "interrupted"


def test_an_unknown_thread_is_404(store: SqliteCheckpointer) -> None:
    with compiled(web_graphs.approval, store) as graph:
        client = local(app(graph))
        assert client.get("/threads/nope").status_code == 404
        assert client.get("/threads/nope/status.json").status_code == 404
        assert client.get("/threads/nope/graph.svg").status_code == 404
        csrf = form_csrf(client)
        assert client.post("/threads/nope/answer", data={"csrf": csrf, "text": "x"}).status_code == 404


# -- runs, retry, the picture --------------------------------------------------------------------------


def test_a_failed_run_is_listed_and_retried(store: SqliteCheckpointer, tmp_path: Path) -> None:
    with compiled(web_graphs.failing, store) as graph:
        with pytest.raises(ag.VertexError):
            graph.invoke({}, thread_id="f1")
        client = local(app(graph))
        runs = client.get("/runs").text
        assert "f1" in runs
        assert "ConnectionError: the service is down" in runs
        page = client.get("/threads/f1").text
        assert "<details><summary>ConnectionError: the service is down</summary>" in page
        assert "Traceback" in page
        (tmp_path / "fixed").touch()
        retried = client.post("/threads/f1/retry", data={"csrf": field(page, "csrf")}, follow_redirects=False)
        assert retried.status_code == 303
        status = settled(client, "f1")
        assert status["status"] == "done"
        assert status["state"] == {"fixed": True}
        again = client.post("/threads/f1/retry", data={"csrf": field(page, "csrf")})
        assert again.status_code == 409


@pytest.mark.skipif(not __import__("shutil").which("dot"), reason="needs Graphviz's dot")
def test_the_graph_picture_is_served_as_svg(store: SqliteCheckpointer) -> None:
    with compiled(web_graphs.approval, store) as graph:
        graph.invoke({"topic": "x"}, thread_id="t1")
        client = local(app(graph))
        assert 'src="/threads/t1/graph.svg"' in client.get("/threads/t1").text
        picture = client.get("/threads/t1/graph.svg")
        assert picture.status_code == 200
        assert picture.headers["content-type"].startswith("image/svg+xml")
        assert "<svg" in picture.text
        assert "review" in picture.text


def test_the_app_mounts_under_a_prefix(store: SqliteCheckpointer) -> None:
    from starlette.applications import Starlette
    from starlette.routing import Mount

    with compiled(web_graphs.approval, store) as graph:
        graph.invoke({"topic": "x"}, thread_id="t1")
        client = local(Starlette(routes=[Mount("/inbox", app(graph))]))
        page = client.get("/inbox/")
        assert page.status_code == 200
        assert 'href="/inbox/threads/t1"' in page.text
        fields = form(client, "t1", prefix="/inbox")
        done = client.post("/inbox/threads/t1/answer", data={**fields, "text": "ok"}, follow_redirects=False)
        assert done.headers["location"] == "/inbox/threads/t1"


def test_the_app_needs_a_store() -> None:
    with web_graphs.approval.compile() as graph, pytest.raises(ValueError, match="needs a store"):
        app(graph)


# -- `actorgraph serve` -----------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def serve(tmp_path: Path, *args: str) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ACTORGRAPH_")}
    env |= {"PYTHONPATH": os.pathsep.join(p for p in (str(TESTS), env.get("PYTHONPATH")) if p)}
    env |= {"WEB_TEST_DIR": str(tmp_path), "NO_COLOR": "1"}
    argv = [sys.executable, "-m", "actorgraph.cli", "serve", "web_graphs:approval", *args]
    return subprocess.Popen(
        argv, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )


def stop(server: subprocess.Popen[str]) -> str:
    server.terminate()
    try:
        out, _ = server.communicate(timeout=WAIT)
    except subprocess.TimeoutExpired:
        server.kill()
        out, _ = server.communicate()
    return out


def fetched(url: str, **headers: str) -> httpx.Response:
    deadline = time.monotonic() + WAIT
    while True:
        try:
            return httpx.get(url, headers=headers, timeout=5)
        except httpx.TransportError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


@pytest.mark.slow
def test_serve_runs_the_inbox_on_loopback(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    with SqliteCheckpointer(db) as store, compiled(web_graphs.approval, store) as graph:
        graph.invoke({"topic": "served"}, thread_id="s1")
    port = free_port()
    server = serve(tmp_path, "--db", str(db), "--port", str(port))
    try:
        page = fetched(f"http://127.0.0.1:{port}/")
        assert page.status_code == 200
        assert "s1" in page.text
        assert "Publish this draft?" in page.text
    finally:
        out = stop(server)
    assert f"http://127.0.0.1:{port}/" in out


@pytest.mark.slow
def test_serve_beyond_loopback_makes_and_prints_a_token(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    with SqliteCheckpointer(db) as store, compiled(web_graphs.approval, store) as graph:
        graph.invoke({"topic": "served"}, thread_id="s1")
    port = free_port()
    server = serve(tmp_path, "--db", str(db), "--host", "0.0.0.0", "--port", str(port))  # noqa: S104
    try:
        assert server.stdout is not None
        line = server.stdout.readline()
        token = line.rsplit(":", 1)[1].strip()
        assert "needs an access token" in line
        assert len(token) >= 24
        assert fetched(f"http://127.0.0.1:{port}/").status_code == 401
        assert fetched(f"http://127.0.0.1:{port}/", Authorization=f"Bearer {token}").status_code == 200
    finally:
        stop(server)


def test_the_readmes_approval_flow_is_answered_with_plain_words(store: SqliteCheckpointer) -> None:
    """A person with no Python (nor JSON): types what to change, then "yes", in the text field."""
    examples = Path(__file__).resolve().parents[2] / "examples"
    with ag.load(examples / "approval.yaml").compile(store) as graph:
        graph.invoke({"topic": "release notes"}, thread_id="notes-1")
        client = local(app(graph))
        assert "yes, or what to change" in client.get("/threads/notes-1").text
        for words, status in (("mention the fix", "interrupted"), ("yes", "done")):
            answer = {**form(client, "notes-1"), "text": words, "name": "Ada"}
            assert (
                client.post("/threads/notes-1/answer", data=answer, follow_redirects=False).status_code == 303
            )
            assert settled(client, "notes-1")["status"] == status
        state = graph.get_state("notes-1").state
    assert state["status"] == "published"
    assert state["draft"] == "Release notes: draft 2. Revised to mention the fix."
