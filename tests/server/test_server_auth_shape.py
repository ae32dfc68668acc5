"""The auth object: both `Auth`s register alike; handlers are picked and answered as on LangGraph's server.

What `auth.py` may hold and how the server reads it: the decorators (the same
registry on `langgraph_sdk.Auth` and `actorgraph.server.Auth`), which handler
runs for a resource and action, what `ctx` and the user look like, what each
answer of a handler becomes, the `auth` key of `langgraph.json`, and the
checks at start (a token and auth together, a public address with auth).
"""

from __future__ import annotations

import asyncio
import json
import logging
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import langgraph_sdk
import pytest
import server_auth

from actorgraph import ConfigError
from actorgraph.server import Auth, create_app
from actorgraph.server._access import Access, Guard
from actorgraph.server._config import read_config
from actorgraph.server._serve import auth_of, check_binding
from actorgraph.server._users import RefusedError, User, parameters_of, refusal, user_of

AUTHS = [langgraph_sdk.Auth, Auth]


def registered(auth_class: Any) -> tuple[set[tuple[str, str]], int]:
    """The (resource, action) keys and global handlers the same decorators register on `auth_class`."""
    auth = auth_class()

    async def handler(ctx: Any, value: Any) -> None:
        return None

    def fresh() -> Any:
        async def one(ctx: Any, value: Any) -> None:
            return None

        return one

    auth.on(handler)
    auth.on.threads(fresh())
    auth.on.threads.create(fresh())
    auth.on.threads.create_run(fresh())
    auth.on.assistants.search(fresh())
    auth.on(resources="crons", actions=["read", "search"])(fresh())
    auth.on(resources=["assistants"], actions="read")(fresh())
    auth.on.store(fresh())
    auth.on.store.put(fresh())
    auth.on.store(actions=["get", "delete"])(fresh())
    return set(auth._handlers), len(auth._global_handlers)


def test_the_same_decorators_register_the_same_handlers_on_both():
    assert registered(langgraph_sdk.Auth) == registered(Auth)
    keys, everything = registered(Auth)
    assert everything == 1
    assert ("threads", "*") in keys
    assert ("store", "get") in keys


@pytest.mark.parametrize("auth_class", AUTHS)
def test_both_refuse_the_same_mistakes(auth_class):
    auth = auth_class()

    async def handler(ctx: Any, value: Any) -> None:
        return None

    def sync(ctx: Any, value: Any) -> None:
        return None

    async def no_value(ctx: Any) -> None:
        return None

    auth.on.threads.read(handler)
    for mistake in (
        lambda: auth.on.threads.read(handler),  # twice
        lambda: auth.on.threads.update(sync),
        lambda: auth.on.threads.delete(no_value),
    ):
        with pytest.raises(ValueError):
            mistake()
    auth.authenticate(handler)
    with pytest.raises(ValueError):
        auth.authenticate(handler)


async def who() -> str:
    return "alice"


def knowing(auth_class: Any) -> Any:
    """An `auth_class` object whose authenticate handler names everyone Alice."""
    auth = auth_class()
    auth.authenticate(who)
    return auth


def decide(auth: Any, resource: str, action: str, value: dict[str, Any] | None = None) -> Access:
    user = User({"identity": "alice", "permissions": ("read",), "org": "acme"})
    return asyncio.run(Guard(auth).decide(user, resource, action, value if value is not None else {}))


def picking(auth_class: Any) -> tuple[Any, list[tuple[str, str, str]]]:
    """An auth whose handlers record which of them ran, for what."""
    auth, seen = auth_class(), []

    def named(name: str) -> Any:
        async def handler(ctx: Any, value: Any) -> None:
            seen.append((name, ctx.resource, ctx.action))

        return handler

    auth.authenticate(named("who"))
    auth.on(named("everything"))
    auth.on.threads(named("threads"))
    auth.on.threads.delete(named("threads.delete"))
    auth.on(resources="*", actions="search")(named("any search"))
    return auth, seen


@pytest.mark.parametrize("auth_class", AUTHS)
def test_the_most_specific_handler_runs(auth_class):
    auth, seen = picking(auth_class)
    for resource, action in (
        ("threads", "delete"),
        ("threads", "read"),
        ("crons", "search"),
        ("store", "put"),
    ):
        decide(auth, resource, action)
    assert [name for name, _, _ in seen] == ["threads.delete", "threads", "any search", "everything"]
    assert seen[0][1:] == ("threads", "delete")


