"""Partition actors started where the placement says, waited for, and started anew when their node died.

With `placement="spread"` each partition is bound to the node the plan names
(`_placement.plan`): Ray restarts it there when its process dies, and never
elsewhere, for a soft request was not kept (measured on a head and two
workers: three partitions asked softly for three nodes landed on one).
So when a partition's node is gone, `revive` starts a new actor for it on the
live node the plan would give one more partition, and the attempts that died
with the old one are retried there.
"""

from __future__ import annotations

import contextlib
import time
from typing import Any

from actorgraph.ray._gate import Gate
from actorgraph.ray._groups import Group, Partition, Profile
from actorgraph.ray._partition import PartitionWorker
from actorgraph.ray._placement import SPREAD, Node, fits, plan, refill, strategy
from actorgraph.ray._settings import Settings

__all__ = ["Starter"]


class Starter:
    """Starts the partitions of a backend, and brings them back."""

    def __init__(self, ray: Any, settings: Settings, driver: tuple[str, int]) -> None:
        """Args: the `ray` module, the backend's settings, the driver's node id and pid."""
        self.ray = ray
        self._set = settings
        self._driver = driver
        self._remote = ray.remote(PartitionWorker)

    def nodes(self) -> list[Node]:
        """The alive nodes of the cluster: their ids and resources, in Ray's order (the head first)."""
        return [(n["NodeID"], n["Resources"]) for n in self.ray.nodes() if n.get("Alive")]

    def group(self, profile: Profile) -> Group:
        """A new group of partitions holding `profile`, laid on the nodes by the plan."""
        nodes = self.nodes()
        where = plan(nodes, dict(profile), self._count(nodes, profile))
        return Group(
            profile, [Partition(self._start(profile, node), node=self._bound(node)) for node in where]
        )

    def revive(self, group: Group, partition: Partition, gate: Gate) -> bool:
        """Wait (up to `connect_timeout`) until `partition` answers again; False if it never did.

        Starts it anew on a live node when the node it is bound to is gone. Asks in
        slices of a second at most, so a backend closed meanwhile is not kept waiting.
        """
        ray = self.ray
        deadline = time.monotonic() + self._set.connect_timeout
        while (left := deadline - time.monotonic()) > 0 and gate.enter():
            try:
                if partition.node is not None and partition.node not in {n for n, _ in self.nodes()}:
                    self._replace(group, partition)
                ray.get(partition.actor.where.remote(), timeout=min(left, 1.0))
            except ray.exceptions.GetTimeoutError:
                continue  # still starting
            except ray.exceptions.RayError:
                time.sleep(0.05)  # restarting: its calls fail at once until it is back
            else:
                return True
            finally:
                gate.leave()
        return False

    def _replace(self, group: Group, partition: Partition) -> None:
        """Start `partition` anew on the live node the plan would give one more of the group's."""
        nodes = self.nodes()
        with group.lock:
            placed = [p.node for p in group.partitions if p is not partition and p.node is not None]
        node = refill(nodes, dict(group.profile), placed)
        old, partition.actor = partition.actor, self._start(group.profile, node)
        partition.node = node
        with contextlib.suppress(Exception):  # dead with its node: make sure Ray never brings it back
            self.ray.kill(old, no_restart=True)

    def _count(self, nodes: list[Node], profile: Profile) -> int:
        """How many partitions the group of `profile` gets: the cluster's CPUs, or what the nodes hold."""
        cpus = int(self.ray.cluster_resources().get("CPU", 1)) or 1
        most = self._set.partitions or cpus
        if not profile:
            return most
        return max(1, min(most, int(min(fits(nodes, dict(profile)), most))))

    def _bound(self, node: str) -> str | None:
        """The node a partition is bound to (None: Ray's scheduler places it)."""
        return node if self._set.placement == SPREAD else None

    def _start(self, profile: Profile, node: str) -> Any:
        wanted: dict[str, float] = dict(profile)
        options: dict[str, Any] = {
            "max_restarts": -1,
            "max_task_retries": 0,
            "max_concurrency": self._set.max_concurrency,
            "num_cpus": wanted.pop("num_cpus", 0),
            "num_gpus": wanted.pop("num_gpus", 0),
            "scheduling_strategy": strategy(self.ray, self._set.placement, node),
        }
        if wanted:
            options["resources"] = wanted
        return self._remote.options(**options).remote(self._set.switch_interval, self._driver)
