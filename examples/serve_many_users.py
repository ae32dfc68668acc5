"""Users who own their threads: LangGraph's custom auth (an `auth.py`) on actorgraph's server.

Run it: python examples/serve_many_users.py [DIRECTORY]

It serves a graph with an `Auth` object whose users own what they create, on a
free loopback port and a SQLite file in DIRECTORY (or in a temporary
directory). Alice runs the graph on a thread of hers; Bob, with his own token,
tries to read it and to list her threads; someone without a token tries too.
Needs the `server` extra and `pip install langgraph-sdk` (for the client only:
the server does not need it).
"""

from __future__ import annotations

import socket
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import uvicorn
from langgraph_sdk import get_sync_client

import actorgraph as ag
import actorgraph.server

# --8<-- [start:auth]
from actorgraph.server import Auth  # or: from langgraph_sdk import Auth (the same file works)

auth = Auth()
USERS = {"token-alice": "alice", "token-bob": "bob"}  # your identity provider in real life


@auth.authenticate
async def authenticate(authorization: str | None) -> str:
    """Who sends the request: the user of its bearer token, or 401."""
    scheme, _, token = (authorization or "").partition(" ")
    if scheme.lower() != "bearer" or token not in USERS:
        raise Auth.exceptions.HTTPException(status_code=401, detail="unknown token")
    return USERS[token]


@auth.on
async def owner_only(ctx: Auth.types.AuthContext, value: dict[str, Any]) -> dict[str, str]:
    """What a user creates is theirs (an `owner` label); what else they touch must be theirs."""
    owner = {"owner": ctx.user.identity}
    value.setdefault("metadata", {}).update(owner)
    return owner


@auth.on.store
async def own_namespace(ctx: Auth.types.AuthContext, value: dict[str, Any]) -> None:
    """A user's store items live under their own first namespace label."""
    value["namespace"] = (ctx.user.identity, *(value.get("namespace") or ()))


@auth.on.assistants
async def shared_assistants(ctx: Auth.types.AuthContext, value: dict[str, Any]) -> bool:
    """The graphs (one assistant each) are everyone's."""
    return True


# --8<-- [end:auth]


def note(state: dict[str, Any]) -> dict[str, Any]:
    return {**state, "noted": True}


graph: ag.Graph[Any] = ag.Graph()
graph.add_vertex("note", note).add_edge(ag.START, "note").add_edge("note", ag.END)


def make_app(folder: Path) -> Any:
    return actorgraph.server.create_app({"agent": graph}, db=str(folder / "server.db"), auth=auth)


def talk(url: str) -> None:
    # --8<-- [start:client]
    alice = get_sync_client(url=url, headers={"Authorization": "Bearer token-alice"})
    bob = get_sync_client(url=url, headers={"Authorization": "Bearer token-bob"})
    thread = alice.threads.create(thread_id="alice-notes")["thread_id"]
    alice.runs.wait(thread, "agent", input={"text": "my secret"})
    print("her thread's owner:", (alice.threads.get(thread)["metadata"] or {})["owner"])
    try:
        bob.threads.get(thread)
    except httpx.HTTPStatusError as refused:
        print("bob reads it:", refused.response.status_code, refused.response.json())
    print("bob's threads:", bob.threads.search())
    try:
        get_sync_client(url=url).threads.search()
    except httpx.HTTPStatusError as refused:
        print("no token:", refused.response.status_code, refused.response.json())
    # --8<-- [end:client]


def main(folder: Path) -> None:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(make_app(folder), log_level="warning"))
    serving = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    serving.start()
    while not server.started:
        time.sleep(0.01)
    try:
        talk(f"http://127.0.0.1:{sock.getsockname()[1]}")
    finally:
        server.should_exit = True
        serving.join(30)


if __name__ == "__main__":
    if len(sys.argv) > 1:
        main(Path(sys.argv[1]))
    else:
        with tempfile.TemporaryDirectory() as folder:
            main(Path(folder))
