"""Queued runs through worker processes on PostgreSQL: `python -m benchmarks.workers [--runs N] [--repeat N]`.

Two tables, on a throwaway PostgreSQL server started as the tests start theirs
(`tests/pg_server.py`), with `tests/worker_graphs.py`'s `fan` graph (four
vertices in three supersteps, a by-key merge; `WORKER_PAUSE=0`, so the vertex
work is next to nothing and the figures are the queue's and the engine's cost):

- **throughput**: 1, 2 and 4 `actorgraph worker` processes (`--concurrency 4`
  each) are started and registered; then N runs are submitted one by one
  from this process, and the clock runs from the first submit until the queue
  is empty (the submits overlap the work). Runs per second is N over that time.
- **takeover**: one worker (`--lease L`) takes runs whose vertex sleeps (so it
  is killed with runs in flight), and is killed with SIGKILL; a second worker
  is already running. The figure is the time from the kill until every run the
  dead worker held is taken by the second one (its lease ran out and the
  second looked). The lease runs from the worker's last renewal, which is at
  most a third of a lease before the kill, so the figure lies between 2L/3
  and L plus a poll (0.2 s).

Each figure is the median of `--repeat` runs, with the range. On the 2-core
machines of this project, the workers, PostgreSQL and the submitting process
share two cores, so more workers than cores only help while runs wait on the
database.
"""

from __future__ import annotations

import argparse
import importlib
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from actorgraph.checkpoint import PostgresCheckpointer
from actorgraph.checkpoint._queue import run_queue

TESTS = Path(__file__).resolve().parents[1] / "tests"
sys.path.insert(0, str(TESTS))
wg = importlib.import_module("worker_graphs")

POLL = 0.02


def _start(
    dsn: str, ledger: str, name: str, *, lease: float = 30.0, pause: str = "0"
) -> subprocess.Popen[bytes]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ACTORGRAPH_")}
    env |= {"PYTHONPATH": str(TESTS), "WORKER_DSN": dsn, "WORKER_LEDGER": ledger, "WORKER_PAUSE": pause}
    argv = [sys.executable, "-m", "actorgraph.cli", "worker", "worker_graphs:fan", "--dsn", dsn]
    argv += ["--concurrency", "4", "--lease", str(lease), "--name", name]
    return subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def _stop(workers: list[subprocess.Popen[bytes]]) -> None:
    for w in workers:
        if w.poll() is None:
            w.send_signal(signal.SIGTERM)
    for w in workers:
        try:
            w.wait(30)
        except subprocess.TimeoutExpired:
            w.kill()
            w.wait(5)


def _submit(dsn: str, runs: int, prefix: str) -> None:
    with PostgresCheckpointer(dsn) as store, wg.fan().compile(store) as app:
        for i in range(runs):
            app.submit({"seed": i, "log": [], "total": 0}, thread_id=f"{prefix}-{i}")


def _until(check: Callable[[], object], bound: float = 600.0) -> float:
    """Poll `check()` until true; the monotonic time it became true."""
    deadline = time.monotonic() + bound
    while not check():
        if time.monotonic() > deadline:
            msg = "the workers did not finish within the bound"
            raise RuntimeError(msg)
        time.sleep(POLL)
    return time.monotonic()


def throughput(dsn: str, ledger: str, workers: int, runs: int, prefix: str) -> float:
    """Runs per second through `workers` running processes, from the first submit until the queue is empty."""
    with PostgresCheckpointer(dsn) as store:
        queue = run_queue(store)
        started = [_start(dsn, ledger, f"{prefix}-w{i}") for i in range(workers)]
        try:
            _until(lambda: len([w for w in queue.live_workers() if w.worker.startswith(prefix)]) == workers)
            began = time.monotonic()
            _submit(dsn, runs, prefix)
            ended = _until(lambda: not queue.rows(limit=1))
        finally:
            _stop(started)
        done = sum(1 for i in range(runs) if (row := queue.get(f"{prefix}-{i}")) and row.state == "done")
    if done != runs:
        msg = f"{done} of {runs} runs done"
        raise RuntimeError(msg)
    return runs / (ended - began)


def takeover(dsn: str, ledger: str, lease: float, prefix: str) -> float:
    """Seconds from a worker's SIGKILL until every run it held is taken by another worker."""
    with PostgresCheckpointer(dsn) as store:
        queue = run_queue(store)
        victim = _start(dsn, ledger, f"{prefix}-victim", lease=lease, pause="0.5")
        try:
            _until(queue.live_workers)
            _submit(dsn, 4, prefix)
            _until(lambda: len([r for r in queue.rows() if r.worker == f"{prefix}-victim"]) == 4)
            heir = _start(dsn, ledger, f"{prefix}-heir", lease=lease, pause="0.5")
            _until(lambda: len(queue.live_workers()) >= 2)  # the victim and the heir
            victim.send_signal(signal.SIGKILL)
            killed = time.monotonic()
            victim.wait(10)
            held = [f"{prefix}-{i}" for i in range(4)]
            taken = _until(lambda: all((r := queue.get(t)) and r.worker == f"{prefix}-heir" for t in held))
            _until(lambda: all((r := queue.get(t)) and r.state == "done" for t in held))
        finally:
            _stop([victim, heir] if "heir" in locals() else [victim])
    return taken - killed


@contextmanager
def _database() -> Iterator[str]:
    servers = importlib.import_module("pg_server")
    with servers.PostgresServer() as server:
        yield server.dsn()


def _figure(values: list[float], digits: int) -> str:
    low, mid, high = min(values), statistics.median(values), max(values)
    return f"{mid:.{digits}f} ({low:.{digits}f} to {high:.{digits}f})"


def main() -> None:
    """Print both tables as Markdown."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200, help="runs submitted per throughput figure")
    parser.add_argument("--repeat", type=int, default=3, help="times each figure is measured")
    parser.add_argument("--leases", default="2,5", help="leases (seconds) of the takeover table")
    args = parser.parse_args()
    with _database() as dsn, tempfile.TemporaryDirectory() as scratch:
        ledger = str(Path(scratch) / "ledger")
        print(f"### Queued runs per second ({args.runs} runs of `fan`, PostgreSQL)\n")
        print("| workers (processes x 4 runs each) | runs per second, median (range) |\n|---|---|")
        for workers in (1, 2, 4):
            rates = [
                throughput(dsn, ledger, workers, args.runs, f"t{workers}-{k}") for k in range(args.repeat)
            ]
            print(f"| {workers} | {_figure(rates, 1)} |", flush=True)
        print("\n### From a worker's SIGKILL to its runs going on in another worker\n")
        print("| lease (s) | seconds, median (range) |\n|---|---|")
        for lease in (float(x) for x in args.leases.split(",")):
            times = [takeover(dsn, ledger, lease, f"k{lease:g}-{k}") for k in range(args.repeat)]
            print(f"| {lease:g} | {_figure(times, 2)} |", flush=True)


if __name__ == "__main__":
    main()
