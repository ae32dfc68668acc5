"""CSRF tokens bound to the session they were shown to: the token the login page shows an anonymous
visitor does not authorize a logged-in person's POST, one session's token not another's, a bearer
script's not a browser session's; sessions are random per login, and odd cookies are refused, not 500."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

import pytest
from web_http import Http, field_of, served

import actorgraph as ag
from actorgraph.web import app

pytestmark = pytest.mark.timeout(60)

TOKEN = "csrf-test-token-0123456789"  # noqa: S105 - a test token
BEARER = {"Authorization": f"Bearer {TOKEN}"}


def logged_in(port: int) -> Http:
    person = Http(port)
    csrf = field_of(person.get("/login").text, "csrf")
    reply = person.post("/login", urlencode({"csrf": csrf, "token": TOKEN}))
    assert reply.status == 303, reply.text
    return person


def answer(http: Http, csrf: str, interrupt_id: str, text: str, **options: Any) -> int:
    body = urlencode({"csrf": csrf, "interrupt_id": interrupt_id, "text": text})
    return http.post("/threads/t1/answer", body, **options).status


def test_the_login_pages_anonymous_token_does_not_authorize_a_logged_in_post(
    graph: ag.CompiledGraph[Any],
) -> None:
    with served(app(graph, token=TOKEN)) as server:
        anonymous_csrf = field_of(Http(server.port).get("/login").text, "csrf")
        ada = logged_in(server.port)
        page = ada.get("/threads/t1")
        interrupt_id = field_of(page.text, "interrupt_id")
        ada_csrf = field_of(page.text, "csrf")
        assert ada_csrf != anonymous_csrf
        assert answer(ada, anonymous_csrf, interrupt_id, "forged") == 403
        assert field_of(ada.get("/login").text, "csrf") == ada_csrf  # her login page shows her own token
        assert graph.get_state("t1").status == "interrupted"
        assert answer(ada, ada_csrf, interrupt_id, "yes") == 303


def test_one_sessions_token_does_not_authorize_anothers(graph: ag.CompiledGraph[Any]) -> None:
    with served(app(graph, token=TOKEN)) as server:
        ada, bob = logged_in(server.port), logged_in(server.port)
        assert ada.cookies != bob.cookies  # a random session per login, not one cookie for everyone
        assert TOKEN not in next(iter(ada.cookies.values()))
        page = ada.get("/threads/t1")
        ada_csrf, interrupt_id = field_of(page.text, "csrf"), field_of(page.text, "interrupt_id")
        bob_csrf = field_of(bob.get("/threads/t1").text, "csrf")
        assert bob_csrf != ada_csrf
        assert answer(bob, ada_csrf, interrupt_id, "bob with ada's token") == 403
        assert answer(ada, bob_csrf, interrupt_id, "ada with bob's token") == 403
        assert graph.get_state("t1").status == "interrupted"
        assert answer(bob, bob_csrf, interrupt_id, "bob") == 303


def test_a_bearer_scripts_token_is_its_own(graph: ag.CompiledGraph[Any]) -> None:
    with served(app(graph, token=TOKEN)) as server:
        script = Http(server.port)
        page = script.get("/threads/t1", headers=BEARER)
        assert page.status == 200
        script_csrf, interrupt_id = field_of(page.text, "csrf"), field_of(page.text, "interrupt_id")
        ada = logged_in(server.port)
        assert answer(ada, script_csrf, interrupt_id, "ada with the script's token") == 403
        assert answer(script, script_csrf, interrupt_id, "script", headers=BEARER) == 303


def test_odd_session_cookies_are_refused_not_a_server_error(graph: ag.CompiledGraph[Any]) -> None:
    with served(app(graph, token=TOKEN)) as server:
        ada = logged_in(server.port)
        ((name, value),) = ada.cookies.items()
        sid, _, mac = value.partition(".")
        for odd in (
            "",
            "nodot",
            f"{sid}.",
            f".{mac}",
            f"{sid}x.{mac}",
            f"{sid}.{mac[:-1]}{'1' if mac.endswith('0') else '0'}",  # one digit changed (1 in 16 ends in 0)
            "ünïcødé.ü",
            "a" * 4000,
        ):
            stranger = Http(server.port, cookies={name: odd})
            reply = stranger.get("/threads/t1")
            assert reply.status == 401, odd
        assert ada.get("/threads/t1").status == 200


def test_without_a_token_everyone_is_one_anonymous_visitor(graph: ag.CompiledGraph[Any]) -> None:
    with served(app(graph)) as server:
        first, second = Http(server.port), Http(server.port)
        csrf = field_of(first.get("/login").text, "csrf")
        page = second.get("/threads/t1")
        assert field_of(page.text, "csrf") == csrf
        forged = ("b" if csrf.startswith("a") else "a") + csrf[1:]  # one character changed
        assert answer(second, forged, field_of(page.text, "interrupt_id"), "x") == 403
        assert answer(second, csrf, field_of(page.text, "interrupt_id"), "x") == 303


@pytest.mark.slow
def test_a_restarted_server_refuses_the_old_servers_tokens(graph: ag.CompiledGraph[Any]) -> None:
    with served(app(graph, token=TOKEN)) as old:
        ada = logged_in(old.port)
        page = ada.get("/threads/t1")
        csrf, interrupt_id = field_of(page.text, "csrf"), field_of(page.text, "interrupt_id")
    with served(app(graph, token=TOKEN)) as new:
        ada.port = new.port
        assert ada.get("/threads/t1").status == 401  # a new secret: the old session is not one
        again = logged_in(new.port)
        assert answer(again, csrf, interrupt_id, "old token") == 403
