"""An API server in a thread of the test, for fixtures wider than one test (a module's server).

`tests/server/conftest.py` serves one server per test with the same pieces; a module that shares one
server between its tests (and checks its actors once it stopped) imports these instead, since a test
module cannot import a conftest by name when several folders are collected.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import uvicorn

from actorgraph.server import create_app

WAIT = 30.0


@dataclass
class Served:
    """A server under test: its port, and clients of it."""

    port: int

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def client(self, **options: Any) -> Any:
        from langgraph_sdk import get_sync_client

        return get_sync_client(url=self.url, timeout=WAIT, **options)


@contextmanager
def served(graphs: dict[str, Any], **options: Any) -> Iterator[Served]:
    """`create_app(graphs, **options)` served by uvicorn on a free loopback port until the block ends."""
    app = create_app(graphs, **options)
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    config = uvicorn.Config(app, log_level="warning", lifespan="on", timeout_graceful_shutdown=5)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + WAIT
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            msg = "the test server did not start"
            raise RuntimeError(msg)
        time.sleep(0.01)
    try:
        yield Served(sock.getsockname()[1])
    finally:
        server.should_exit = True
        thread.join(WAIT)
        sock.close()
        assert not thread.is_alive(), "the test server did not stop"
