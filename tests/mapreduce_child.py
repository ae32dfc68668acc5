"""LangGraph's map-reduce in actorgraph, in its own process: `mapreduce_child.py run|resume DB THREAD LEDGER`.

A schema with an `Annotated` reducer, `Send`s whose payload is only the item,
and update-returning workers. Every worker appends "start:<item>" and
"end:<item>" to LEDGER; with BLOCK set, items 3 and 4 never finish (the test
kills the process there). The final state is printed as JSON.
"""

from __future__ import annotations

import json
import operator
import os
import sys
import time
from typing import Annotated, Any, NotRequired, TypedDict

from ledger import note

import actorgraph as ag
from actorgraph.checkpoint import SqliteCheckpointer

ITEMS = 5


class Research(TypedDict):
    topic: str
    results: Annotated[list[int], operator.add]
    summary: NotRequired[str]


def build(ledger: str | None = None) -> ag.Graph[Research]:
    """plan -> one `work` task per item (Send {"item": i}) -> summarize."""

    def work(payload: dict[str, Any]) -> dict[str, Any]:
        item = payload["item"]
        if ledger:
            note(ledger, f"start:{item}")
        while item >= 3 and os.environ.get("BLOCK"):
            time.sleep(1)
        if ledger:
            note(ledger, f"end:{item}")
        return {"results": [item * item]}

    g: ag.Graph[Research] = ag.Graph(state=Research, returns="update", name="research")
    g.add_vertex("plan", lambda s: None)
    g.add_vertex("work", work)
    g.add_vertex("summarize", lambda s: {"summary": f"{s['topic']}: {sorted(s['results'])}"})
    g.add_edge(ag.START, "plan")
    g.add_conditional_edges("plan", lambda s: [ag.Send("work", {"item": i}) for i in range(ITEMS)], ["work"])
    g.add_edge("work", "summarize")
    g.add_edge("summarize", ag.END)
    return g


def main(argv: list[str]) -> int:
    mode, db, thread, ledger = argv
    with SqliteCheckpointer(db) as store, build(ledger).compile(checkpointer=store) as app:
        given = {"topic": "actors", "results": []} if mode == "run" else None
        print(json.dumps(app.invoke(given, thread_id=thread).state, sort_keys=True), flush=True)  # noqa: T201
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
