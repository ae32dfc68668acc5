"""Every route of the OpenAPI document, table-driven: none forgets to ask the auth handlers.

The routes are read from the server's own `/openapi.json` (and checked against
its router, so a route left out of the document is not left out here). Each
is sent a well-formed request:

- without credentials: 401, on every route but the public ones (`/ok`,
  `/info`, `/openapi.json`, `/docs`: health, version, route list);
- by a user whose handler denies everything: 403 on every route (each route
  asks the handler before it reads or writes anything);
- by Bob, on Alice's thread, run and checkpoint: 404 on every route that
  names a thread (her thread is a missing thread to him), and nothing of hers
  changed;
- with a token whose authenticate handler fails: 401, without the traceback
  (which is in the log).
"""

from __future__ import annotations

import json
import logging

import pytest
import server_auth
from server_auth import bearer
from web_http import Http, Reply

from actorgraph.server import Auth
from actorgraph.server._users import PUBLIC

pytestmark = pytest.mark.slow  # each test starts a server (uvicorn, the graphs compiled)

RUN = {"assistant_id": "counter", "input": {"n": 1}}
CRON = {"assistant_id": "counter", "schedule": "0 9 * * *", "input": {"n": 1}}
BODIES = {
    ("POST", "/runs/crons"): CRON,
    ("POST", "/threads/{thread_id}/runs/crons"): CRON,
    ("PATCH", "/runs/crons/{cron_id}"): {"schedule": "0 10 * * *"},
    ("POST", "/threads"): {},
    ("PATCH", "/threads/{thread_id}"): {"metadata": {"stolen": True}},
    ("POST", "/threads/{thread_id}/state"): {"values": {"n": 100}},
    ("POST", "/threads/{thread_id}/state/checkpoint"): {"checkpoint": {"checkpoint_id": "{checkpoint_id}"}},
    ("PUT", "/store/items"): {"namespace": ["notes"], "key": "k", "value": {"text": "x"}},
    ("DELETE", "/store/items"): {"namespace": ["notes"], "key": "k"},
    ("POST", "/store/items/search"): {"namespace_prefix": ["notes"]},
}
QUERIES = {("GET", "/store/items"): "?namespace=notes&key=k"}


def routes_of(http: Http, app) -> list[tuple[str, str]]:
    """Every (method, path) of the OpenAPI document, which must be every route of the router."""
    document = json.loads(http.get("/openapi.json").body)
    listed = sorted((method.upper(), path) for path, ops in document["paths"].items() for method in ops)
    routed = sorted(
        (method, route.path)
        for route in app.routes
        for method in route.methods - {"HEAD"}
        if route.path not in ("/openapi.json", "/docs")
    )
    assert listed == routed
    return listed


def send(http: Http, method: str, path: str, ids: dict[str, str], headers: dict[str, str]) -> Reply:
    """A well-formed request to the route, its ids filled in."""
    target = path
    for name, value in ids.items():
        target = target.replace("{" + name + "}", value)
    body = BODIES.get((method, path), RUN if path.endswith(("/runs", "/stream", "/wait")) else {})
    text = json.dumps(body).replace("{checkpoint_id}", ids["checkpoint_id"])
    data = text.encode() if method in ("POST", "PUT", "PATCH", "DELETE") else b""
    return http.request(
        method,
        target + QUERIES.get((method, path), ""),
        data,
        content_type="application/json",
        headers=headers,
    )


IDS = {
    "thread_id": "t-1",
    "run_id": "r-1",
    "assistant_id": "counter",
    "checkpoint_id": "c-1",
    "cron_id": "k-1",
}


def test_every_route_but_the_public_ones_refuses_a_request_without_credentials(serve_with):
    server = serve_with(auth=server_auth.owners(Auth))
    for method, path in routes_of(server.http, server.app):
        reply = send(server.http, method, path, IDS, {})
        if path in PUBLIC:
            assert reply.status == 200, (method, path)
            continue
        assert (method, path, reply.status) == (method, path, 401)
        assert json.loads(reply.body) == {"detail": "unknown token"}
        assert reply.headers["www-authenticate"] == "Bearer"
    assert server.http.get("/nowhere").status == 401  # a path no route has is no way around it


def test_every_route_asks_the_handlers_before_it_does_anything(serve_with):
    server = serve_with(auth=server_auth.deny_all(Auth))
    for method, path in routes_of(server.http, server.app):
        if path in PUBLIC:
            continue
        reply = send(server.http, method, path, IDS, {"Authorization": "Bearer anything"})
        assert (method, path, reply.status) == (method, path, 403)
        assert "forbidden" in json.loads(reply.body)["detail"]


def test_on_alices_thread_every_route_is_404_to_bob_and_changes_nothing(serve_with):
    server = serve_with(auth=server_auth.owners(Auth))
    alice = server.client(headers=bearer("alice"))
    thread = alice.threads.create(metadata={"topic": "hers"})["thread_id"]
    alice.runs.wait(thread, "counter", input={"n": 1})
    run = alice.runs.list(thread)[0]["run_id"]
    checkpoint = alice.threads.get_state(thread)["checkpoint"]["checkpoint_id"]
    before = (alice.threads.get(thread), alice.runs.list(thread), alice.threads.get_history(thread))
    ids = {**IDS, "thread_id": thread, "run_id": run, "checkpoint_id": checkpoint}
    tried = 0
    for method, path in routes_of(server.http, server.app):
        if "{thread_id}" not in path:
            continue
        reply = send(server.http, method, path, ids, bearer("bob"))
        assert (method, path, reply.status) == (method, path, 404)
        assert thread in json.loads(reply.body)["detail"]  # "thread ... not found", as for no thread at all
        tried += 1
    assert tried >= 19  # the thread routes, runs included
    assert (alice.threads.get(thread), alice.runs.list(thread), alice.threads.get_history(thread)) == before


def test_a_failing_authenticate_handler_is_a_401_without_its_traceback(serve_with, caplog):
    server = serve_with(auth=server_auth.owners(Auth))
    with caplog.at_level(logging.ERROR, logger="actorgraph.server"):
        reply = server.http.post(
            "/threads/search",
            "{}",
            content_type="application/json",
            headers={"Authorization": "Bearer token-boom"},
        )
    assert reply.status == 401
    detail = json.loads(reply.body)["detail"]
    assert "its log says why" in detail
    assert "Traceback" not in reply.text
    assert "key server" not in reply.text
    logged = [r for r in caplog.records if r.exc_info]
    assert logged
    assert "key server is down" in str(logged[0].exc_info[1])
