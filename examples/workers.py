"""Queued runs finished by workers: submit runs, let two workers take them, answer a question while they run.

Run it: `python examples/workers.py`. The workers here are threads of this
process on a SQLite file, so the example runs anywhere; in production each is
an `actorgraph worker TARGET --dsn postgresql://...` process, on any machine.
"""

from __future__ import annotations

import tempfile
import threading
from pathlib import Path
from typing import Any

import actorgraph as ag
import actorgraph.worker
from actorgraph.checkpoint import SqliteCheckpointer


def draft(state: dict[str, Any]) -> dict[str, Any]:
    return {**state, "draft": f"notes on {state['topic']}"}


def review(state: dict[str, Any]) -> dict[str, Any]:
    verdict = ag.interrupt({"question": "publish?", "draft": state["draft"]}) if state["ask"] else "yes"
    return {**state, "published": verdict == "yes"}


def flow() -> ag.Graph[Any]:
    g: ag.Graph[Any] = ag.Graph()
    g.add_vertex("draft", draft)
    g.add_vertex("review", review)
    g.add_edge(ag.START, "draft")
    g.add_edge("draft", "review")
    g.add_edge("review", ag.END)
    return g


def main(db: str) -> None:
    stop = threading.Event()
    # --8<-- [start:workers]
    workers = [
        threading.Thread(
            target=actorgraph.worker.run,
            args=(flow,),  # a Graph, a function returning one, or "package.module:graph"
            kwargs={"db": db, "concurrency": 4, "lease": 30.0, "name": f"worker-{i}", "stop": stop},
        )
        for i in range(2)
    ]
    # --8<-- [end:workers]
    for worker in workers:
        worker.start()
    try:
        with SqliteCheckpointer(db) as store, flow().compile(store) as app:
            # --8<-- [start:submit]
            handles = [
                app.submit({"topic": topic, "ask": topic == "tides"}, thread_id=f"notes-{topic}")
                for topic in ("tides", "winds", "waves")
            ]
            for handle in handles:
                handle.wait(timeout=30)  # "done" once a worker stopped the run (finished or paused)
            print({h.thread_id: app.get_state(h.thread_id).status for h in handles})
            # --8<-- [end:submit]
            # --8<-- [start:answer]
            handle = app.submit(ag.Command(resume="yes"), thread_id="notes-tides")  # claimed here
            handle.wait(timeout=30)  # ...and run by a worker
            by = handle.worker()  # "worker-0" or "worker-1"
            print("notes-tides published:", app.get_state("notes-tides").state["published"], by is not None)
            # --8<-- [end:answer]
    finally:
        stop.set()
        for worker in workers:
            worker.join()


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as folder:
        main(str(Path(folder) / "runs.db"))
