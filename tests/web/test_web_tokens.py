"""The access token: an empty or blank one is refused where the app is made (anyone could send it), and
with a real one, a request carrying an empty credential (`Authorization: Bearer` and nothing after it, an
empty login, an empty session cookie) is refused like any wrong one."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

import pytest
from web_http import Http, field_of, served

import actorgraph as ag
from actorgraph.web import app

pytestmark = pytest.mark.timeout(60)

TOKEN = "token-test-0123456789abcdef"  # noqa: S105 - a test token


@pytest.mark.parametrize("token", ["", " ", "\t\n", "\u3000"])
def test_an_empty_or_blank_token_is_refused_where_the_app_is_made(
    graph: ag.CompiledGraph[Any], token: str
) -> None:
    with pytest.raises(ag.ConfigError, match="blank, which anyone could send") as refused:
        app(graph, token=token)
    assert isinstance(refused.value, ValueError)  # code written against the builtins still catches it
    assert "token_urlsafe" in str(refused.value)  # what to do instead


@pytest.mark.parametrize("token", [b"bytes", 12345])
def test_a_token_that_is_not_text_is_refused(graph: ag.CompiledGraph[Any], token: Any) -> None:
    with pytest.raises(ag.ConfigError, match="give the access token as text"):
        app(graph, token=token)


@pytest.mark.parametrize("header", ["Bearer", "Bearer ", "Bearer    ", "bearer\t", "Bearer \x00"])
def test_an_empty_bearer_credential_is_refused(graph: ag.CompiledGraph[Any], header: str) -> None:
    with served(app(graph, token=TOKEN)) as server:
        for path in ("/threads/t1/state.json", "/", "/threads/t1/status.json"):
            reply = server.get(path, headers={"Authorization": header})
            assert reply.status in (400, 401), (path, header, reply.status)
            assert "topic" not in reply.text
        assert (
            server.get("/threads/t1/state.json", headers={"Authorization": f"Bearer {TOKEN}"}).status == 200
        )


def test_an_empty_login_or_session_cookie_is_refused(graph: ag.CompiledGraph[Any]) -> None:
    with served(app(graph, token=TOKEN)) as server:
        person = Http(server.port)
        csrf = field_of(person.get("/login").text, "csrf")
        assert person.post("/login", urlencode({"csrf": csrf, "token": ""})).status == 401
        assert "actorgraph_session" not in person.cookies
        for cookie in ("", ".", "x.", ".x"):
            forged = Http(server.port, cookies={"actorgraph_session": cookie})
            assert forged.get("/threads/t1/state.json").status == 401, cookie
