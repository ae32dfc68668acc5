"""An entrypoint of five tasks in its own process: `func_child.py run|resume DB THREAD LEDGER [KILL_AFTER]`.

Every task writes "start:t<i>" and "end:t<i>" to LEDGER (fsynced). With
KILL_AFTER=k the process kills itself with SIGKILL right after task k's result
is back in the entrypoint (so recorded). The last line printed is a JSON report.
"""

from __future__ import annotations

import json
import os
import signal
import sys

from ledger import note

from actorgraph.checkpoint import SqliteCheckpointer
from actorgraph.func import entrypoint, task

LEDGER = sys.argv[4]
KILL_AFTER = int(sys.argv[5]) if len(sys.argv) > 5 else -1


@task
def step(i: int, total: int) -> int:
    note(LEDGER, f"start:t{i}")
    note(LEDGER, f"end:t{i}")
    return total * 2 + i


def main() -> None:
    command, db, thread = sys.argv[1:4]
    checkpointer = SqliteCheckpointer(db)

    @entrypoint(checkpointer=checkpointer)
    def five(start: int) -> int:
        total = start
        for i in range(5):
            total = step(i, total).result()
            if i == KILL_AFTER:
                os.kill(os.getpid(), signal.SIGKILL)
        return total

    with five:
        result = five.invoke(1 if command == "run" else None, thread_id=thread)
        print(json.dumps({"status": result.status, "state": result.state}))  # noqa: T201 - the report line
    checkpointer.close()


if __name__ == "__main__":
    main()
