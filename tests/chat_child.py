"""One chat turn in its own process: `chat_child.py DB THREAD TEXT`.

The thread remembers: each process sends only the new user message, and the
reply vertex sees the whole conversation so far (it answers with how many
messages it saw). Prints the state after the turn as one JSON line.
"""

from __future__ import annotations

import json
import sys
from typing import Annotated, Any, TypedDict

import actorgraph as ag
from actorgraph.checkpoint import SqliteCheckpointer
from actorgraph.merge import append


class Chat(TypedDict):
    messages: Annotated[list[str], append]


def reply(state: Chat) -> dict[str, Any]:
    seen = len(state["messages"])
    return {"messages": [f"bot saw {seen}"]}  # only what it adds (returns="update")


def graph() -> ag.Graph[Chat]:
    g: ag.Graph[Chat] = ag.Graph(state=Chat, returns="update", name="chat")
    g.add_vertex("reply", reply)
    g.add_edge(ag.START, "reply")
    g.add_edge("reply", ag.END)
    return g


def main() -> None:
    path, thread, text = sys.argv[1:4]
    with SqliteCheckpointer(path) as store, graph().compile(store) as app:
        result = app.invoke({"messages": [text]}, thread_id=thread)
    sys.stdout.write(json.dumps(result.state) + "\n")


if __name__ == "__main__":
    main()