@pytest.mark.parametrize("auth_class", AUTHS)
def test_ctx_is_the_auth_objects_own_and_the_user_is_what_authenticate_gave(auth_class):
    auth, seen = knowing(auth_class), []

    @auth.on
    async def look(ctx: Any, value: Any) -> None:
        seen.append((type(ctx), ctx.user.identity, ctx.user["org"], ctx.user.org, list(ctx.permissions)))

    decide(auth, "threads", "read")
    kind, identity, org, also, permissions = seen[0]
    assert kind is auth_class.types.AuthContext
    assert (identity, org, also, permissions) == ("alice", "acme", "acme", ["read"])


@pytest.mark.parametrize("auth_class", AUTHS)
def test_what_each_answer_of_a_handler_becomes(auth_class, caplog):
    answers: dict[str, Any] = {}
    auth = knowing(auth_class)

    @auth.on
    async def answer(ctx: Any, value: Any) -> Any:
        given = answers[ctx.action]
        if isinstance(given, BaseException):
            raise given
        return given

    cases: list[tuple[Any, Any]] = [
        (None, None),
        (True, None),
        ({"owner": "alice"}, {"owner": "alice"}),
        (False, 403),
        (["owner"], 403),
        ({"owner": {"$gt": 1}}, 403),
        (auth_class.exceptions.HTTPException(status_code=429, detail="slow down"), 429),
        (auth_class.exceptions.HTTPException(status_code=500, detail="oops"), 403),
        (AssertionError("not yours"), 403),
        (KeyError("a bug"), 403),
    ]
    for given, wanted in cases:
        answers["read"] = given
        if isinstance(wanted, int):
            with pytest.raises(RefusedError) as refused:
                decide(auth, "threads", "read")
            assert refused.value.status == wanted, given
            assert "a bug" not in refused.value.detail
        else:
            where = decide(auth, "threads", "read").where
            assert (where is None) == (wanted is None), given
            if wanted is not None:
                assert where.matches({"owner": "alice"})
                assert not where.matches({"owner": "bob"})
    assert "a bug" in caplog.text  # logged, with its traceback, never sent


def test_users_are_checked_as_authenticate_gives_them():
    class Account:
        identity = "carol"
        permissions = ("admin",)
        email = "carol@example.org"

    assert user_of("alice").identity == "alice"
    assert user_of({"identity": "bob", "permissions": ["a"]}).permissions == ("a",)
    carol = user_of(Account())
    assert (carol.identity, carol.display_name, carol.email, carol.is_authenticated) == (
        "carol",
        "carol",
        "carol@example.org",
        True,
    )
    for bad in (
        None,
        "",
        "\x1b[2J",
        {"name": "x"},
        {"identity": 7},
        {"identity": "x", "permissions": "admin"},
    ):
        with pytest.raises(ConfigError):
            user_of(bad)


def test_an_authenticate_handler_takes_only_what_the_server_gives():
    async def fine(authorization: str | None, headers: Any, path: str, method: str, scope: Any) -> str:
        return "x"

    async def wants_body(body: dict[str, Any]) -> str:
        return "x"

    assert parameters_of(fine) == {"authorization", "headers", "path", "method", "scope"}
    with pytest.raises(ConfigError, match="needs body"):
        parameters_of(wants_body)


def test_a_handlers_exception_keeps_its_4xx_detail_and_safe_headers():
    made = Auth.exceptions.HTTPException(
        401,
        "expired",
        headers={"WWW-Authenticate": 'Bearer error="invalid_token"', "X-Bad\r\nSet-Cookie": "x"},
    )
    refused = refusal(made, 403)
    assert (refused.status, refused.detail) == (401, "expired")
    assert refused.headers == {"WWW-Authenticate": 'Bearer error="invalid_token"'}
    assert refusal(Auth.exceptions.HTTPException(302, "elsewhere"), 403).status == 403


