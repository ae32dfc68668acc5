"""`RayBackend`: vertex work in Ray worker processes, on one machine or a cluster."""

from __future__ import annotations

import contextlib
import os
import threading
import weakref
from collections.abc import Callable, Iterator, Mapping
from types import TracebackType
from typing import Any, Self

from actorgraph._actors.backend import Pool
from actorgraph._actors.log import log
from actorgraph._actors.timer import Timer
from actorgraph._model.errors import ActorGraphError, BackendError
from actorgraph._model.spec import GraphSpec, VertexSpec
from actorgraph.ray._code import pickled_code, refuse_invocations, search_path
from actorgraph.ray._connect import Connection, connect, import_ray
from actorgraph.ray._finisher import Finisher
from actorgraph.ray._gate import Gate
from actorgraph.ray._groups import Group, Partition, Profile
from actorgraph.ray._partitions import Starter
from actorgraph.ray._placement import check_placement, fits
from actorgraph.ray._pool import RayPool
from actorgraph.ray._settings import Settings
from actorgraph.ray._states import StateCache

__all__ = ["RayBackend"]


class RayBackend:
    """Runs vertex functions in Ray worker processes: `compile(backend=RayBackend())`.

    Vertices are placed on a bounded set of partition actors (Pregel's workers):
    one group for vertices without `resources`, and one group per distinct
    `resources` request, whose partitions each hold those resources. The
    coordinator, routers, merges and the checkpointer stay in this process.
    Partitions are spread over the cluster's nodes (`placement`); one whose
    node dies is restarted by Ray on another node, and the attempts it was
    running are retried by their vertex's `RetryPolicy`.

    One backend can serve many compiled graphs; `close()` it (or use it as a
    context manager) when done: it kills its partitions, and stops Ray if it
    started it. A Ray it started also ends with this process however it ends
    (a reaper process kills its workers and agents), and partitions on this
    machine exit when this process does: no task runs on for a dead driver.

    Args:
        address: None to join the Ray running on this machine or start one;
            `"local"` to always start one of this process's own;
            `"auto"` to join the cluster started here with `ray start --head`;
            `"host:port"` or `"ray://host:port"` to join a cluster.
        partitions: the partition actors of the default group, and the most
            of any resource group (default: the cluster's CPUs).
        max_concurrency: the most attempts one partition runs at once (threads).
        num_cpus: the CPUs of a Ray started here (default: the machine's).
        connect_timeout: the most seconds to wait for the cluster to answer.
        large_state: states pickled larger than this many bytes go through
            Ray's object store (once per superstep) rather than with each call.
        max_state_bytes: the largest state a task may be sent (default: the
            object store's capacity).
        switch_interval: the GIL switch interval of partition processes, in seconds
            (None: CPython's 5 ms). Longer wastes less CPU when many CPU-bound
            tasks share a partition (1.7x -> 1.8x on the fan-out benchmark), at the
            cost of up to that long a wait for an I/O-bound task woken beside them.
        placement: where partitions run: `"spread"` binds each to a node, in
            proportion to the nodes' CPUs (a resource group: to the copies of its
            resources each node holds), and starts one whose node died anew on a
            live node; `"SPREAD"` or `"DEFAULT"` leave it to Ray's scheduler; a
            Ray scheduling strategy (`ray.util.scheduling_strategies`) is given
            to every partition as it is.
        init: more keyword arguments for `ray.init` (`runtime_env`, ...).

    Raises:
        ConfigError: a setting out of range.
    """

    def __init__(  # noqa: PLR0913 - the cluster, and how work is spread on it
        self,
        address: str | None = None,
        *,
        partitions: int | None = None,
        max_concurrency: int = 128,
        num_cpus: int | None = None,
        connect_timeout: float = 60.0,
        large_state: int = 100 * 1024,
        max_state_bytes: int | None = None,
        switch_interval: float | None = 0.02,
        placement: Any = "spread",
        init: Mapping[str, Any] | None = None,
    ) -> None:
        """Describe the backend (see the class for the settings); Ray is joined at the first compile."""
        settings = (partitions, max_concurrency, num_cpus, connect_timeout, large_state, max_state_bytes)
        self._set = Settings(*settings, switch_interval, placement)
        self._set.check()
        self.address = address
        self._init = dict(init or {})
        self._lock = threading.RLock()
        self._ray: Any = None
        self._connection: Connection | None = None
        self._groups: dict[Profile, Group] = {}
        self._code: dict[int, tuple[VertexSpec, bytes]] = {}
        self._finisher: Any = None
        self._states: StateCache | None = None
        self._gate: Gate | None = None
        self._pools: weakref.WeakSet[RayPool] = weakref.WeakSet()  # failed at once when Ray is let go
        self._job: str | None = None  # the Ray job this backend joined as (a later ray.init is not ours)
        self._partitions: Starter | None = None  # starts partitions (they end with this process)
        self._shipped: frozenset[str] = frozenset()
        self._disconnected = False  # Ray was shut down under this backend (it closed itself)
        self.closed = False

    # -- what the engine calls ---------------------------------------------------------------

    def check(self, spec: GraphSpec) -> None:
        """Join Ray; refuse a vertex whose code cannot be pickled or whose resources no node has.

        Raises:
            GraphValidationError: a vertex function cannot be pickled, or invokes a graph or a
                task, which could not nest on a worker (naming the vertex).
            BackendError: the cluster does not answer, or no node has a vertex's resources.
        """
        for path, vertex in _vertices(spec):
            refuse_invocations(path, vertex)
        self._connect()
        for path, vertex in _vertices(spec):
            self._pickled_code(path, vertex)
            if vertex.resources:
                self._feasible(path, vertex.resources)

    def pool(self, spec: GraphSpec, vertex: VertexSpec, timer: Callable[[], Timer]) -> Pool:
        """The pool of `vertex`: its code in the object store, its group of partitions."""
        self._connect()
        blob = self._pickled_code(vertex.name, vertex)
        group = self._group(vertex.resources)
        pool = RayPool(self, spec=spec, vertex=vertex, timer=timer, group=group, code=self.ray.put(blob))
        with self._lock:
            self._pools.add(pool)
        return pool

    # -- the connection and the partitions ---------------------------------------------------

    @property
    def ray(self) -> Any:
        """The `ray` module (after the backend connected)."""
        return self._ray

    @property
    def finisher(self) -> Any:
        """The actor that finishes the tasks whose answers land."""
        return self._finisher

    @property
    def gate(self) -> Gate:
        """What every call of a task into Ray passes: shut once the backend lets Ray go."""
        if self._gate is None:  # pragma: no cover - set by _connect before any pool exists
            msg = "the Ray backend is not connected"
            raise ActorGraphError(msg)
        return self._gate

    def unavailable(self, vertex: str) -> BackendError:
        """The error of an attempt of `vertex` that Ray was let go under (closed, or `ray.shutdown()`)."""
        why = (
            "this RayBackend was closed"
            if self.closed and not self._disconnected
            else "Ray was shut down in this process (ray.shutdown()) under the RayBackend"
        )
        msg = (
            f"vertex {vertex!r} could not run or finish on Ray: {why} while its run was in flight, "
            "so its outcome is lost; the run's finished tasks are recorded: resume the thread "
            "(invoke(None, thread_id=...)) on a new RayBackend (address=... joins the cluster again)"
        )
        return BackendError(msg)

    @property
    def states(self) -> StateCache:
        """Where input states are encoded for the wire."""
        if self._states is None:  # pragma: no cover - set by _connect before any pool exists
            msg = "the Ray backend is not connected"
            raise ActorGraphError(msg)
        return self._states

    def placement(self) -> dict[str, list[tuple[str, int]]]:
        """Where the partitions run: `{profile: [(node id, pid), ...]}` (`"default"` for no resources).

        Waits (bounded by `connect_timeout`) for partitions still starting.
        """
        with self._lock:
            if self.closed:
                msg = "this RayBackend is closed: its partitions are gone"
                raise BackendError(msg)
            groups = list(self._groups.values())
        out: dict[str, list[tuple[str, int]]] = {}
        for group in groups:
            refs = [p.actor.where.remote() for p in group.partitions]
            name = ",".join(f"{k}={v:g}" for k, v in group.profile) or "default"
            out[name] = [(str(n), int(p)) for n, p in self.ray.get(refs, timeout=self._set.connect_timeout)]
        return out

    def partition_actors(self) -> list[Any]:
        """The Ray actor handles of every partition started so far (for tests and benchmarks)."""
        with self._lock:
            return [p.actor for group in self._groups.values() for p in group.partitions]

    def revive(self, group: Group, partition: Partition) -> bool:
        """Wait (up to `connect_timeout`) until `partition` answers again; False if it never did.

        One whose node died is started anew on a live node (`_partitions.Starter.revive`).
        """
        return self._starter().revive(group, partition, self.gate)

    def close(self) -> None:
        """Kill the partitions; stop Ray if this backend started it. Idempotent.

        Attempts still in flight fail at once with a `BackendError` (not retried):
        their runs end, and resume on a new backend.
        """
        with self._lock:
            if self.closed:
                return
            self.closed = True
            groups, self._groups = list(self._groups.values()), {}
            finisher, self._finisher = self._finisher, None
        ray, ours = self._ray, self._let_go()
        for group in groups if ours else ():
            for partition in group.partitions:
                with contextlib.suppress(Exception):
                    ray.kill(partition.actor, no_restart=True)
        if finisher is not None:
            finisher.stop()
        if self._connection is not None:
            if self._connection.release is not None and ours:
                ray.shutdown()
            self._connection.close()

    def _let_go(self) -> bool:
        """Shut the gate and fail every attempt in flight; True if Ray is still this backend's connection."""
        if self._gate is None:
            return False
        self._gate.shut(wait=5.0)
        with self._lock:
            pools = list(self._pools)
        for pool in pools:
            pool.lost()
        return self._ours()

    def _ours(self) -> bool:
        """Whether this process is still connected to Ray as the job this backend joined as."""
        try:  # the module's own function: `ray.get_runtime_context` would start a Ray if none is up
            return bool(self._ray.runtime_context.get_runtime_context().get_job_id() == self._job)
        except RuntimeError:  # Ray is not initialized in this process
            return False

    def _check_connection(self) -> None:
        """The finisher's idle check: Ray shut down under this backend fails its runs now, not never.

        After `ray.shutdown()` (and maybe a `ray.init()` of someone else's since), no
        answer of this backend's calls will ever land: its attempts in flight fail.
        """
        if self.closed or self._ray is None or self._ours():
            return
        self._disconnected = True
        log("warning", "Ray was shut down under an open RayBackend: its runs in flight fail")
        self.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"RayBackend(address={self.address!r})"

    def start(self) -> RayBackend:
        """Join or start Ray now, rather than at the first `compile` (its start-up cost is paid here)."""
        self._connect()
        return self

    def _connect(self) -> None:
        with self._lock:
            if self.closed:
                msg = "this RayBackend is closed; make a new one"
                if self._disconnected:
                    msg = "Ray was shut down under this RayBackend (ray.shutdown()); make a new one"
                raise BackendError(msg)
            if self._ray is not None:
                return
            self._shipped = frozenset(search_path())  # what workers started now import from
            self._connection = connect(
                self.address, num_cpus=self._set.num_cpus, wait=self._set.connect_timeout, init=self._init
            )
            ray = import_ray()
            check_placement(self._set.placement, ray)
            store = ray.cluster_resources().get("object_store_memory", 0)
            most = self._set.max_state_bytes if self._set.max_state_bytes is not None else int(store) or 2**31
            self._states = StateCache(ray, large=self._set.large_state, most=most)
            self._gate = Gate(ray)
            self._finisher = Finisher(idle=self._check_connection)
            context = ray.get_runtime_context()
            self._partitions = Starter(ray, self._set, (context.get_node_id(), os.getpid()))
            self._job = context.get_job_id()
            self._ray = ray

    def _pickled_code(self, path: str, vertex: VertexSpec) -> bytes:
        kept = self._code.get(id(vertex))
        if kept is not None and kept[0] is vertex:
            return kept[1]
        blob = pickled_code(path, vertex, self._shipped)
        self._code[id(vertex)] = (vertex, blob)
        return blob

    def _starter(self) -> Starter:
        if self._partitions is None:  # pragma: no cover - set by _connect before any pool exists
            msg = "the Ray backend is not connected"
            raise ActorGraphError(msg)
        return self._partitions

    def _feasible(self, path: str, resources: Mapping[str, float]) -> None:
        nodes = self._starter().nodes()
        if fits(nodes, resources) == 0:
            have = "; ".join(
                ", ".join(f"{k}={v:g}" for k, v in sorted(held.items()) if not k.startswith("node:"))
                for _, held in nodes
            )
            msg = (
                f"vertex {path!r} asks for resources {dict(resources)}, which no node of the Ray "
                f"cluster has (nodes: {have or 'none'}); add a node that has them, or change the request"
            )
            raise BackendError(msg)

    def _group(self, resources: Mapping[str, float] | None) -> Group:
        profile: Profile = tuple(sorted((resources or {}).items()))
        with self._lock:
            group = self._groups.get(profile)
            if group is None:
                group = self._starter().group(profile)
                self._groups[profile] = group
            return group


def _vertices(spec: GraphSpec, path: str = "") -> Iterator[tuple[str, VertexSpec]]:
    """Every vertex of `spec` and of its subgraphs, with its path."""
    for name, vertex in spec.vertices.items():
        yield f"{path}{name}", vertex
        if vertex.child is not None:
            yield from _vertices(vertex.child.spec, f"{path}{name}/")
