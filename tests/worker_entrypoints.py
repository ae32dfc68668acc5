"""Entrypoints the worker tests run in worker processes, written as a user writes a module of them.

Only child processes import it (the service that submits, the workers, the
command line): like a service reading its database's address, it opens the
store the processes share at import, `$WORKER_DSN` (PostgreSQL) or
`$WORKER_DB` (SQLite). Every task writes `start:NAME` and `end:NAME` to the
ledger `$WORKER_LEDGER` (fsynced: a SIGKILL loses no line), so a test counts
which task calls ran. `step(2, ...)` waits while the file `$WORKER_HOLD`
exists, so a test can kill a worker inside the third of five tasks, the first
two recorded.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from ledger import note

from actorgraph import interrupt
from actorgraph.checkpoint import PostgresCheckpointer, SqliteCheckpointer
from actorgraph.func import entrypoint, task

checkpointer = (
    PostgresCheckpointer(os.environ["WORKER_DSN"])
    if os.environ.get("WORKER_DSN")
    else SqliteCheckpointer(os.environ["WORKER_DB"])
)


def _ledger(line: str) -> None:
    note(os.environ["WORKER_LEDGER"], line)


@task
def draft(topic: str) -> str:
    """Write the draft (once: a resumed run gets it from the record)."""
    _ledger("start:draft")
    _ledger("end:draft")
    return f"a draft about {topic}"


@task
def approve(text: str) -> str:
    """Ask a person, inside a task, whether the draft goes out."""
    _ledger("start:approve")
    verdict: str = interrupt({"approve": text})
    _ledger("end:approve")
    return verdict


@entrypoint(checkpointer=checkpointer)
def review(topic: str) -> dict[str, Any]:
    """The functional API guide's review loop: a task writes, a person approves in another task."""
    text = draft(topic).result()
    verdict = approve(text).result()
    return {"text": text, "verdict": verdict}


HELD_STEP = 2


@task
def step(i: int, total: int) -> int:
    """One of five steps in a row; the third waits while `$WORKER_HOLD` exists."""
    _ledger(f"start:t{i}")
    hold = os.environ.get("WORKER_HOLD")
    while i == HELD_STEP and hold and Path(hold).exists():
        time.sleep(0.05)
    _ledger(f"end:t{i}")
    return total * 2 + i


@entrypoint(checkpointer=checkpointer)
def five(start: int) -> int:
    """Five tasks one after the other, each recorded when it finishes."""
    total = start
    for i in range(5):
        total = step(i, total).result()
    return total
