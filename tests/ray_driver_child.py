"""A driver of a multi-node Ray cluster: `ray_driver_child.py MODE ADDRESS STORE TARGET THREAD LEDGER`.

The graph: `plan`, then `WORKS` (environment, default 6) branches of `work` sent
with `Send` in one superstep, then `total`. Every vertex appends
"start:<task>:<node id>" to LEDGER before its work and "end:<task>:<node id>"
after it (fsynced: tests/ledger.py), so the test sees where each task ran and
how often. With GO set, a `work` task waits (at most two minutes) until that
file exists before it ends: the test kills a node or the driver meanwhile.

MODE:
- `run`: a new run of THREAD; prints `{"status", "state"}` as one JSON line.
- `resume`: resumes THREAD from the store (`invoke(None)`); prints the same.
- `reconnect`: starts a run, waits until every `work` task has started, leaves
  the cluster with the run in flight (LEAVE=close: `backend.close()`;
  LEAVE=shutdown: `ray.shutdown()` under the open backend), prints what the run
  ended with and whether the first backend's partitions are gone, creates GO,
  then joins the cluster again with a new `RayBackend(address=ADDRESS)` and
  resumes THREAD.

STORE is "sqlite" (TARGET a file) or "postgres" (TARGET a DSN); ADDRESS the
cluster's address, given to `RayBackend(address=...)`.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from ledger import note

import actorgraph as ag
from actorgraph.checkpoint import PostgresCheckpointer, SqliteCheckpointer
from actorgraph.merge import append, by_key
from actorgraph.ray import RayBackend  # sets Ray's loopback settings before Ray is imported

WORKS = int(os.environ.get("WORKS", "6"))
RETRY = ag.RetryPolicy(max_attempts=4, initial_interval=0.1, jitter=False)


def node() -> str:
    import ray

    return str(ray.get_runtime_context().get_node_id())


def build(ledger: str) -> ag.Graph:
    """START -> plan -> Send x WORKS -> work -> total -> END; every task notes where it ran."""
    go = os.environ.get("GO")

    def plan(state: dict[str, Any]) -> dict[str, Any]:
        note(ledger, f"start:plan:{node()}")
        note(ledger, f"end:plan:{node()}")
        return {"items": []}

    def work(state: dict[str, Any]) -> dict[str, Any]:
        task = f"work-{state['item']}"
        note(ledger, f"start:{task}:{node()}")
        deadline = time.monotonic() + 120
        while go and not Path(go).exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        note(ledger, f"end:{task}:{node()}")
        return {"items": [state["item"] ** 2]}

    def total(state: dict[str, Any]) -> dict[str, Any]:
        note(ledger, f"start:total:{node()}")
        note(ledger, f"end:total:{node()}")
        return {"total": sum(state["items"])}

    g: ag.Graph = ag.Graph(merge=by_key({"items": append}), name="nodes", retry=RETRY)
    g.add_vertex("plan", plan, returns="update")
    g.add_vertex("work", work, returns="update", concurrency=WORKS)
    g.add_vertex("total", total, returns="update")
    g.add_edge(ag.START, "plan")
    g.add_conditional_edges("plan", lambda s: [ag.Send("work", {"item": i}) for i in range(WORKS)], ["work"])
    g.add_edge("work", "total")
    g.add_edge("total", ag.END)
    return g


def store(kind: str, target: str) -> Any:
    return SqliteCheckpointer(target) if kind == "sqlite" else PostgresCheckpointer(target)


def say(**fields: Any) -> None:
    print(json.dumps(fields), flush=True)  # noqa: T201 - the test reads it


def started(ledger: str) -> int:
    path = Path(ledger)
    return path.read_text().count("start:work-") if path.exists() else 0


def _gone(pids: list[int], within: float) -> bool:
    """Whether every process of `pids` ended within `within` seconds."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if not [pid for pid in pids if Path(f"/proc/{pid}").exists()]:
            return True
        time.sleep(0.05)
    return False


def reconnect(address: str, checkpointer: Any, thread: str, ledger: str) -> None:
    """Leave the cluster with the run in flight (LEAVE: close or shutdown), then join it again and resume."""
    import ray

    first = RayBackend(address=address)
    with build(ledger).compile(checkpointer, backend=first) as app:
        handle = app.start({"items": []}, thread_id=thread)
        deadline = time.monotonic() + 120
        while started(ledger) < WORKS and time.monotonic() < deadline:
            time.sleep(0.05)
        pids = [pid for where in first.placement().values() for _, pid in where]
        if os.environ.get("LEAVE") == "shutdown":
            ray.shutdown()  # under the open backend: no answer of its calls will ever land
        else:
            first.close()  # kills its partitions, then ray.shutdown()
        try:
            left = handle.result(60)
            say(left="result", status=left.status)
        except Exception as exc:
            cause = exc.__cause__
            say(left=type(exc).__name__, cause=type(cause).__name__, message=str(cause or exc))
    say(partitions_gone=_gone(pids, 30), closed=first.closed)  # no task of the first driver goes on
    Path(os.environ["GO"]).touch()
    with (
        RayBackend(address=address) as second,
        build(ledger).compile(checkpointer, backend=second) as app,
    ):
        result = app.invoke(None, thread_id=thread)
        first.close()  # closing the first again leaves the second's connection alone
        say(status=result.status, state=result.state, connected=ray.is_initialized())


def main(argv: list[str]) -> int:
    mode, address, kind, target, thread, ledger = argv
    checkpointer = store(kind, target)
    try:
        if mode == "reconnect":
            reconnect(address, checkpointer, thread, ledger)
            return 0
        with (
            RayBackend(address=address) as backend,
            build(ledger).compile(checkpointer, backend=backend) as app,
        ):
            seen = {node: held.get("CPU") for node, held in backend._starter().nodes()}  # what placement read
            say(driver=os.getpid(), partitions=backend.placement(), nodes=seen)
            result = app.invoke({"items": []} if mode == "run" else None, thread_id=thread)
            say(partitions_after=backend.placement())
            say(status=result.status, state=result.state)
    finally:
        checkpointer.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
