"""The Ray backend on a cluster of a head and two worker nodes on this machine, loopback only.

The cluster is Ray's own (`ray.cluster_utils.Cluster`) in a child process of its
own (`ray_nodes_child.py`), each node a raylet with its processes, shared by the
module's tests and stopped at the end with nothing of it left. Drivers are child
processes too (`ray_driver_child.py`), joining it with `RayBackend(address=...)`;
their graph's tasks append where they ran to a ledger, so a test counts what ran
where, and how often, across nodes and drivers. A node dies as a machine does:
its raylet, its other processes and its workers, all with SIGKILL at once.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from actorgraph.ray._reaper import session_processes

pytestmark = pytest.mark.slow  # three Ray nodes and several drivers, each a process

pytest.importorskip("ray", reason='the Ray backend needs Ray: pip install -e ".[ray]"')

HERE = Path(__file__).resolve().parents[1]  # tests/, where the child scripts are
WORKS = 6
UNINTERRUPTED = {"items": [i * i for i in range(WORKS)], "total": sum(i * i for i in range(WORKS))}
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")])}


class Nodes:
    """The cluster child: its address, node ids, and the commands it obeys."""

    def __init__(self, child: subprocess.Popen[str], ready: dict[str, Any]) -> None:
        self.child = child
        self.address: str = ready["address"]
        self.head: str = ready["head"]
        self.workers: list[str] = ready["workers"]
        self.folder: str = ready["folder"]

    def kill(self, node: str) -> dict[str, Any]:
        """SIGKILL every process of worker node `node` (raylet, agents, workers) at once."""
        assert self.child.stdin is not None
        self.child.stdin.write(f"kill {node}\n")
        self.child.stdin.flush()
        answer = json.loads(_line(self.child, 60))
        self.workers.remove(node)
        return answer

    def stop(self) -> None:
        """Shut the cluster down; kill its child's session if it does not end."""
        assert self.child.stdin is not None
        with contextlib.suppress(OSError):
            self.child.stdin.write("stop\n")
            self.child.stdin.close()
        try:
            self.child.wait(60)
        except subprocess.TimeoutExpired:
            os.killpg(self.child.pid, signal.SIGKILL)
            self.child.wait(30)


def _line(child: subprocess.Popen[str], within: float) -> str:
    """The child's next line of output, waiting at most `within` seconds."""
    assert child.stdout is not None
    ready, _, _ = select.select([child.stdout], [], [], within)
    line = child.stdout.readline() if ready else ""
    if not line:
        pytest.fail(f"the child said nothing within {within:.0f} s (exit code {child.poll()})")
    return line


@pytest.fixture(scope="module")
def nodes() -> Iterator[Nodes]:
    """A head node and two worker nodes of one CPU each; every one of their processes gone after."""
    command = [sys.executable, str(HERE / "ray_nodes_child.py"), "2"]
    child = subprocess.Popen(
        command, env=ENV, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, start_new_session=True
    )
    try:
        cluster = Nodes(child, json.loads(_line(child, 180)))
    except BaseException:
        os.killpg(child.pid, signal.SIGKILL)
        child.wait(30)
        raise
    try:
        yield cluster
    finally:
        cluster.stop()
    assert child.returncode == 0
    assert session_processes(cluster.folder) == []  # no raylet, agent or worker of the cluster left
    assert not Path(cluster.folder).exists()


def driver(
    mode: str, nodes: Nodes, store: tuple[str, str], ledger: Path, **env: str
) -> subprocess.Popen[str]:
    """A driver child joining the cluster by its address: `ray_driver_child.py`."""
    kind, target = store
    command = [sys.executable, str(HERE / "ray_driver_child.py"), mode, nodes.address, kind, target, "t"]
    return subprocess.Popen(
        [*command, str(ledger)], env=ENV | {"WORKS": str(WORKS)} | env, stdout=subprocess.PIPE, text=True
    )


def said(child: subprocess.Popen[str], within: float = 240) -> list[dict[str, Any]]:
    """Every JSON line of a driver child, once it ended (killed if it overran `within`)."""
    try:
        out, _ = child.communicate(timeout=within)
    except subprocess.TimeoutExpired:
        child.kill()
        out, _ = child.communicate()
        pytest.fail(f"the driver did not end within {within:.0f} s: {out[-2000:]}")
    assert child.returncode == 0, out[-2000:]
    return [json.loads(line) for line in out.splitlines() if line.startswith("{")]


def runs(ledger: Path) -> Counter[str]:
    """How often each task started and ended: `start:work-3` -> 2."""
    return Counter(line.rsplit(":", 1)[0] for line in ledger.read_text().split())


def ran_on(ledger: Path, what: str) -> list[str]:
    """The nodes where `what` lines (e.g. `start:work-1`) were written, in order."""
    return [line.rsplit(":", 1)[1] for line in ledger.read_text().split() if line.rsplit(":", 1)[0] == what]


