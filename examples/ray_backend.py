"""The Ray backend: CPU-bound vertices in worker processes, checkpointed by the driver.

A scoring step fans out with `Send` to a CPU-bound vertex; on the thread
backend its tasks share one GIL, on Ray they run in partition processes. A
vertex that asks for resources runs on partitions that hold them. The run is
checkpointed in SQLite by this process, so it resumes after a crash on either
backend.

Run it: python examples/ray_backend.py  (needs `pip install "actorgraph[ray]"`)
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

import actorgraph as ag
from actorgraph.checkpoint import SqliteCheckpointer
from actorgraph.merge import append, by_key
from actorgraph.ray import RayBackend

State = dict[str, Any]


# --8<-- [start:graph]
def score(state: State) -> State:
    """CPU-bound pure Python: holds the GIL for its whole run."""
    rest = {key: value for key, value in state.items() if key != "doc"}
    text = state["doc"]
    value = sum(ord(c) * i for i in range(20_000) for c in text[:4]) % 1000
    return {**rest, "scores": [*state["scores"], (text, value, os.getpid())]}


def split(state: State) -> list[ag.Send]:
    return [ag.Send("score", {**state, "doc": doc}) for doc in state["docs"]]


def report(state: State) -> State:
    return {**state, "best": max(state["scores"], key=lambda s: s[1])[0]}


def build() -> ag.Graph[State]:
    graph: ag.Graph[State] = ag.Graph(merge=by_key({"scores": append}), name="scoring")
    graph.add_vertex("load", lambda s: s)
    graph.add_vertex("score", score, concurrency=16, returns="state")  # it deletes its "doc"
    # runs on partitions that each hold half a CPU (a GPU would be {"num_gpus": 1})
    graph.add_vertex("report", report, resources={"num_cpus": 0.5})
    graph.add_edge(ag.START, "load")
    graph.add_conditional_edges("load", split, ["score"])
    graph.add_edge("score", "report")
    graph.add_edge("report", ag.END)
    return graph


# --8<-- [end:graph]


def main() -> None:
    docs = [f"doc-{i:02d}" for i in range(16)]
    folder = Path(tempfile.mkdtemp())
    # --8<-- [start:run]
    store = SqliteCheckpointer(folder / "runs.db")
    backend = RayBackend()  # starts a local Ray at compile, or joins the one running here
    with build().compile(store, backend=backend) as app:
        result = app.invoke({"docs": docs, "scores": []}, thread_id="scores-1")
    backend.close()  # kills its partitions, and stops Ray if it started it
    store.close()
    processes = {pid for _, _, pid in result.state["scores"]}
    print(f"scored {len(result.state['scores'])} documents in {len(processes)} worker process(es)")
    print(f"best: {result.state['best']}; the driver among them: {os.getpid() in processes}")
    # --8<-- [end:run]


if __name__ == "__main__":
    main()
