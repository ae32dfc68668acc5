"""A run of a described graph in its own process, killed with SIGKILL on purpose, then resumed.

    exactness_child.py run DB THREAD LEDGER GRAPH_JSON (--after-step K | --in-task TOKEN [--once TOKEN])
    exactness_child.py resume DB THREAD LEDGER GRAPH_JSON --out PATH

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

from actorgraph.checkpoint import SqliteCheckpointer
from actorgraph.events import Event, SuperstepCommitted

NOT_KILLED = 3
WAITED_IN_VAIN = 4


def die() -> None:
    """SIGKILL this process: no cleanup, no flush, as a crash would."""
    os.kill(os.getpid(), signal.SIGKILL)


class LedgerProbe(eg.Probe):
    """Writes each finished task to the ledger; kills the process inside one task if asked."""

    def __init__(self, ledger: str, mode: str, store: SqliteCheckpointer, thread: str) -> None:
        super().__init__()
        self.ledger = ledger
        self.mode = mode
        self.store = store
        self.thread = thread
        self.kill_in: str | None = None
        self.once: str | None = None

    def started(self, token: str) -> None:
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


def killer(step: int) -> Any:
    """A listener that kills the process once superstep `step` has committed."""

    def listen(event: Event) -> None:
        if isinstance(event, SuperstepCommitted) and event.step == step:
            die()

    listen.kinds = {SuperstepCommitted}  # type: ignore[attr-defined]
    return listen


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=["run", "resume"])
    parser.add_argument("db")
    parser.add_argument("thread")
    parser.add_argument("ledger")
    parser.add_argument("graph")
    parser.add_argument("--after-step", type=int)
    parser.add_argument("--in-task")
    parser.add_argument("--once")
    parser.add_argument("--out")
    args = parser.parse_args(argv)
    desc = json.loads(args.graph)
    store = SqliteCheckpointer(args.db)
    probe = LedgerProbe(args.ledger, args.mode, store, args.thread)
    listeners = [killer(args.after_step)] if args.after_step is not None else []
    try:
        with eg.build(desc).compile(store, durability="sync", listeners=listeners) as app:
            if args.mode == "run":
                probe.kill_in, probe.once = args.in_task, args.once
                app.invoke(eg.initial_state(desc), thread_id=args.thread, context=probe)
                return NOT_KILLED
            result = app.invoke(None, thread_id=args.thread, context=probe)
            with open(args.out, "w") as f:  # noqa: PTH123 - one small file
                json.dump({"status": result.status, "state": result.state}, f)
            return 0
    finally:
        store.close()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
