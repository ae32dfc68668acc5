"""A process whose vertex asks and waits live: `live_child.py DB THREAD LEDGER`.

The graph `asking(ledger)` has one vertex that notes "before" in LEDGER (an
fsynced side effect), asks "ship?", and notes "after:<answer>" before it
returns. The process runs THREAD on the SQLite file DB until it pauses,
prints {"paused": id} and keeps the vertex waiting in its actor. Each line
"count" on stdin prints {"waiting": n} (how many vertices wait); any other
line (or EOF) closes the graph and prints {"closed": n, "left": m}: how many
vertices waited before and after.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from ledger import note

import actorgraph as ag
from actorgraph._actors import live
from actorgraph.checkpoint import SqliteCheckpointer


def asking(ledger: str) -> ag.Graph:
    """START -> review (note, ask, note) -> END."""

    def review(state: dict[str, Any]) -> dict[str, Any]:
        note(ledger, "before")
        answer = ag.interrupt("ship?")
        note(ledger, f"after:{answer}")
        return {**state, "answer": answer}

    g: ag.Graph = ag.Graph(name="asking")
    g.add_vertex("review", review)
    g.add_edge(ag.START, "review")
    g.add_edge("review", ag.END)
    return g


def _say(report: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(report) + "\n")
    sys.stdout.flush()


def main() -> int:
    db, thread, ledger = sys.argv[1:]
    with SqliteCheckpointer(db) as store:
        app = asking(ledger).compile(store)
        paused = app.invoke({"n": 1}, thread_id=thread)
        _say({"paused": paused.interrupts[0].id})
        while sys.stdin.readline().strip() == "count":
            _say({"waiting": live.waiting()})
        waiting = live.waiting()
        app.close()
        _say({"closed": waiting, "left": live.waiting()})
    return 0


if __name__ == "__main__":
    sys.exit(main())
