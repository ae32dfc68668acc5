"""Lineage: finding the merge base of several state versions, and merging them.

Pure functions over `Node` records. The base of a merge is the states' lowest
common ancestor; when there are several (criss-cross fan-ins), the base is
itself their merge, computed recursively, as git's recursive merge does, so no
change is counted twice.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Sequence
from itertools import count
from typing import Any

from actorgraph._errors import MergeConflictError
from actorgraph._types import Node
from actorgraph.merge import Merge

__all__ = ["distinct", "lowest_common_ancestors", "merge_located", "merge_nodes", "rooted"]


def distinct(nodes: Iterable[Node]) -> list[Node]:
    """The nodes without repeats, in first-seen order."""
    seen: set[int] = set()
    out = []
    for node in nodes:
        if id(node) not in seen:
            seen.add(id(node))
            out.append(node)
    return out


def lowest_common_ancestors(nodes: Sequence[Node]) -> list[Node]:  # noqa: C901 - git merge-base paint walk
    """The common ancestors of `nodes` that have no common ancestor below them.

    A node counts as its own ancestor. Walks the lineage from the deepest
    versions down and stops as soon as every walk has met, so the cost is the
    part of the history between the nodes and their bases.

    Args:
        nodes: distinct versions (at least one).

    Returns:
        The lowest common ancestors, deepest first; empty when the nodes share none.
    """
    full = (1 << len(nodes)) - 1
    paint: dict[int, int] = {}
    stale: set[int] = set()
    tie = count()
    heap: list[tuple[int, int, Node]] = []
    for i, node in enumerate(nodes):
        key = id(node)
        if key not in paint:
            heapq.heappush(heap, (-node.depth, next(tie), node))
        paint[key] = paint.get(key, 0) | (1 << i)
    live = len(heap)  # heap entries that are not stale
    found: list[Node] = []
    queued: set[int] = {id(n) for _, _, n in heap}
    while live:
        _, _, node = heapq.heappop(heap)
        key = id(node)
        queued.discard(key)
        is_stale = key in stale
        if not is_stale:
            live -= 1
        bits = paint[key]
        if bits == full and not is_stale:
            found.append(node)
            is_stale = True
        for parent in node.parents:
            pkey = id(parent)
            paint[pkey] = paint.get(pkey, 0) | bits
            was_stale = pkey in stale
            if is_stale and not was_stale:
                stale.add(pkey)
                if pkey in queued:
                    live -= 1
            if pkey not in queued:
                heapq.heappush(heap, (-parent.depth, next(tie), parent))
                queued.add(pkey)
                if pkey not in stale:
                    live += 1
    return found


def merge_nodes(nodes: Sequence[Node], merge: Merge) -> Any:
    """Merge the states of `nodes` against their lowest common ancestor.

    Args:
        nodes: versions to merge, in task order (repeats are merged once).
        merge: the graph's merge function.

    Returns:
        The merged state (the single state when there is only one version).
    """
    unique = distinct(nodes)
    if len(unique) == 1:
        return unique[0].state
    bases = lowest_common_ancestors(unique)
    if not bases:
        base: Any = {}
    elif len(bases) == 1:
        base = bases[0].state
    else:
        base = merge_nodes(sorted(bases, key=lambda n: (n.depth, n.id)), merge)
    return merge(base, [n.state for n in unique])


def merge_located(nodes: Sequence[Node], senders: Sequence[str], merge: Merge, step: int) -> Any:
    """`merge_nodes`, but a conflict names the tasks that sent the conflicting states, and the step.

    Args:
        nodes: versions to merge, in task order.
        senders: the task that sent each version (same order).
        merge: the graph's merge function.
        step: the superstep the merge belongs to.

    Raises:
        MergeConflictError: with `vertices` (the senders' task ids) and `step` set.
    """
    try:
        return merge_nodes(nodes, merge)
    except MergeConflictError as exc:
        unique = distinct(nodes)
        who = {id(node): sender for node, sender in reversed(list(zip(nodes, senders, strict=True)))}
        names = [who[id(unique[i])] for i in exc.branches if i < len(unique)]
        raise exc.located(names, step) from None


def rooted(node: Node) -> Node:
    """The same version with its history cut off (it becomes a root).

    Used when a single version is all that is live: no later merge can need a
    base older than it, and a long loop then keeps constant memory.
    """
    if not node.parents:
        return node
    return Node(node.id, node.state, (), node.depth)
