"""A real server for each test: uvicorn on a free loopback port, in a thread of the test, on a real store.

`served(...)` starts `create_app(...)` with its lifespan (so the graphs' actors
stop when the test ends), waits until it listens, and stops it afterwards, every
wait bounded. The clients are real: `langgraph-sdk` over HTTP, and raw
`http.client` requests (`tests/web_http.py`) for what a client would never send.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import server_graphs
import uvicorn
from pg_server import POSTGRES
from web_http import Http

from actorgraph.server import create_app

WAIT = 30.0


@dataclass
class Running:
    """A server under test: its port, its app, and clients of it."""

    port: int
    app: Any

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def client(self, **options: Any) -> Any:
        from langgraph_sdk import get_sync_client

        return get_sync_client(url=self.url, timeout=WAIT, **options)

    @property
    def http(self) -> Http:
        return Http(self.port)


@contextmanager
def serving(graphs: dict[str, Any] | None = None, **options: Any) -> Iterator[Running]:
    """`create_app(graphs, **options)` served on a free loopback port until the block ends."""
    app = create_app(server_graphs.graphs() if graphs is None else graphs, **options)
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    server = uvicorn.Server(
        uvicorn.Config(app, log_level="warning", lifespan="on", timeout_graceful_shutdown=5)
    )
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + WAIT
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            msg = "the test server did not start"
            raise RuntimeError(msg)
        time.sleep(0.01)
    try:
        yield Running(sock.getsockname()[1], app)
    finally:
        server.should_exit = True
        thread.join(WAIT)
        sock.close()
        assert not thread.is_alive(), "the test server did not stop"


@pytest.fixture(params=["sqlite", POSTGRES])
def store_options(request: pytest.FixtureRequest, tmp_path: Path) -> dict[str, Any]:
    """Where a server keeps its threads: a SQLite file, or a fresh PostgreSQL database."""
    if request.param == "postgres":
        return {"dsn": request.getfixturevalue("postgres_db")}
    return {"db": str(tmp_path / "server.db")}


@pytest.fixture
def running(store_options: dict[str, Any]) -> Iterator[Running]:
    """A server of the test graphs on each store."""
    with serving(**store_options) as server:
        yield server


@pytest.fixture
def sqlite_server(tmp_path: Path) -> Iterator[Running]:
    """A server of the test graphs on a SQLite file."""
    with serving(db=str(tmp_path / "server.db")) as server:
        yield server


@pytest.fixture
def serve_with(tmp_path: Path) -> Iterator[Callable[..., Any]]:
    """Start servers with other options (stopped when the test ends)."""
    stack: list[Any] = []

    def start(graphs: dict[str, Any] | None = None, **options: Any) -> Running:
        if not {"db", "dsn", "checkpointer"} & options.keys():
            options["db"] = str(tmp_path / "server.db")
        context = serving(graphs, **options)
        stack.append(context)
        return context.__enter__()

    yield start
    for context in reversed(stack):
        context.__exit__(None, None, None)