def test_what_create_app_refuses(tmp_path, caplog):
    auth = server_auth.owners(Auth)
    with pytest.raises(ConfigError, match="not both"):
        create_app({}, db=str(tmp_path / "a.db"), auth=auth, token="t0ken")  # noqa: S106 - a test token
    with pytest.raises(ConfigError, match="not an Auth object"):
        create_app({}, db=str(tmp_path / "a.db"), auth=object())
    with pytest.raises(ConfigError, match="no authenticate handler"):
        create_app({}, db=str(tmp_path / "a.db"), auth=Auth())
    partial = Auth()
    partial.authenticate(server_auth.owners(Auth)._authenticate_handler)
    partial.on.threads(lambda_handler)
    partial.on(resources="runs")(lambda_handler)
    with caplog.at_level(logging.WARNING, logger="actorgraph.server"):
        create_app({}, db=str(tmp_path / "b.db"), auth=partial)
    assert "no handler guards assistants.create" in caplog.text
    assert "store.put" in caplog.text
    assert "threads.read" not in caplog.text
    assert "asked about runs.*" in caplog.text


async def lambda_handler(ctx: Any, value: Any) -> None:
    return None


def test_binding_beyond_loopback_with_auth_needs_no_token():
    check_binding("0.0.0.0", None, auth=True)  # noqa: S104 - checked, not bound
    with pytest.raises(ConfigError, match="give one"):
        check_binding("127.0.0.1", "t0ken", auth=True)
    with pytest.raises(ConfigError, match="auth handler"):
        check_binding("0.0.0.0", None)  # noqa: S104


AUTH_FILE = """
from langgraph_sdk import Auth

auth = Auth()


@auth.authenticate
async def who(authorization: str | None) -> str:
    if authorization != "Bearer sesame":
        raise Auth.exceptions.HTTPException(status_code=401, detail="say the word")
    return "ali"


@auth.on
async def mine(ctx, value):
    value.setdefault("metadata", {})["owner"] = ctx.user.identity
    return {"owner": ctx.user.identity}
"""

