"""Crons on the server: a graph run on a schedule, made with LangGraph's Python client and from Python.

Run it: python examples/serve_crons.py [DIRECTORY]

It serves a graph that counts its runs, on a free loopback port and a SQLite file in
DIRECTORY (or in a temporary directory); makes a cron with `langgraph-sdk` that
runs it every second on one thread, waits for three runs, and deletes the cron;
then adds a daily cron from Python (`actorgraph.server.Crons`) on the same store,
which the client lists. Needs the `server` extra and `pip install langgraph-sdk`.
"""

from __future__ import annotations

import socket
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import uvicorn
from langgraph_sdk import get_sync_client

import actorgraph as ag
from actorgraph.server import Crons, create_app


def count(state: dict[str, Any]) -> dict[str, Any]:
    return {"runs": state.get("runs", 0) + 1, "topic": state.get("topic")}


graph: ag.Graph[Any] = ag.Graph()
graph.add_vertex("count", count).add_edge(ag.START, "count").add_edge("count", ag.END)


def on_a_schedule(url: str) -> int:
    # --8<-- [start:client]
    client = get_sync_client(url=url)
    thread = client.threads.create()["thread_id"]
    cron: Any = client.crons.create_for_thread(  # the SDK types it as a Run; the server sends the cron
        thread,
        "counter",
        schedule="* * * * * *",  # every second: a sixth field is the second
        input={"topic": "news"},
        metadata={"owner": "ada"},
    )
    print("next tick:", cron["next_run_date"])
    while len(client.runs.list(thread)) < 3:  # one run per tick, on the thread
        time.sleep(0.2)
    client.crons.delete(cron["cron_id"])
    # --8<-- [end:client]
    while any(run["status"] in ("pending", "running") for run in client.runs.list(thread)):
        time.sleep(0.1)
    state: Any = client.threads.get_state(thread)
    runs: int = state["values"]["runs"]
    return runs


def from_python(folder: Path) -> str:
    # --8<-- [start:python]
    with Crons(db=str(folder / "server.db")) as crons:
        daily = crons.add("counter", "0 9 * * 1-5", timezone="Europe/Paris", input={"topic": "weekly"})
        print("weekdays at 9 in Paris; next:", time.strftime("%a %H:%M UTC", time.gmtime(daily.next_run_at)))
    # --8<-- [end:python]
    return daily.cron_id


def main(folder: Path) -> None:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    app = create_app({"counter": graph}, db=str(folder / "server.db"))
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
    serving = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    serving.start()
    while not server.started:
        time.sleep(0.01)
    url = f"http://127.0.0.1:{sock.getsockname()[1]}"
    try:
        runs = on_a_schedule(url)
        daily = from_python(folder)
        listed = [c["cron_id"] for c in get_sync_client(url=url).crons.search()]
    finally:
        server.should_exit = True
        serving.join(30)
    assert runs >= 3, runs
    assert listed == [daily], listed
    print("the cron ran at least 3 times; the client lists the daily cron")


if __name__ == "__main__":
    if len(sys.argv) > 1:
        main(Path(sys.argv[1]))
    else:
        with tempfile.TemporaryDirectory() as folder:
            main(Path(folder))
