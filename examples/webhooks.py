"""Webhooks from actorgraph server: a run POSTed to a receiver when it ends, signed, verified there.

Run it: python examples/webhooks.py [DIRECTORY]

It serves a counter graph on a free loopback port (and a SQLite file in
DIRECTORY, or in a temporary directory) with a webhook secret, starts a receiver
on loopback (allowed explicitly: by default a webhook goes to public addresses
only), creates a run with `langgraph-sdk` and `webhook=`, and prints the run the
receiver got once it verified the signature. Needs the `server` extra and
`pip install langgraph-sdk`.
"""

from __future__ import annotations

import http.server
import json
import queue
import secrets
import socket
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, ClassVar

import uvicorn
from langgraph_sdk import get_sync_client
from webhook_verify import verify  # examples/webhook_verify.py: the standard library only

import actorgraph as ag
from actorgraph.server import Webhooks, create_app

SECRET = secrets.token_urlsafe(32)  # the server's --webhook-secret; the receiver keeps the same
received: queue.Queue[dict[str, Any]] = queue.Queue()


# --8<-- [start:receiver]
class Receiver(http.server.BaseHTTPRequestHandler):
    """Answers 2xx to each verified delivery (acting once per run), 401 to anything else."""

    seen: ClassVar[set[str]] = set()  # the webhook-ids acted on: keep them in your database

    def do_POST(self) -> None:  # noqa: D102 - http.server's name
        body = self.rfile.read(min(int(self.headers.get("content-length") or 0), 10_000_000))
        if not verify(SECRET, self.headers, body):
            self.send_response(401)
        elif self.headers["webhook-id"] in self.seen:
            self.send_response(200)  # delivered again (at least once): acted on already
        else:
            self.seen.add(self.headers["webhook-id"])
            received.put(json.loads(body))  # {"run_id", "thread_id", "status", "values", ...}
            self.send_response(204)
        self.end_headers()


# --8<-- [end:receiver]


def add_one(state: dict[str, Any]) -> dict[str, Any]:
    return {"n": state["n"] + 1}


graph: ag.Graph[Any] = ag.Graph()
graph.add_vertex("add_one", add_one).add_edge(ag.START, "add_one").add_edge("add_one", ag.END)


def make_app(folder: Path) -> Any:
    # --8<-- [start:app]
    webhooks = Webhooks(secret=SECRET, allow=["127.0.0.1"])  # loopback: allowed explicitly
    return create_app({"counter": graph}, db=str(folder / "server.db"), webhooks=webhooks)
    # --8<-- [end:app]


def call(url: str, hook: str) -> dict[str, Any]:
    # --8<-- [start:client]
    client = get_sync_client(url=url)
    thread = client.threads.create()["thread_id"]
    client.runs.create(thread, "counter", input={"n": 1}, webhook=hook)  # a background run
    # --8<-- [end:client]
    return received.get(timeout=30)


def main(folder: Path) -> None:
    hooks = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
    threading.Thread(target=hooks.serve_forever, daemon=True).start()
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(make_app(folder), log_level="warning"))
    serving = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    serving.start()
    while not server.started:
        time.sleep(0.01)
    try:
        run = call(f"http://127.0.0.1:{sock.getsockname()[1]}", f"http://127.0.0.1:{hooks.server_port}/runs")
    finally:
        server.should_exit = True
        serving.join(30)
        hooks.shutdown()
    assert (run["status"], run["values"]) == ("success", {"n": 2}), run
    print("delivered and verified:", run["status"], run["values"])


if __name__ == "__main__":
    if len(sys.argv) > 1:
        main(Path(sys.argv[1]))
    else:
        with tempfile.TemporaryDirectory() as folder:
            main(Path(folder))
