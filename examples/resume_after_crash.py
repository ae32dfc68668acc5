"""Resume after a crash: a process is killed mid-superstep; a new one finishes the run.

Run the demo (it writes to a temporary directory):

    python examples/resume_after_crash.py

It starts this file again as a worker process (`run DB LEDGER --hang`), waits
until three of the five parallel vertices have finished, kills the worker with
SIGKILL, and resumes the thread from SQLite. Every vertex writes "start:NAME"
and "end:NAME" to LEDGER, which shows what ran twice.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import actorgraph as ag
from actorgraph.checkpoint import SqliteCheckpointer
from actorgraph.merge import append, by_key

State = dict[str, Any]
THREAD = "batch-1"
WORKERS = [f"w{i}" for i in range(5)]
SLOW = {"w3", "w4"}  # with --hang, these never finish: the process dies first


# --8<-- [start:graph]
def note(ledger: Path, line: str) -> None:
    """Append a line and force it to disk, so it survives the kill."""
    with ledger.open("a") as f:
        f.write(line + "\n")
        f.flush()
        os.fsync(f.fileno())


def worker(name: str, ledger: Path, *, hang: bool) -> Callable[[State], State]:
    def work(state: State) -> State:
        note(ledger, f"start:{name}")
        while hang and name in SLOW:
            time.sleep(0.05)  # stuck: an outage, a deadlock, a machine going down
        note(ledger, f"end:{name}")
        return {**state, "done": [*state["done"], name]}

    return work


def batch(ledger: Path, *, hang: bool = False) -> ag.Graph[State]:
    """START -> w0..w4 (one superstep, in parallel) -> total -> END."""
    graph: ag.Graph[State] = ag.Graph(merge=by_key({"done": append}), name="batch")
    for name in WORKERS:
        graph.add_vertex(name, worker(name, ledger, hang=hang))
        graph.add_edge(ag.START, name)
    graph.add_vertex("total", worker("total", ledger, hang=False))
    graph.add_edge(WORKERS, "total")
    graph.add_edge("total", ag.END)
    return graph


# --8<-- [end:graph]


def run(db: Path, ledger: Path, *, hang: bool) -> None:
    """The worker process: start the run (with --hang it never returns)."""
    # --8<-- [start:run]
    store = SqliteCheckpointer(db)  # durability "sync": each finished task is stored at once
    with batch(ledger, hang=hang).compile(store) as app:
        app.invoke({"done": []}, thread_id=THREAD)
    store.close()
    # --8<-- [end:run]


def finished_tasks(db: Path, ledger: Path) -> set[str]:
    """The tasks of the pending superstep that the store holds as `ok`."""
    store = SqliteCheckpointer(db)
    try:
        with batch(ledger).compile(store) as app:
            results = app.get_state(THREAD).superstep.results
    except ag.ThreadNotFoundError:
        return set()
    finally:
        store.close()
    return {task_id for task_id, result in results.items() if result.ok}


def crash(db: Path, ledger: Path) -> None:
    # --8<-- [start:crash]
    child = subprocess.Popen([sys.executable, __file__, "run", str(db), str(ledger), "--hang"])  # noqa: S603
    deadline = time.monotonic() + 30
    while finished_tasks(db, ledger) != {"w0", "w1", "w2"} and time.monotonic() < deadline:
        time.sleep(0.05)
    child.kill()  # SIGKILL: no cleanup, no chance to write anything more
    child.wait()
    print(f"killed the worker (exit code {child.returncode}) with w0, w1, w2 stored, w3, w4 running")
    # --8<-- [end:crash]
    assert finished_tasks(db, ledger) == {"w0", "w1", "w2"}
    assert child.returncode != 0


def resume(db: Path, ledger: Path) -> None:
    # --8<-- [start:resume]
    store = SqliteCheckpointer(db)  # a new process: only the database is shared
    with batch(ledger).compile(store) as app:
        print(f"before: {app.get_state(THREAD).status}, next {app.get_state(THREAD).next}")
        result = app.invoke(None, thread_id=THREAD)  # runs only w3 and w4, then total
    store.close()
    starts = Counter(line for line in ledger.read_text().split() if line.startswith("start:"))
    print(f"after: {result.status}, {sorted(result.state['done'])}")
    print("vertex runs:", ", ".join(f"{k.removeprefix('start:')}={n}" for k, n in sorted(starts.items())))
    # --8<-- [end:resume]
    assert result.status == "done"
    assert sorted(result.state["done"]) == sorted([*WORKERS, "total"])
    assert starts == {
        "start:w0": 1,
        "start:w1": 1,
        "start:w2": 1,
        "start:w3": 2,
        "start:w4": 2,
        "start:total": 1,
    }


def main(argv: list[str]) -> int:
    match argv:
        case ["run", db, ledger, *flags]:
            run(Path(db), Path(ledger), hang="--hang" in flags)
        case []:
            with tempfile.TemporaryDirectory() as scratch:
                database, ledger_file = Path(scratch) / "runs.db", Path(scratch) / "ledger.txt"
                crash(database, ledger_file)
                resume(database, ledger_file)
        case _:
            print(__doc__)
            return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
