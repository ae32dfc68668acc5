"""A parent with a stateful subgraph in its own process, for the crash test.

`stateful_child.py run|resume STORE TARGET THREAD LEDGER`: STORE is "sqlite"
(TARGET a file path) or "postgres" (TARGET a DSN). `run` takes two turns on the
thread; with BLOCK set, the second turn's `slow` vertex never finishes (the test
kills the process there). `resume` continues the thread with `invoke(None)` and
prints its final state as JSON. Every inner vertex writes `start:<name>:<turn>`
and `end:<name>:<turn>` lines to LEDGER (fsynced).
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any

from ledger import note

import actorgraph as ag
from actorgraph.checkpoint import PostgresCheckpointer, SqliteCheckpointer
from actorgraph.merge import append, by_key


def step(name: str, ledger: str | None) -> Any:
    """An inner vertex that logs `name:<turn>` to the state and its start and end to `ledger`."""

    def run(state: dict[str, Any]) -> dict[str, Any]:
        turn = state["turn"]
        if ledger:
            note(ledger, f"start:{name}:{turn}")
        while name == "slow" and turn == 2 and os.environ.get("BLOCK"):
            time.sleep(1)
        if ledger:
            note(ledger, f"end:{name}:{turn}")
        return {"log": [f"{name}:{turn}"]}

    return run


def build(ledger: str | None) -> ag.Graph:
    """START -> agent (a stateful subgraph: note -> slow) -> END; the agent keeps its log between turns."""
    inner: ag.Graph = ag.Graph(name="agent", merge=by_key({"log": append}), returns="update")
    inner.add_vertex("note", step("note", ledger))
    inner.add_vertex("slow", step("slow", ledger))
    inner.add_edge(ag.START, "note")
    inner.add_edge("note", "slow")
    inner.add_edge("slow", ag.END)
    parent: ag.Graph = ag.Graph(name="parent")
    parent.add_vertex(
        "agent",
        inner.compile(checkpointer=True),
        input=lambda s: {"turn": s["turn"], "log": [f"asked:{s['turn']}"]},
        output=lambda final: {"log": final["log"]},
    )
    parent.add_edge(ag.START, "agent")
    parent.add_edge("agent", ag.END)
    return parent


def store(kind: str, target: str) -> Any:
    """The checkpointer the test and its children share."""
    return SqliteCheckpointer(target) if kind == "sqlite" else PostgresCheckpointer(target)


def main() -> None:
    """Run or resume the thread named on the command line."""
    mode, kind, target, thread, ledger = sys.argv[1:6]
    saver = store(kind, target)
    with build(ledger).compile(saver) as app:
        if mode == "run":
            app.invoke({"turn": 1}, thread_id=thread)
            app.invoke({"turn": 2}, thread_id=thread)
        else:
            print(json.dumps(app.invoke(None, thread_id=thread).state))  # noqa: T201 - the report
    saver.close()


if __name__ == "__main__":
    main()
