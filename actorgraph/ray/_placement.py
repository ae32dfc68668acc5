"""Where partitions run: spread over the nodes by what each can hold, or as Ray's scheduler places them.

`placement="spread"` (the default) names a node for every partition: each alive
node gets partitions in proportion to its CPUs (the default group) or to how
many copies of the group's resources it can hold (a resource group), in
turns, so a cluster of a head and two one-CPU workers gets one partition on
each. The partition is bound to its node (Ray's
`NodeAffinitySchedulingStrategy(soft=False)`: a soft request was not kept,
measured here); when that node dies the backend starts it anew on a live
node (`_partitions`). Ray's own `"SPREAD"` strategy is best effort: on a head
and two workers here, it put two of the three partitions on one node, and
none on another, in two starts of three.

`"SPREAD"` and `"DEFAULT"` hand placement to Ray's scheduler by those names; a
Ray scheduling strategy object (`NodeLabelSchedulingStrategy`,
`PlacementGroupSchedulingStrategy`, ...) is given to every partition as it is.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from actorgraph._model.errors import ConfigError

__all__ = ["SPREAD", "Node", "check_placement", "fits", "plan", "refill", "strategy"]

SPREAD = "spread"  # ours: nodes named, in proportion to what each holds
_RAYS = ("SPREAD", "DEFAULT")  # Ray's scheduler, by the names Ray gives its strategies
_STRATEGIES = (  # Ray's strategy objects (ray.util.scheduling_strategies), given to every partition
    "PlacementGroupSchedulingStrategy",
    "NodeAffinitySchedulingStrategy",
    "NodeLabelSchedulingStrategy",
)

Node = tuple[str, Mapping[str, float]]  # a node's id and its resources (`ray.nodes()`)


def check_placement(placement: Any, ray: Any = None) -> None:
    """Refuse a `placement=` that is neither a name we know nor a Ray scheduling strategy.

    Args:
        placement: the value given.
        ray: the `ray` module, once imported: an object is then checked to be one of
            its strategies (before, by its module's name: Ray is not imported for it).

    Raises:
        ConfigError: naming the value and what to give.
    """
    if isinstance(placement, str):
        if placement == SPREAD or placement in _RAYS:
            return
    elif ray is None and type(placement).__module__ == "ray.util.scheduling_strategies":
        return  # checked again once Ray is imported
    elif ray is not None and isinstance(placement, _strategies(ray)):
        return
    msg = (
        f"RayBackend(placement={placement!r}): give 'spread' (partitions over the nodes by their CPUs), "
        "'SPREAD' or 'DEFAULT' (Ray's scheduler decides), or a Ray scheduling strategy object "
        "(ray.util.scheduling_strategies)"
    )
    raise ConfigError(msg)


def _strategies(ray: Any) -> tuple[type, ...]:
    return tuple(getattr(ray.util.scheduling_strategies, name) for name in _STRATEGIES)


def fits(nodes: Sequence[Node], resources: Mapping[str, float]) -> float:
    """How many partitions holding `resources` the nodes can host together."""
    return sum(_copies(held, resources) for _, held in nodes)


def plan(nodes: Sequence[Node], resources: Mapping[str, float], count: int) -> list[str]:
    """The node of each of `count` partitions: in turns, in proportion to what each node holds.

    A node's weight is its CPUs for a group without resources, else how many
    copies of `resources` it holds; nodes that hold none get none (all nodes
    alike when none holds any: a group without resources fits anywhere). Each
    next partition goes to the node furthest below its share (D'Hondt's rule:
    none gets less than its proportional share, rounded down), a tie to the
    node with fewer, so equal nodes take turns.
    """
    weights = [(node, _weight(held, resources)) for node, held in nodes]
    weights = [(node, weight) for node, weight in weights if weight > 0] or [(node, 1.0) for node, _ in nodes]
    if not weights:
        return []
    given = dict.fromkeys((node for node, _ in weights), 0)
    order = {node: i for i, (node, _) in enumerate(weights)}
    chosen = []
    for _ in range(count):
        node = min(weights, key=lambda w: ((given[w[0]] + 1) / w[1], given[w[0]], order[w[0]]))[0]
        given[node] += 1
        chosen.append(node)
    return chosen


def refill(nodes: Sequence[Node], resources: Mapping[str, float], placed: Sequence[str]) -> str:
    """The node `plan` would give one more partition, the group's others being on the nodes `placed`."""
    alive = {node for node, _ in nodes}
    count = len([node for node in placed if node in alive]) + 1
    wanted = Counter(plan(nodes, resources, count))
    wanted.subtract(node for node in placed if node in alive)
    return max(wanted, key=lambda node: (wanted[node], -[n for n, _ in nodes].index(node)))


def strategy(ray: Any, placement: Any, node: str) -> Any:
    """The `scheduling_strategy` of a partition that `plan` placed on `node`."""
    if placement != SPREAD:
        return placement
    affinity = ray.util.scheduling_strategies.NodeAffinitySchedulingStrategy
    return affinity(node_id=node, soft=False)  # bound to it: started anew elsewhere if it dies


def _weight(held: Mapping[str, float], resources: Mapping[str, float]) -> float:
    """A node's share of a group's partitions: the copies of its resources it holds, else its CPUs."""
    copies = _copies(held, resources)
    return copies if copies != math.inf else held.get("CPU", 0.0)


def _copies(held: Mapping[str, float], resources: Mapping[str, float]) -> float:
    """How many partitions holding `resources` fit on a node (inf when nothing is asked for)."""
    names = {"num_cpus": "CPU", "num_gpus": "GPU"}
    copies = math.inf
    for key, amount in resources.items():
        if amount > 0:
            copies = min(copies, held.get(names.get(key, key), 0.0) // amount)
    return copies
