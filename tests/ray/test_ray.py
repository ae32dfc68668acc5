"""The Ray backend's own tests: placement, supervision across processes, bad input, crashes.

The engine's behaviour tests run on Ray too (ACTORGRAPH_TEST_BACKEND=ray); these
are the ones only the Ray backend has: a partition process killed with SIGKILL,
a driver killed and resumed, what cannot be pickled, resources no node has,
an address where nothing answers, large states sent once.
"""

from __future__ import annotations

import itertools
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import crash_child
import pytest
from shared import SharedDict, SharedEvent

import actorgraph as ag
from actorgraph._actors.backend import THREADS
from actorgraph.checkpoint import SqliteCheckpointer
from actorgraph.events import TaskFinished
from actorgraph.merge import append, by_key
from actorgraph.ray import RayBackend  # sets Ray's sandbox settings before Ray is imported

pytestmark = pytest.mark.slow  # a real Ray cluster

ray = pytest.importorskip("ray", reason='the Ray backend needs Ray: pip install -e ".[ray]"')

HERE = Path(__file__).resolve().parents[1]  # tests/, where the helper scripts are


def chain(*vertices: tuple[str, Any], **options: Any) -> ag.Graph:
    graph = ag.Graph()
    names = [name for name, _ in vertices]
    for name, fn in vertices:
        graph.add_vertex(name, fn, **options.get(name, {}))
    graph.add_edge(ag.START, names[0])
    for a, b in itertools.pairwise(names):
        graph.add_edge(a, b)
    graph.add_edge(names[-1], ag.END)
    return graph


# -- where work runs --------------------------------------------------------------------------------


def test_vertices_run_in_partition_processes_and_routers_on_the_driver(backend: RayBackend) -> None:
    def where(state: dict[str, Any]) -> dict[str, Any]:
        return {**state, "pids": [*state["pids"], os.getpid()]}

    routed: list[int] = []

    def router(state: dict[str, Any]) -> str:
        routed.append(os.getpid())
        return "b" if len(state["pids"]) < 3 else ag.END

    graph = ag.Graph()
    graph.add_vertex("a", where).add_vertex("b", where)
    graph.add_edge(ag.START, "a").add_edge("a", "b").add_conditional_edges("b", router)
    with graph.compile(backend=backend) as app:
        state = app.invoke({"pids": []}).state
    partitions = {pid for _, pid in backend.placement()["default"]}
    assert set(state["pids"]) <= partitions and os.getpid() not in state["pids"]
    assert routed == [os.getpid(), os.getpid()]


def test_a_cpu_bound_fan_out_runs_in_parallel_processes(backend: RayBackend) -> None:
    """Two partitions on two CPUs: two tasks of CPU work overlap (on threads, one GIL, they cannot)."""

    def spin(state: dict[str, Any]) -> dict[str, Any]:
        start = time.monotonic()
        end = start + 0.4
        while time.monotonic() < end:
            sum(i * i for i in range(1000))
        return {"spans": [(os.getpid(), start, time.monotonic())]}

    graph = ag.Graph(merge=by_key({"spans": append}))
    for name in ("x", "y"):
        graph.add_vertex(name, spin, returns="update").add_edge(ag.START, name).add_edge(name, ag.END)
    with graph.compile(backend=backend) as app:
        spans = app.invoke({"spans": []}).state["spans"]
    (pid1, s1, e1), (pid2, s2, e2) = spans
    assert pid1 != pid2
    assert min(e1, e2) > max(s1, s2)  # the two spans overlap in time


def test_a_large_state_is_pickled_once_for_a_whole_fan_out(backend: RayBackend) -> None:
    def big(state: dict[str, Any]) -> dict[str, Any]:
        return {**state, "blob": "x" * 1_000_000}

    def reader(state: dict[str, Any]) -> dict[str, Any]:
        return {"sizes": [len(state["blob"])]}

    graph = ag.Graph(merge=by_key({"sizes": append}))
    graph.add_vertex("big", big).add_edge(ag.START, "big")
    for i in range(6):
        graph.add_vertex(f"r{i}", reader, returns="update").add_edge("big", f"r{i}").add_edge(f"r{i}", ag.END)
    cache = backend.states
    with graph.compile(backend=backend) as app:
        pickled, stored = cache.pickled, cache.stored
        state = app.invoke({"sizes": []}).state
    assert state["sizes"] == [1_000_000] * 6
    # two versions travelled: the input to `big`, and big's output to the six readers, once
    assert (cache.pickled - pickled, cache.stored - stored) == (2, 1)


