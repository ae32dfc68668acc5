"""A run of a described graph in its own process, killed with SIGKILL on purpose, then resumed.

    exactness_child.py run DB THREAD LEDGER GRAPH_JSON (--after-step K | --in-task TOKEN [--once TOKEN])
    exactness_child.py resume DB THREAD LEDGER GRAPH_JSON --out PATH
    exactness_child.py answer DB THREAD LEDGER GRAPH_JSON --interrupt-at TOKEN --out PATH

DB is a SQLite file, or a PostgreSQL connection string (`host=...`). With
`--nest N` the graph runs inside N levels of subgraphs
(`exactness_graphs.build_nested`); `--after-step` then counts the innermost
run's supersteps. With `--interrupt-at TOKEN`, that task calls
`ag.interrupt("q")`: `run` then exits with status 5 once the run pauses, and
`answer` continues the thread with `Command(resume="yes")`.

`run` starts the graph (`exactness_graphs.build`) on a SQLite store (durability
"sync") and kills its own process with SIGKILL, either right after superstep K
commits (a listener on `SuperstepCommitted`), or from inside the task with TOKEN,
once the task with the `--once` token of the same superstep is stored. It exits
with status 3 if the run ends without being killed.

`resume` continues the thread with `invoke(None, ...)` and writes
`{"status": ..., "state": ...}` as JSON to PATH.

Every task that returns writes "<mode> <token>" to LEDGER (fsynced), so the test
can tell which tasks ran, and in which process.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import time
from typing import Any

import exactness_graphs as eg

import actorgraph as ag
from actorgraph.checkpoint import PostgresCheckpointer, SqliteCheckpointer
from actorgraph.events import Event, SuperstepCommitted

NOT_KILLED = 3
WAITED_IN_VAIN = 4
PAUSED = 5


def die() -> None:
    """SIGKILL this process: no cleanup, no flush, as a crash would."""
    os.kill(os.getpid(), signal.SIGKILL)


class LedgerProbe(eg.Probe):
    """Writes each finished task to the ledger; kills the process inside one task if asked."""

    def __init__(self, ledger: str, mode: str, store: Any, thread: str) -> None:
        super().__init__()
        self.ledger = ledger
        self.mode = mode
        self.store = store
        self.thread = thread
        self.kill_in: str | None = None
        self.once: str | None = None
        self.interrupt_at: str | None = None

    def started(self, token: str) -> None:
        if token == self.interrupt_at:
            ag.interrupt("q")
        if token != self.kill_in:
            return
        if self.once is not None:
            self.wait_until_stored(self.once.rpartition("@")[0])
        die()

    def wait_until_stored(self, task_id: str, timeout: float = 30.0) -> None:
        """Poll the store until `task_id`'s result is written in the superstep under way."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            head = self.store.get(self.thread)
            if head is not None and task_id in self.store.get_writes(self.thread, head.checkpoint_id):
                return
            time.sleep(0.005)
        os._exit(WAITED_IN_VAIN)  # not sys.exit: in a vertex that would be reported as its error

    def finished(self, token: str) -> None:
        with open(self.ledger, "a") as f:  # noqa: PTH123 - a plain append is the point
            f.write(f"{self.mode} {token}\n")
            f.flush()
            os.fsync(f.fileno())


def killer(step: int, depth: int) -> Any:
    """A listener that kills the process once superstep `step` of the run at `depth` has committed."""

    def listen(event: Event) -> None:
        at = len(event.namespace.split("|")) if event.namespace else 0
        if isinstance(event, SuperstepCommitted) and event.step == step and at == depth:
            die()

    listen.kinds = {SuperstepCommitted}  # type: ignore[attr-defined]
    return listen


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=["run", "resume", "answer"])
    parser.add_argument("db")
    parser.add_argument("thread")
    parser.add_argument("ledger")
    parser.add_argument("graph")
    parser.add_argument("--after-step", type=int)
    parser.add_argument("--in-task")
    parser.add_argument("--once")
    parser.add_argument("--out")
    parser.add_argument("--nest", type=int, default=0)
    parser.add_argument("--interrupt-at")
    args = parser.parse_args(argv)
    desc = json.loads(args.graph)
    store: Any = PostgresCheckpointer(args.db) if args.db.startswith("host=") else SqliteCheckpointer(args.db)
    probe = LedgerProbe(args.ledger, args.mode, store, args.thread)
    probe.interrupt_at = args.interrupt_at
    listeners = [killer(args.after_step, args.nest)] if args.after_step is not None else []
    graph = eg.build_nested(desc, args.nest)
    try:
        with graph.compile(store, durability="sync", listeners=listeners) as app:
            if args.mode == "run":
                probe.kill_in, probe.once = args.in_task, args.once
                paused = app.invoke(eg.initial_state(desc), thread_id=args.thread, context=probe)
                return PAUSED if paused.status == "interrupted" else NOT_KILLED
            answer = ag.Command(resume="yes") if args.mode == "answer" else None
            result = app.invoke(answer, thread_id=args.thread, context=probe)
            with open(args.out, "w") as f:  # noqa: PTH123 - one small file
                json.dump({"status": result.status, "state": result.state}, f)
            return 0
    finally:
        store.close()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