GRAPH_FILE = """
import actorgraph as ag

graph = ag.Graph()
graph.add_vertex("same", lambda state: state).add_edge(ag.START, "same").add_edge("same", ag.END)
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "auth_served.py").write_text(AUTH_FILE)
    (tmp_path / "graph_served.py").write_text(GRAPH_FILE)
    config = {
        "dependencies": ["."],
        "graphs": {"agent": "./graph_served.py:graph"},
        "auth": {"path": "./auth_served.py:auth", "disable_studio_auth": True},
    }
    (tmp_path / "langgraph.json").write_text(json.dumps(config))
    return tmp_path


def test_the_config_names_the_auth_object(project, monkeypatch):
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.delitem(sys.modules, "auth_served", raising=False)
    with pytest.warns(UserWarning, match="auth.disable_studio_auth"):
        settings = read_config(project / "langgraph.json")
    assert settings.auth == "./auth_served.py:auth"
    assert isinstance(auth_of(settings), langgraph_sdk.Auth)
    for bad, words in (('"./auth.py:auth"', "must be"), ('{"path": "nocolon"}', "names no auth")):
        (project / "bad.json").write_text(f'{{"graphs": {{}}, "auth": {bad}}}')
        with pytest.raises(ConfigError, match=words):
            read_config(project / "bad.json")
    (project / "missing.json").write_text('{"graphs": {}, "auth": {"path": "./nowhere.py:auth"}}')
    with pytest.raises(ConfigError, match=r"nowhere\.py"):
        auth_of(read_config(project / "missing.json"))


@pytest.mark.slow
def test_the_command_serves_langgraphs_auth_py_as_it_is(project):
    port = free_port()
    command = [sys.executable, "-m", "actorgraph.cli", "server", "--config", "langgraph.json"]
    command += ["--port", str(port), "--db", str(project / "cli.db")]
    child = subprocess.Popen(command, cwd=project, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        url = f"http://127.0.0.1:{port}"
        wait_until_up(url, child)
        run = {"assistant_id": "agent", "input": {"x": 1}}
        assert httpx.post(f"{url}/runs/wait", json=run, timeout=30).status_code == 401
        sesame = {"Authorization": "Bearer sesame"}
        assert httpx.post(f"{url}/runs/wait", json=run, headers=sesame, timeout=30).json() == {"x": 1}
        made = httpx.post(f"{url}/threads", json={}, headers=sesame, timeout=30).json()
        assert made["metadata"] == {"owner": "ali"}
    finally:
        child.terminate()
        child.wait(30)


def free_port() -> int:
    """A free loopback port (found, then released for the child to bind)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_until_up(url: str, child: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 60
    while True:
        try:
            if httpx.get(f"{url}/ok", timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            pass
        assert child.poll() is None, child.stdout.read().decode() if child.stdout else ""
        assert time.monotonic() < deadline, "the server did not start"
        time.sleep(0.1)


def seeing(auth_class: Any) -> tuple[Any, list[dict[str, Any]]]:
    """An auth recording what authenticate was given, hiding the assistants, filtering items by owner."""
    auth, seen = auth_class(), []

    @auth.authenticate
    async def authenticate(  # noqa: PLR0913, PLR0917 - every part of a request LangGraph's handlers take
        authorization: str | None, path: str, method: str, path_params: Any, query_params: Any, headers: Any
    ) -> str:
        seen.append({"path": path, "method": method, "path_params": dict(path_params or {})})
        seen[-1] |= {
            "query": dict(query_params),
            "agent": headers.get(b"x-agent"),
            "authorization": authorization,
        }
        return (authorization or "").removeprefix("Bearer ")

    @auth.on.assistants
    async def hidden(ctx: Any, value: Any) -> dict[str, Any]:
        return {"owner": ctx.user.identity}

    @auth.on.store.search
    async def theirs(ctx: Any, value: Any) -> dict[str, Any]:
        if ctx.user.identity == "loose":
            return {"$or": [{"owner": "a"}, {"owner": "b"}]}
        return {"owner": ctx.user.identity}

    return auth, seen


@pytest.mark.slow
@pytest.mark.parametrize("auth_class", AUTHS)
def test_authenticate_is_given_the_request_and_filters_reach_assistants_and_store_items(
    serve_with, auth_class
):
    auth, seen = seeing(auth_class)
    server = serve_with(auth=auth)
    alice = server.client(headers={"Authorization": "Bearer alice", "X-Agent": "tests"})
    with pytest.raises(httpx.HTTPStatusError) as missing:
        alice.threads.get("t-9")
    assert missing.value.response.status_code == 404
    assert seen[-1] == {
        "path": "/threads/t-9",
        "method": "GET",
        "path_params": {"thread_id": "t-9"},
        "query": {},
        "agent": b"tests",
        "authorization": "Bearer alice",
    }
    assert alice.assistants.search() == []  # the system assistants have no owner: hidden from everyone
    with pytest.raises(httpx.HTTPStatusError) as hidden:
        alice.assistants.get("counter")
    assert (
        hidden.value.response.json()["detail"] == "assistant 'counter' not found"
    )  # the graphs are not named
    for owner in ("alice", "bob"):
        alice.store.put_item(["notes"], owner, {"owner": owner, "kind": "note"})
    assert [i["key"] for i in alice.store.search_items(["notes"])["items"]] == ["alice"]
    assert [i["key"] for i in alice.store.search_items(["notes"], filter={"kind": "note"})["items"]] == [
        "alice"
    ]
    assert alice.store.search_items(["notes"], filter={"owner": "bob"})["items"] == []
    loose = server.client(headers={"Authorization": "Bearer loose"})
    with pytest.raises(httpx.HTTPStatusError) as refused:
        loose.store.search_items(["notes"])  # a filter the store cannot take: refused, not widened
    assert refused.value.response.status_code == 403


@pytest.mark.slow
def test_a_browsers_preflight_needs_no_credentials(serve_with):
    server = serve_with(auth=server_auth.owners(Auth), cors_origins=["http://localhost:3000"])
    asked = {"Origin": "http://localhost:3000", "Access-Control-Request-Method": "POST"}
    reply = server.http.request("OPTIONS", "/threads/search", headers=asked)
    assert reply.status == 200
    assert reply.headers["access-control-allow-origin"] == "http://localhost:3000"
    refused = server.http.post("/threads/search", "{}", content_type="application/json", headers=asked)
    assert refused.status == 401
    assert refused.headers["access-control-allow-origin"] == "http://localhost:3000"  # the UI can read why