def test_resources_pin_a_vertex_to_its_own_partitions(backend: RayBackend) -> None:
    def where(state: dict[str, Any]) -> dict[str, Any]:
        return {**state, "pid": os.getpid()}

    graph = ag.Graph()
    graph.add_vertex("pinned", where, resources={"num_cpus": 0.5})
    graph.add_edge(ag.START, "pinned").add_edge("pinned", ag.END)
    with graph.compile(backend=backend) as app:
        pid = app.invoke({}).state["pid"]
    placement = backend.placement()
    assert pid in {p for _, p in placement["num_cpus=0.5"]}
    assert pid not in {p for _, p in placement["default"]}


# -- supervision across processes ---------------------------------------------------------------------


def test_a_partition_killed_mid_task_is_replaced_and_only_its_task_runs_again(
    backend: RayBackend, tmp_path: Path
) -> None:
    runs = SharedDict()
    pids = SharedDict()
    release = SharedEvent()

    def work(state: dict[str, Any], ctx: ag.Context) -> dict[str, Any]:
        runs.add(ctx.vertex)
        if ctx.vertex == "victim" and ctx.attempt == 1:
            pids["victim"] = os.getpid()
            release.wait(60)  # killed before this returns
        return {"done": [ctx.vertex]}

    graph = ag.Graph(merge=by_key({"done": append}))
    names = ["victim", "b", "c", "d"]
    for name in names:
        retry = ag.RetryPolicy(max_attempts=3, initial_interval=0.01, jitter=False)
        graph.add_vertex(name, work, returns="update", retry=retry).add_edge(ag.START, name)
    graph.add_vertex("total", lambda s: s).add_edge(names, "total").add_edge("total", ag.END)
    finished: list[str] = []
    others_done = threading.Event()

    def listen(event: Any) -> None:
        if isinstance(event, TaskFinished) and event.result.status == "ok":
            finished.append(event.result.vertex)
            if {"b", "c", "d"} <= set(finished):
                others_done.set()

    store = SqliteCheckpointer(tmp_path / "runs.db")
    with graph.compile(store, backend=backend, listeners=[listen]) as app:
        handle = app.start({"done": []}, thread_id="kill")
        assert others_done.wait(60), "the other tasks never finished"
        deadline = time.monotonic() + 60
        while pids.get("victim") is None and time.monotonic() < deadline:
            time.sleep(0.01)
        victim = pids["victim"]
        os.kill(victim, signal.SIGKILL)
        result = handle.result(120)
        history = app.get_history("kill")
    store.close()
    assert result.status == "done"
    assert sorted(result.state["done"]) == sorted(names)
    assert runs.copy() == {"victim": 2, "b": 1, "c": 1, "d": 1}  # nothing finished ran again
    step1 = next(s for s in history if s.superstep is not None and "victim" in s.superstep.results)
    assert step1.superstep.results["victim"].attempts == 2
    assert victim not in {pid for _, pid in backend.placement()["default"]}  # replaced


def test_a_killed_partition_without_retry_is_a_vertex_actor_died_error(backend: RayBackend) -> None:
    pids = SharedDict()

    def hang(state: dict[str, Any]) -> dict[str, Any]:
        pids["pid"] = os.getpid()
        time.sleep(60)
        return state

    graph = chain(("hang", hang), hang={"retry": []})
    with graph.compile(backend=backend) as app:
        handle = app.start({})
        deadline = time.monotonic() + 60
        while pids.get("pid") is None and time.monotonic() < deadline:
            time.sleep(0.01)
        os.kill(pids["pid"], signal.SIGKILL)
        with pytest.raises(ag.VertexError) as info:
            handle.result(120)
    assert isinstance(info.value.__cause__, ag.VertexActorDiedError)
    assert "died or became unreachable" in str(info.value.__cause__)


