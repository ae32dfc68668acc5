"""A Ray cluster of a head and worker nodes on this machine, on loopback only: `ray_nodes_child.py WORKERS`.

Ray's own test utilities (`ray.cluster_utils.Cluster`) start a head node and
WORKERS worker nodes of one CPU each, each node a raylet of its own with its
processes, in a Ray folder of this child's own (`RAY_TMPDIR`: no other Ray on the
machine finds or joins it). The child prints one JSON line,
`{"address", "head", "workers", "folder"}`, then obeys commands on its standard
input, one a line, answering each with a JSON line:

- `kill NODE_ID`: the node dies as a machine does: its raylet, its other
  processes and every worker process the raylet started, all with SIGKILL at
  once. Answers `{"killed": NODE_ID, "pids": [...]}`.
- `stop` (or the input closing, when the test dies): the whole cluster is shut
  down, every process that is left of it is killed, and the child exits.

The head node notices a dead node within about a second (health checks every
0.2 s rather than Ray's default 3 s), so the tests stay short.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

FAST_HEALTH = {"health_check_period_ms": 200, "health_check_failure_threshold": 3}


def _children(parent: int) -> list[int]:
    """Every process whose parent is `parent` (a raylet's workers)."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if (
                entry.name.isdigit()
                and int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1]) == parent
            ):
                found.append(int(entry.name))
        except OSError:
            continue
    return found


def _node_pids(node: Any) -> list[int]:
    """The node's own processes (raylet, agents, ...) and the workers its raylet started."""
    own = [info.process.pid for infos in node.all_processes.values() for info in infos]
    return own + [child for pid in own for child in _children(pid)]


def kill(cluster: Any, node_id: str) -> dict[str, Any]:
    """SIGKILL every process of the worker node `node_id` at once, then forget the node."""
    node = next(n for n in cluster.worker_nodes if n.node_id == node_id)
    pids = _node_pids(node)
    for pid in pids:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    cluster.remove_node(node, allow_graceful=False)  # reaps them (they are dead already)
    return {"killed": node_id, "pids": pids}


def leftovers(folder: str) -> list[int]:
    """The processes that still name the cluster's folder or hold a file open in it."""
    from actorgraph.ray._reaper import session_processes

    return session_processes(folder, spare=frozenset({os.getpid()}))


def main(workers: int) -> int:
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))  # stopped: shut the cluster down all the same
    folder = tempfile.mkdtemp(prefix="agray", dir="/tmp")  # short: Ray's socket paths must fit 107 bytes
    os.environ["RAY_TMPDIR"] = folder
    from actorgraph.ray._connect import sandbox_defaults

    sandbox_defaults()  # Ray's loopback settings, before Ray is imported
    from ray.cluster_utils import Cluster

    head_args = {"num_cpus": 1, "include_dashboard": False, "_system_config": FAST_HEALTH}
    cluster = Cluster(initialize_head=True, head_node_args=head_args)
    try:
        nodes = [cluster.add_node(num_cpus=1) for _ in range(workers)]
        cluster.wait_for_nodes()
        ready = {"address": cluster.address, "head": cluster.head_node.node_id, "folder": folder}
        print(json.dumps(ready | {"workers": [n.node_id for n in nodes]}), flush=True)  # noqa: T201
        for line in sys.stdin:
            command = line.split()
            if command[:1] == ["kill"]:
                print(json.dumps(kill(cluster, command[1])), flush=True)  # noqa: T201 - the test reads it
            elif command[:1] == ["stop"]:
                break
    finally:
        cluster.shutdown()
        deadline = time.monotonic() + 10
        while (left := leftovers(folder)) and time.monotonic() < deadline:
            for pid in left:
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.1)
        shutil.rmtree(folder, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(int(sys.argv[1])))
