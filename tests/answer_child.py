"""A process that answers a paused approval: `answer_child.py STORE TARGET THREAD ANSWER LEDGER [GO]`.

STORE is "sqlite" (TARGET a file path) or "postgres" (TARGET a DSN). The graph
`approval(ledger)` asks one question; each time its vertex goes on past the
question it appends "ran:<answer>" to LEDGER (fsynced) before it returns, so the
test counts side effects across processes. With GO (a file path) the process
waits until that file exists before answering, so several start at once. It
prints "won" or "lost:<who answered first>" and exits 0, or 1 on another error.
With SLEEP set, the vertex sleeps that many seconds after its side effect (the
test kills the process there).
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Any

from ledger import note

import actorgraph as ag
from actorgraph.checkpoint import PostgresCheckpointer, SqliteCheckpointer


def approval(ledger: str) -> ag.Graph:
    """START -> review (asks "ship?") -> END."""

    def review(state: dict[str, Any]) -> dict[str, Any]:
        answer = ag.interrupt("ship?")
        note(ledger, f"ran:{answer}")
        if os.environ.get("SLEEP"):
            time.sleep(float(os.environ["SLEEP"]))
        return {**state, "answer": answer}

    g: ag.Graph = ag.Graph(name="approval")
    g.add_vertex("review", review)
    g.add_edge(ag.START, "review")
    g.add_edge("review", ag.END)
    return g


def open_store(kind: str, target: str) -> Any:
    return SqliteCheckpointer(target) if kind == "sqlite" else PostgresCheckpointer(target)


def main() -> int:
    kind, target, thread, answer, ledger, *go = sys.argv[1:]
    with open_store(kind, target) as store, approval(ledger).compile(checkpointer=store) as app:
        if go:
            while not Path(go[0]).exists():
                time.sleep(0.001)
        try:
            app.invoke(ag.Command(resume=answer), thread_id=thread, answered_by=f"proc-{answer}")
        except ag.AlreadyAnsweredError as exc:
            print(f"lost:{exc.answered_by}", flush=True)  # noqa: T201 - the test reads it
            return 0
        print("won", flush=True)  # noqa: T201 - the test reads it
    return 0


if __name__ == "__main__":
    sys.exit(main())
