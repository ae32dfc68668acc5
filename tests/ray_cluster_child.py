"""A two-node Ray cluster on this machine (Ray's `cluster_utils`), for test_ray's multi-node test.

Run as `python ray_cluster_child.py FLAGDIR`; prints one JSON line with what happened.
The head node holds resource `a`, a second node resource `b`; vertex `first` is
pinned to `a`, vertex `second` to `b`. While `second` runs, a third node with `b`
joins and the second node is removed: the partition of `second` dies with its
node, is restarted on the third one, and the task is retried there.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

import actorgraph as ag
from actorgraph.ray import RayBackend  # sets Ray's sandbox settings: Ray is imported after it, below

FAST_HEALTH = {"health_check_period_ms": 200, "health_check_failure_threshold": 3}


def node_id() -> str:
    import ray

    return str(ray.get_runtime_context().get_node_id())


def build(flags: Path) -> ag.Graph:
    def first(state: dict[str, Any]) -> dict[str, Any]:
        return {**state, "first": node_id()}

    def second(state: dict[str, Any], ctx: ag.Context) -> dict[str, Any]:
        (flags / f"second-{ctx.attempt}").write_text(node_id())
        if ctx.attempt == 1:
            time.sleep(120)  # its node is removed meanwhile
        return {**state, "second": node_id(), "attempts": ctx.attempt}

    retry = ag.RetryPolicy(max_attempts=3, initial_interval=0.1, jitter=False)
    graph = ag.Graph(name="two-nodes")
    graph.add_vertex("first", first, resources={"a": 1})
    graph.add_vertex("second", second, resources={"b": 1}, retry=retry)
    graph.add_edge(ag.START, "first").add_edge("first", "second").add_edge("second", ag.END)
    return graph


def main(flags: Path) -> dict[str, Any]:
    import ray
    from ray.cluster_utils import Cluster

    cluster = Cluster(
        initialize_head=True,
        head_node_args={"num_cpus": 1, "resources": {"a": 1}, "_system_config": FAST_HEALTH},
    )
    try:
        doomed = cluster.add_node(num_cpus=1, resources={"b": 1})
        cluster.wait_for_nodes()
        with RayBackend(address=cluster.address, connect_timeout=60) as backend:
            with build(flags).compile(backend=backend) as app:
                handle = app.start({})
                deadline = time.monotonic() + 60
                while not (flags / "second-1").exists() and time.monotonic() < deadline:
                    time.sleep(0.05)
                spare = cluster.add_node(num_cpus=1, resources={"b": 1})
                cluster.wait_for_nodes()
                cluster.remove_node(doomed, allow_graceful=False)
                result = handle.result(180)
            return {
                "status": result.status,
                "state": result.state,
                "head": cluster.head_node.node_id,
                "doomed": doomed.node_id,
                "spare": spare.node_id,
                "first_attempt_on": (flags / "second-1").read_text(),
            }
    finally:
        ray.shutdown()
        cluster.shutdown()


if __name__ == "__main__":
    print(json.dumps(main(Path(sys.argv[1]))), flush=True)  # noqa: T201 - the test reads it
