"""A driver with many Ray tasks in flight, for the orphan test: `ray_orphan_child.py run|resume DB LEDGER`.

`split` sends `TASKS` (environment, default 200) branches to `work`, all in flight
at once; each branch appends "start:<i>" to LEDGER, sleeps `SLEEP` seconds
(default 3), then appends "end:<i>" (its side effect) and returns. In `run`
mode the child prints one JSON line, `{"pid": ..., "session_dir": ...}`, once
Ray is up, so the test can find every process of its Ray after it kills the child.
With ADDRESS set the child joins that cluster instead of starting a Ray of its own.
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any

from ledger import note

import actorgraph as ag
from actorgraph.checkpoint import SqliteCheckpointer
from actorgraph.merge import append, by_key
from actorgraph.ray import RayBackend  # sets Ray's sandbox settings before Ray is imported

TASKS = int(os.environ.get("TASKS", "200"))
SLEEP = float(os.environ.get("SLEEP", "3"))


def build(ledger: str) -> ag.Graph:
    """START -> split -> Send x TASKS -> work -> END."""

    def work(state: dict[str, Any]) -> dict[str, Any]:
        note(ledger, f"start:{state['item']}")
        time.sleep(SLEEP)
        note(ledger, f"end:{state['item']}")
        return {"done": [state["item"]]}

    g: ag.Graph = ag.Graph(merge=by_key({"done": append}), name="orphans")
    g.add_vertex("split", lambda s: s)
    g.add_vertex("work", work, concurrency=TASKS, returns="update")
    g.add_edge(ag.START, "split")
    g.add_conditional_edges("split", lambda s: [ag.Send("work", {"item": i}) for i in range(TASKS)], ["work"])
    g.add_edge("work", ag.END)
    return g


def main(argv: list[str]) -> int:
    mode, target, ledger = argv
    store = SqliteCheckpointer(target)
    backend = RayBackend(os.environ.get("ADDRESS") or "local", num_cpus=2).start()
    import ray  # after the backend set Ray's sandbox settings

    node = ray._private.worker._global_node  # the session folder of this driver's Ray
    session = node.get_session_dir_path() if node is not None else None
    print(json.dumps({"pid": os.getpid(), "session_dir": session}), flush=True)  # noqa: T201 - the test reads it
    with build(ledger).compile(store, backend=backend) as app:
        result = app.invoke({"done": []} if mode == "run" else None, thread_id="t")
    done = {"status": result.status, "done": len(result.state["done"])}
    print(json.dumps(done), flush=True)  # noqa: T201 - the test reads it
    store.close()
    backend.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
