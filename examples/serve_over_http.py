"""A graph served over the LangGraph Server API, driven by LangGraph's own Python client.

Run it: python examples/serve_over_http.py [DIRECTORY]

It serves a chat graph that asks before it answers, on a free loopback port and a
SQLite file in DIRECTORY (or in a temporary directory), streams a run with
`langgraph-sdk`, meets the question, answers it, and stops the server. Needs the
`server` extra and `pip install langgraph-sdk`.
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
from actorgraph.messages import MessagesState, content_of, last_message

# --8<-- [start:app]
from actorgraph.server import create_app


def reply(state: MessagesState) -> dict[str, Any]:
    approved = ag.interrupt({"question": "send the answer?"})
    text = f"you said {content_of(last_message(state))}" if approved == "yes" else "(held back)"
    return {"messages": [("assistant", text)]}


graph: ag.Graph[Any] = ag.Graph(state=MessagesState, returns="update")
graph.add_vertex("reply", reply).add_edge(ag.START, "reply").add_edge("reply", ag.END)


def make_app(folder: Path) -> Any:
    return create_app({"agent": graph}, db=str(folder / "server.db"))  # uvicorn serves it


# --8<-- [end:app]


def talk(url: str) -> list[str]:
    # --8<-- [start:client]
    client = get_sync_client(url=url)
    thread = client.threads.create()["thread_id"]
    hi: dict[str, Any] = {"messages": [{"role": "user", "content": "hi"}]}
    for part in client.runs.stream(thread, "agent", input=hi, stream_mode="updates"):
        if part.event == "updates" and "__interrupt__" in part.data:
            print("asked:", part.data["__interrupt__"][0]["value"]["question"])
    print("thread is", client.threads.get(thread)["status"])  # interrupted
    done: Any = client.runs.wait(thread, "agent", command={"resume": "yes"})
    # --8<-- [end:client]
    return [m["content"] for m in done["messages"]]


def main(folder: Path) -> None:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(make_app(folder), log_level="warning"))
    serving = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    serving.start()
    while not server.started:
        time.sleep(0.01)
    try:
        said = talk(f"http://127.0.0.1:{sock.getsockname()[1]}")
    finally:
        server.should_exit = True
        serving.join(30)
    assert said == ["hi", "you said hi"], said
    print("conversation:", said)


if __name__ == "__main__":
    if len(sys.argv) > 1:
        main(Path(sys.argv[1]))
    else:
        with tempfile.TemporaryDirectory() as folder:
            main(Path(folder))