def test_a_partition_restarted_while_idle_is_sent_the_code_again(backend: RayBackend) -> None:
    """Partitions that ran a vertex get later calls without its code; one that restarted asks for it."""
    graph = chain(("a", lambda s: {"n": s["n"] + 1}), ("b", lambda s: {"n": s["n"] * 2}))
    attempts: list[int] = []

    def listen(event: Any) -> None:
        if isinstance(event, TaskFinished):
            attempts.append(event.result.attempts)

    with graph.compile(backend=backend, listeners=[listen]) as app:
        assert app.invoke({"n": 1}).state == {"n": 4}  # the partitions learn a and b
        before = {pid for _, pid in backend.placement()["default"]}
        for pid in before:
            os.kill(pid, signal.SIGKILL)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:  # Ray restarts them; nothing of ours is in flight
            try:
                after = {pid for _, pid in backend.placement()["default"]}
            except ray.exceptions.RayError:
                time.sleep(0.05)
                continue
            if not after & before:
                break
        attempts.clear()
        result = app.invoke({"n": 2})
    assert result.state == {"n": 6}
    assert attempts == [1, 1]  # asking for the code again costs no attempt


@pytest.mark.parametrize("resume_on", ["threads", "ray"])
def test_a_driver_killed_mid_superstep_resumes_in_a_new_process(
    resume_on: str, tmp_path: Path, backend: RayBackend
) -> None:
    """The driver (coordinator and checkpointer) dies with SIGKILL; a new process resumes the run."""
    target = str(tmp_path / "runs.db")
    ledger = str(tmp_path / "ledger.txt")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")])}
    env |= {"BLOCK": "1", "CHILD_BACKEND": "ray"}
    victim = subprocess.Popen(
        [sys.executable, str(HERE / "crash_child.py"), "run", "sqlite", target, "t", ledger], env=env
    )
    try:
        _wait_recorded(target, {"w0", "w1", "w2"}, deadline=time.monotonic() + 90)
    finally:
        victim.send_signal(signal.SIGKILL)
        victim.wait(30)
    store = SqliteCheckpointer(target)
    chosen = backend if resume_on == "ray" else THREADS
    with crash_child.build(ledger).compile(store, backend=chosen) as app:
        result = app.invoke(None, thread_id="t")
    store.close()
    lines = Counter(Path(ledger).read_text().split())
    assert result.status == "done"
    assert all(lines[f"start:{n}"] == 1 for n in ("w0", "w1", "w2"))  # finished before the kill
    assert all(lines[f"start:{n}"] == 2 and lines[f"end:{n}"] == 1 for n in ("w3", "w4"))
    assert sorted(result.state["items"]) == sorted([*crash_child.WORKERS, "total"])


def _wait_recorded(target: str, want: set[str], *, deadline: float) -> None:
    store = SqliteCheckpointer(target)
    try:
        with crash_child.build(None).compile(store, backend=THREADS) as reader:
            while time.monotonic() < deadline:
                try:
                    results = reader.get_state("t").superstep.results
                except Exception:  # the child has not written the thread yet
                    results = {}
                if want <= {k for k, r in results.items() if r.status == "ok"}:
                    return
                time.sleep(0.05)
    finally:
        store.close()
    pytest.fail(f"the child never recorded {sorted(want)}")


