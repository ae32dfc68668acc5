"""A run in its own process for the crash tests: `crash_child.py run|resume STORE TARGET THREAD LEDGER`.

STORE is "sqlite" (TARGET a file path) or "postgres" (TARGET a DSN). Every vertex
writes "start:<name>" and "end:<name>" lines to LEDGER (fsynced), so the test can
tell which vertices ran, and how often, across processes. With BLOCK set in the
environment, w3 and w4 never finish (the test kills the process).
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from typing import Any

from ledger import note

import actorgraph as ag
from actorgraph.checkpoint import PostgresCheckpointer, SqliteCheckpointer
from actorgraph.merge import append, by_key

WORKERS = [f"w{i}" for i in range(5)]
BLOCKED = {"w3", "w4"}


def worker(name: str, ledger: str | None) -> Callable[[dict[str, Any]], dict[str, Any]]:
    def run(state: dict[str, Any]) -> dict[str, Any]:
        if ledger:
            note(ledger, f"start:{name}")
        if name in BLOCKED and os.environ.get("BLOCK"):
            while True:
                time.sleep(1)
        if ledger:
            note(ledger, f"end:{name}")
        return {**state, "items": [*state["items"], name]}

    return run


def build(ledger: str | None) -> ag.Graph:
    """START -> w0..w4 (one superstep) -> join -> total -> END."""
    g: ag.Graph = ag.Graph(merge=by_key({"items": append}), name="crash")
    for name in WORKERS:
        g.add_vertex(name, worker(name, ledger))
        g.add_edge(ag.START, name)
    g.add_vertex("total", worker("total", ledger))
    g.add_edge(WORKERS, "total")
    g.add_edge("total", ag.END)
    return g


def build_handler(ledger: str | None) -> ag.Graph:
    """START -> pay (always fails) -> on_error handler (blocks with BLOCK) -> END."""

    def pay(state: dict[str, Any]) -> dict[str, Any]:
        if ledger:
            note(ledger, "start:pay")
        raise ConnectionError("payment API down")

    def fallback(state: dict[str, Any], error: BaseException) -> dict[str, Any]:
        if ledger:
            note(ledger, "start:handler")
        while os.environ.get("BLOCK"):
            time.sleep(1)
        if ledger:
            note(ledger, "end:handler")
        return {**state, "paid": False, "why": str(error)}

    g: ag.Graph = ag.Graph(name="handler")
    g.add_vertex("pay", pay, on_error=fallback)
    g.add_edge(ag.START, "pay")
    g.add_edge("pay", ag.END)
    return g


def graph_for(thread: str, ledger: str | None) -> ag.Graph:
    return build_handler(ledger) if thread.startswith("handler") else build(ledger)


def store(kind: str, target: str) -> Any:
    return SqliteCheckpointer(target) if kind == "sqlite" else PostgresCheckpointer(target)


def main(argv: list[str]) -> int:
    mode, kind, target, thread, ledger = argv
    checkpointer = store(kind, target)
    backend = None
    if os.environ.get("CHILD_BACKEND") == "ray":  # the Ray backend's crash tests (test_ray.py)
        from actorgraph.ray import RayBackend

        backend = RayBackend(num_cpus=2)
    with graph_for(thread, ledger).compile(checkpointer, backend=backend) as app:
        if mode == "run":
            app.invoke({"items": []}, thread_id=thread)
        else:
            app.invoke(None, thread_id=thread)
    checkpointer.close()
    if backend is not None:
        backend.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