def wait_started(ledger: Path, count: int, child: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline and child.poll() is None:
        if ledger.exists() and ledger.read_text().count("start:work-") >= count:
            return
        time.sleep(0.05)
    pytest.fail(f"the driver never had {count} tasks running (exit code {child.poll()})")


# -- where work runs ----------------------------------------------------------------------------------


def test_partitions_are_spread_one_per_node_and_vertex_work_runs_on_all_three(
    nodes: Nodes, tmp_path: Path
) -> None:
    ledger = tmp_path / "ledger.txt"
    lines = said(driver("run", nodes, ("sqlite", str(tmp_path / "runs.db")), ledger))
    placed = [node for node, _ in lines[0]["partitions"]["default"]]
    assert sorted(placed) == sorted([nodes.head, *nodes.workers]), lines[0]  # one partition on each node
    assert lines[-1] == {"status": "done", "state": UNINTERRUPTED}
    works = {node for i in range(WORKS) for node in ran_on(ledger, f"end:work-{i}")}
    assert works == {nodes.head, *nodes.workers}  # six concurrent tasks, least loaded first: two a node
    assert set(runs(ledger).values()) == {1}  # every task once


# -- a driver that leaves, and one that joins again ----------------------------------------------------


@pytest.mark.parametrize("leave", ["close", "shutdown"])
def test_a_driver_that_leaves_mid_run_fails_it_at_once_and_a_new_backend_joins_by_address_and_resumes(
    leave: str, nodes: Nodes, tmp_path: Path
) -> None:
    """`backend.close()`, or `ray.shutdown()` under the open backend, with six tasks running.

    Before the fix, the run waited forever for answers Ray had dropped, and its
    retries started a new local Ray (Ray's auto-init) instead of failing.
    """
    ledger = tmp_path / "ledger.txt"
    store = ("sqlite", str(tmp_path / "runs.db"))
    lines = said(driver("reconnect", nodes, store, ledger, GO=str(tmp_path / "go"), LEAVE=leave))
    left, gone, resumed = lines
    assert left["left"] == "BackendError"  # the run's own error, naming the vertex and what to do
    assert "vertex 'work'" in left["message"]
    why = "was closed" if leave == "close" else "ray.shutdown()"
    assert why in left["message"]
    assert "resume the thread" in left["message"]
    assert gone == {"partitions_gone": True, "closed": True}
    assert resumed == {"status": "done", "state": UNINTERRUPTED, "connected": True}
    counted = runs(ledger)
    assert counted["start:plan"] == counted["end:plan"] == 1  # the committed superstep is not run again
    assert all(counted[f"start:work-{i}"] == 2 and counted[f"end:work-{i}"] == 1 for i in range(WORKS))
    assert counted["start:total"] == counted["end:total"] == 1


def test_a_killed_driver_leaves_no_task_running_and_a_new_one_resumes_by_address_on_postgres(
    nodes: Nodes, tmp_path: Path, postgres_db: str
) -> None:
    ledger, go = tmp_path / "ledger.txt", tmp_path / "go"
    child = driver("run", nodes, ("postgres", postgres_db), ledger, GO=str(go))
    try:
        assert child.stdout is not None
        partitions = json.loads(child.stdout.readline())["partitions"]["default"]
        wait_started(ledger, WORKS, child)
    finally:
        child.send_signal(signal.SIGKILL)
        child.communicate(timeout=30)
    pids = [pid for _, pid in partitions]
    deadline = time.monotonic() + 60  # partitions on the head watch the driver; Ray ends the others
    while [p for p in pids if Path(f"/proc/{p}").exists()] and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not [p for p in pids if Path(f"/proc/{p}").exists()], "a killed driver's partition runs on"
    go.touch()
    lines = said(driver("resume", nodes, ("postgres", postgres_db), ledger, GO=str(go)))
    assert lines[-1] == {"status": "done", "state": UNINTERRUPTED}
    counted = runs(ledger)
    assert counted["start:plan"] == counted["end:plan"] == 1
    assert all(counted[f"start:work-{i}"] == 2 and counted[f"end:work-{i}"] == 1 for i in range(WORKS))


# -- a node that dies -------------------------------------------------------------------------------


def test_a_worker_node_killed_mid_superstep_loses_nothing_and_only_its_tasks_run_again(
    nodes: Nodes, tmp_path: Path
) -> None:
    """Its partitions restart on the nodes left; its tasks are retried there; nothing else runs twice."""
    ledger, go = tmp_path / "ledger.txt", tmp_path / "go"
    child = driver("run", nodes, ("sqlite", str(tmp_path / "runs.db")), ledger, GO=str(go))
    try:
        wait_started(ledger, WORKS, child)
        on = {i: ran_on(ledger, f"start:work-{i}")[0] for i in range(WORKS)}
        doomed = next(node for node in nodes.workers if node in on.values())
        killed = nodes.kill(doomed)
        go.touch()
        lines = said(child)
    finally:
        if child.poll() is None:
            child.kill()
            child.communicate()
    assert len(killed["pids"]) >= 3  # its raylet, its agents, its partition's worker process
    assert lines[-1] == {"status": "done", "state": UNINTERRUPTED}
    before = [node for node, _ in lines[0]["partitions"]["default"]]
    after = [node for node, _ in lines[-2]["partitions_after"]["default"]]
    assert doomed in before
    assert len(after) == len(before)
    assert doomed not in after  # its partition was started anew on a node left
    assert set(after) == {nodes.head, *nodes.workers}
    counted = runs(ledger)
    assert counted["start:plan"] == counted["end:plan"] == 1  # the committed superstep is not run again
    for i, node in on.items():
        assert counted[f"end:work-{i}"] == 1  # each side effect once
        assert counted[f"start:work-{i}"] == (2 if node == doomed else 1)  # only the dead node's again
        assert doomed not in ran_on(ledger, f"end:work-{i}")
    assert counted["start:total"] == counted["end:total"] == 1
