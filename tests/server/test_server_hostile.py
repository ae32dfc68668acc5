"""Hostile requests: each is a 4xx `{"detail": ...}` naming what was wrong, and nothing is stored."""

from __future__ import annotations

import json

import pytest
from web_http import Http

from actorgraph import ConfigError
from actorgraph.server import Limits
from actorgraph.server._serve import check_binding

pytestmark = pytest.mark.slow  # each test starts a server (uvicorn, the graphs compiled)

JSON = "application/json"


def post(http: Http, path: str, body: bytes | str, **options) -> tuple[int, dict]:
    reply = http.post(path, body, content_type=JSON, **options)
    return reply.status, json.loads(reply.body)


def nothing_stored(server) -> None:
    assert server.client().threads.search() == []


def test_bad_bodies_are_refused_naming_the_field(serve_with):
    server = serve_with(limits=Limits(body=4096, depth=16, items=50))
    http = server.http
    cases = {
        "/threads": (b"{not json", 400, "not JSON"),
        "/threads/search": (b'{"limit": "many"}', 422, "limit"),
        "/runs/wait": (
            json.dumps({"assistant_id": "counter", "input": {"x": "y" * 5000}}),
            413,
            "larger than",
        ),
        "/runs/stream": (
            json.dumps({"assistant_id": "counter", "input": {"n": 1}, "stream_mode": "everything"}),
            422,
            "stream_mode",
        ),
    }
    for path, (body, status, words) in cases.items():
        code, answer = post(http, path, body)
        assert (path, code) == (path, status)
        assert words in answer["detail"]
    deep = "[" * 40 + "]" * 40
    code, answer = post(http, "/runs/wait", f'{{"assistant_id": "counter", "input": {deep}}}')
    assert (code, "nested deeper" in answer["detail"]) == (400, True)
    wide = json.dumps({"assistant_id": "counter", "input": {"xs": list(range(60))}})
    assert post(http, "/runs/wait", wide)[0] == 400
    nothing_stored(server)


def test_bad_ids_and_unknown_assistants(sqlite_server):
    http = sqlite_server.http
    for path in ("/threads/a%7Cb", "/threads/" + "x" * 200, "/threads/%20spaced"):
        reply = http.get(path)
        assert reply.status == 422, path
        assert "thread_id" in json.loads(reply.body)["detail"]
    code, answer = post(http, "/threads", json.dumps({"thread_id": "bad|id"}))
    assert code == 422
    assert "thread_id" in answer["detail"]
    code, answer = post(http, "/runs/wait", json.dumps({"assistant_id": "nope", "input": {}}))
    assert code == 404
    assert "nope" in answer["detail"]
    code, _ = post(
        http,
        "/runs/wait",
        json.dumps({"assistant_id": "counter", "input": {"n": 1}, "command": {"resume": 1}}),
    )
    assert code == 422
    code, answer = post(
        http, "/runs/wait", json.dumps({"assistant_id": "counter", "interrupt_before": ["nowhere"]})
    )
    assert (code, "nowhere" in answer["detail"]) == (422, True)
    assert http.get("/nowhere").status == 404
    nothing_stored(sqlite_server)


def test_a_host_that_is_not_ours_is_refused(sqlite_server):
    reply = sqlite_server.http.get("/ok", host="evil.example")
    assert reply.status == 400
    assert "evil.example" in json.loads(reply.body)["detail"]
    assert sqlite_server.http.get("/ok", host="localhost").status == 200


def test_with_a_token_every_request_needs_it(serve_with):
    server = serve_with(token="s3cret")  # noqa: S106 - a test token
    http = server.http
    assert http.get("/ok").status == 200
    assert http.get("/info").status == 401
    assert post(http, "/threads", "{}")[0] == 401
    assert http.get("/info", headers={"Authorization": "Bearer s3cret"}).status == 200
    assert server.client(api_key="s3cret").assistants.search()
    nothing = server.client(api_key="s3cret").threads.search()
    assert nothing == []


def test_cors_is_off_unless_origins_are_named(serve_with):
    plain = serve_with()
    asked = {"Origin": "http://localhost:3000", "Access-Control-Request-Method": "POST"}
    assert (
        "access-control-allow-origin" not in plain.http.request("OPTIONS", "/threads", headers=asked).headers
    )
    opened = serve_with(
        cors_origins=["http://localhost:3000"], db=str(plain.app.state.server.checkpointer._path) + "2"
    )
    reply = opened.http.request("OPTIONS", "/threads", headers=asked)
    assert reply.headers["access-control-allow-origin"] == "http://localhost:3000"


def test_binding_beyond_loopback_needs_a_token():
    check_binding("127.0.0.1", None)
    check_binding("::1", None)
    check_binding("0.0.0.0", "t0ken")  # noqa: S104 - the address checked, not bound
    with pytest.raises(ConfigError, match="--token"):
        check_binding("0.0.0.0", None)  # noqa: S104
    with pytest.raises(ConfigError, match="empty"):
        check_binding("127.0.0.1", "  ")
