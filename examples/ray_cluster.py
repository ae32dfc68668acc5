"""From a laptop to a cluster: the same graph on a local Ray, and on a cluster it joins.

`python examples/ray_cluster.py` starts a local Ray and runs the graph on it.
`python examples/ray_cluster.py --auto` joins the cluster started on this
machine with `ray start --head` (it fails clearly when there is none).

Run it: python examples/ray_cluster.py  (needs `pip install "actorgraph[ray]"`)
"""

from __future__ import annotations

import sys
from typing import Any

import actorgraph as ag
from actorgraph.ray import RayBackend

State = dict[str, Any]


def where(state: State) -> State:
    import ray  # noqa: PLC0415 - runs in a Ray worker

    return {**state, "ran_on": [*state["ran_on"], ray.get_runtime_context().get_node_id()[:8]]}


# --8<-- [start:pinned]
def build() -> ag.Graph[State]:
    graph: ag.Graph[State] = ag.Graph(name="pipeline")
    graph.add_vertex("crawl", where)  # the default partitions, spread over the nodes
    graph.add_vertex("embed", where, resources={"num_cpus": 1})  # partitions that each hold a CPU
    graph.add_edge(ag.START, "crawl")
    graph.add_edge("crawl", "embed")
    graph.add_edge("embed", ag.END)
    return graph


# --8<-- [end:pinned]


def laptop() -> None:
    graph = build()
    # --8<-- [start:laptop]
    backend = RayBackend()  # starts a local Ray at the first compile (a few seconds), on 127.0.0.1
    backend.start()  # optional: pay the start-up cost now rather than at the first compile
    with graph.compile(backend=backend) as app:
        result = app.invoke({"ran_on": []})
    backend.close()  # kills its partitions, and stops the Ray it started
    # --8<-- [end:laptop]
    print(f"local Ray: {result.status}, {len(result.state['ran_on'])} vertices ran on Ray nodes")


def cluster() -> None:
    graph = build()
    # --8<-- [start:auto]
    backend = RayBackend(
        address="auto",  # the cluster started with `ray start --head` (or "HEAD_IP:6379")
        init={},  # on many machines, ship your code to every node: a "runtime_env" with a "working_dir"
    )
    with graph.compile(backend=backend) as app:
        result = app.invoke({"ran_on": []})
    backend.close()  # kills its partitions; the cluster stays up (`ray stop` stops it)
    # --8<-- [end:auto]
    print(f"joined the cluster: {result.status}, {len(result.state['ran_on'])} vertices ran on Ray nodes")


if __name__ == "__main__":
    cluster() if "--auto" in sys.argv else laptop()