def test_two_nodes_pinned_by_resources_a_node_removed_mid_run_and_the_run_completes(tmp_path: Path) -> None:
    """Ray's own cluster utilities, in a child process (one Ray per process): see ray_cluster_child.py."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")])}
    out = subprocess.run(
        [sys.executable, str(HERE / "ray_cluster_child.py"), str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        check=False,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    seen = json.loads(out.stdout.strip().splitlines()[-1])
    assert seen["status"] == "done"
    assert seen["state"]["first"] == seen["head"]  # pinned by resource `a`
    assert seen["first_attempt_on"] == seen["doomed"]  # pinned by resource `b`
    assert seen["state"]["second"] == seen["spare"]  # restarted where `b` still is
    assert seen["state"]["attempts"] == 2  # the attempt that died with its node, and one retry


def test_the_how_to_joins_a_cluster_started_with_ray_start_by_address_auto() -> None:
    """`ray start --head` in a session of its own (killed as a group), then `ray_cluster.py --auto`."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    env = {**os.environ, "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0", "RAY_AUTH_MODE": "disabled"}
    env |= {"RAY_USAGE_STATS_ENABLED": "0"}
    env.pop("RAY_ADDRESS", None)
    ray_cli = Path(sys.executable).with_name("ray")
    command = [str(ray_cli), "start", "--head", "--block", f"--port={port}", "--num-cpus=2"]
    command += ["--include-dashboard=false", "--disable-usage-stats"]
    head = subprocess.Popen(
        command, env=env, start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    marker = Path("/tmp/ray/ray_current_cluster")  # noqa: S108 - where `ray start` writes its address
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if marker.exists() and marker.read_text().strip().endswith(f":{port}"):
                break
            time.sleep(0.1)
        else:
            pytest.fail("`ray start --head` did not come up within 60 s")
        example = str(HERE.parent / "examples" / "ray_cluster.py")
        run = [sys.executable, example, "--auto"]
        out = subprocess.run(run, env=env, capture_output=True, text=True, timeout=120, check=False)
    finally:
        os.killpg(head.pid, signal.SIGKILL)
        head.wait(30)
        if marker.exists() and marker.read_text().strip().endswith(f":{port}"):
            marker.unlink()  # the cluster is gone: leave no stale address for the next `ray start` user
    assert out.returncode == 0, out.stderr[-3000:]
    assert "joined the cluster: done, 2 vertices ran on Ray nodes" in out.stdout


# -- bad input -------------------------------------------------------------------------------------


def test_a_vertex_that_cannot_be_pickled_is_refused_at_compile_naming_it(backend: RayBackend) -> None:
    lock = threading.Lock()

    def locked(state: Any) -> Any:
        with lock:
            return state

    graph = chain(("fine", lambda s: s), ("locked", locked))
    with pytest.raises(ag.GraphValidationError, match=r"vertex 'locked' cannot run on the Ray backend.*lock"):
        graph.compile(backend=backend)


def test_an_unpicklable_vertex_inside_a_subgraph_is_named_by_its_path(backend: RayBackend) -> None:
    lock = threading.Lock()
    inner = chain(("step", lambda s: (lock, s)[1]))
    outer = ag.Graph()
    outer.add_vertex("research", inner).add_edge(ag.START, "research").add_edge("research", ag.END)
    with pytest.raises(ag.GraphValidationError, match=r"vertex 'research/step'"):
        outer.compile(backend=backend)


def test_a_state_that_cannot_be_pickled_fails_the_run_naming_the_vertex(backend: RayBackend) -> None:
    """As a state that cannot be stored does on threads: a `SerializationError`, never retried."""

    def makes_lock(state: Any) -> Any:
        return {"lock": threading.Lock()}

    graph = chain(("makes", makes_lock), makes={"retry": ag.RetryPolicy(max_attempts=3)})
    with (
        graph.compile(backend=backend) as app,
        pytest.raises(ag.SerializationError, match="vertex 'makes' returned a value that cannot be pickled"),
    ):
        app.invoke({})
    graph = chain(("given", lambda s: s))
    with graph.compile(backend=backend) as app, pytest.raises(ag.SerializationError, match="context="):
        app.invoke({}, context=threading.Lock())  # the run's context travels with each call


def test_a_state_larger_than_allowed_is_refused_naming_the_vertex_and_the_size(backend: RayBackend) -> None:
    with RayBackend(max_state_bytes=10_000) as small:  # joins the Ray already running here
        graph = chain(("grow", lambda s: {"blob": "x" * 50_000}), ("next", lambda s: s))
        with graph.compile(backend=small) as app, pytest.raises(ag.SerializationError) as info:
            app.invoke({})
    assert "state given to vertex 'next' is" in str(info.value)
    assert "more than the 10,000 bytes" in str(info.value)


def test_resources_no_node_has_are_refused_at_compile_naming_the_vertex(backend: RayBackend) -> None:
    graph = ag.Graph()
    graph.add_vertex("train", lambda s: s, resources={"num_gpus": 4, "tpu": 1})
    graph.add_edge(ag.START, "train").add_edge("train", ag.END)
    with pytest.raises(ag.BackendError, match=r"vertex 'train' asks for resources .* which no node"):
        graph.compile(backend=backend)


def test_bad_resource_requests_are_refused_when_added() -> None:
    with pytest.raises(ag.GraphValidationError, match="resource 'num_cpus' must be a number >= 0"):
        ag.Graph().add_vertex("v", lambda s: s, resources={"num_cpus": -1})
    with pytest.raises(ag.GraphValidationError, match="resources must be a mapping"):
        ag.Graph().add_vertex("v", lambda s: s, resources=["gpu"])  # type: ignore[arg-type]


def test_an_address_where_nothing_answers_is_refused_within_seconds() -> None:
    with socket.socket() as sock:  # a port that was free a moment ago: nothing listens there
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    code = (
        "import time, actorgraph as ag\n"
        "from actorgraph.ray import RayBackend\n"
        "g = ag.Graph(); g.add_vertex('a', lambda s: s).add_edge(ag.START, 'a').add_edge('a', ag.END)\n"
        "t = time.monotonic()\n"
        "try:\n"
        f"    g.compile(backend=RayBackend(address='127.0.0.1:{port}', connect_timeout=5))\n"
        "except ag.BackendError as e:\n"
        "    print('refused', round(time.monotonic() - t, 1), e)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert "refused" in out.stdout and f"nothing answers at 127.0.0.1:{port}" in out.stdout, out
    assert float(out.stdout.split()[1]) < 6


def test_settings_out_of_range_are_refused() -> None:
    with pytest.raises(ag.ConfigError, match="partitions=0"):
        RayBackend(partitions=0)
    with pytest.raises(ag.ConfigError, match="connect_timeout"):
        RayBackend(connect_timeout=0)


def test_a_closed_backend_refuses_new_graphs() -> None:
    spare = RayBackend()
    spare.close()
    with pytest.raises(ag.BackendError, match="closed"):
        chain(("a", lambda s: s)).compile(backend=spare)


def test_actors_is_for_the_thread_backend_only(backend: RayBackend) -> None:
    g: ag.Graph = ag.Graph()
    g.add_vertex("a", lambda s: s).add_edge(ag.START, "a").add_edge("a", ag.END)
    for actors in ("pooled", "threads"):
        with pytest.raises(ag.ConfigError, match=f"actors='{actors}' is for the thread backend"):
            g.compile(backend=backend, actors=actors)


def test_an_async_vertex_without_a_bound_keeps_ray_calls_in_flight_bounded(backend: RayBackend) -> None:
    """On threads an async vertex's awaits cost no thread and go unbounded; on Ray each call holds a
    pickled state in the object store, so the driver keeps the thread pools' default of 32 in flight."""
    seen = SharedDict({"running": 0, "most": 0})

    async def work(state: dict[str, Any]) -> dict[str, Any]:
        import asyncio

        running = seen.add("running")
        if running > seen.get("most", 0):
            seen["most"] = running
        await asyncio.sleep(0.05)
        seen.add("running", -1)
        return {"done": [state["item"]]}

    g: ag.Graph = ag.Graph(returns="update", merge=by_key({"done": append}))
    g.add_vertex("fan", lambda s: None)
    g.add_vertex("work", work)
    g.add_edge(ag.START, "fan")
    g.add_conditional_edges("fan", lambda s: [ag.Send("work", {"item": i}) for i in range(60)], ["work"])
    g.add_edge("work", ag.END)
    with g.compile(backend=backend) as app:
        result = app.invoke({"done": []})
    assert sorted(result.state["done"]) == list(range(60))
    assert 1 < seen["most"] <= 32
