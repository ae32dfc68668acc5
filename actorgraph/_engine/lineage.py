"""Lineage: finding the merge base of several state versions, and merging them exactly.

Pure functions over `Node` records. Merging several versions must count every
change in their history exactly once, whatever the shape of that history:

- the base of a merge is the versions' lowest common ancestor; when there are
  several (criss-cross fan-ins), the base is itself their merge, computed
  recursively, as git's recursive merge does;
- when some of the versions share history that the others do not (uneven
  fan-outs: two of three branches come from one vertex), that group is merged
  first, against its own deeper base, and the group's result then stands for
  its members. Only a set of versions whose pairwise shared history is exactly
  the base's is handed to the merge function in one call.

Every choice (which group first, in which order) depends only on the shape of
the lineage and the order of the versions given (task order), never on version
ids, which differ between a run and its resumption.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import count
from typing import Any

from actorgraph._model.errors import MergeConflictError
from actorgraph._model.records import Node
from actorgraph.merge import Merge

__all__ = ["distinct", "lowest_common_ancestors", "merge_located", "merge_nodes"]


def distinct(nodes: Iterable[Node]) -> list[Node]:
    """The nodes without repeats, in first-seen order."""
    seen: set[int] = set()
    out = []
    for node in nodes:
        if id(node) not in seen:
            seen.add(id(node))
            out.append(node)
    return out


@dataclass(frozen=True, slots=True)
class _Survey:
    """What one walk down the lineage of some versions found.

    Attributes:
        bases: their lowest common ancestors, in the order the walk met them.
        shared: the deepest version that some, but not all, of them descend
            from, as a bit mask over the versions (0 when there is none).
    """

    bases: list[Node]
    shared: int


def _survey(nodes: Sequence[Node], *, find_shared: bool = True) -> _Survey:  # noqa: C901 - one paint walk
    """Walk the lineage of `nodes` (distinct) from the deepest version down.

    Every version met is painted with the set of `nodes` that descend from it.
    A version painted with all of them and not below another such version is a
    lowest common ancestor; a version painted with several but not all of them
    is shared history of a group. Parents are always shallower than their
    children, so a version's paint is complete when it leaves the heap.

    The walk ends when every version left is below a common ancestor, or (with
    `find_shared`) at the first shared version, which is the deepest one.
    """
    full = (1 << len(nodes)) - 1
    stale: set[int] = set()  # at or below a common ancestor already found
    tie = count()  # equal depths leave the heap in the order they entered it
    heap, paint = _painted(nodes, tie)
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
        if bits == full:
            if not is_stale:
                found.append(node)
                is_stale = True
        elif find_shared and bits & (bits - 1):  # two or more, not all
            return _Survey(found, bits)
        for parent in node.parents:
            pkey = id(parent)
            paint[pkey] = paint.get(pkey, 0) | bits
            if is_stale and pkey not in stale:
                stale.add(pkey)
                if pkey in queued:
                    live -= 1
            if pkey not in queued:
                heapq.heappush(heap, (-parent.depth, next(tie), parent))
                queued.add(pkey)
                if pkey not in stale:
                    live += 1
    return _Survey(found, 0)


def _painted(nodes: Sequence[Node], tie: count[int]) -> tuple[list[tuple[int, int, Node]], dict[int, int]]:
    """The walk's start: a heap of the versions (deepest first), each painted with its own bit."""
    paint: dict[int, int] = {}
    heap: list[tuple[int, int, Node]] = []
    for i, node in enumerate(nodes):
        key = id(node)
        if key not in paint:
            heapq.heappush(heap, (-node.depth, next(tie), node))
        paint[key] = paint.get(key, 0) | (1 << i)
    return heap, paint


def lowest_common_ancestors(nodes: Sequence[Node]) -> list[Node]:
    """The common ancestors of `nodes` that have no common ancestor below them.

    A node counts as its own ancestor. The walk stops as soon as every path has
    met, so the cost is the part of the history between the nodes and their bases.

    Args:
        nodes: distinct versions (at least one).

    Returns:
        The lowest common ancestors, deepest first; empty when the nodes share none.
    """
    return _survey(nodes, find_shared=False).bases


@dataclass(frozen=True, slots=True)
class _Branch:
    """A version taking part in a merge, and which of the given versions it stands for."""

    node: Node
    members: tuple[int, ...]


def merge_nodes(nodes: Sequence[Node], merge: Merge) -> Any:
    """Merge the states of `nodes`, counting every change in their history once.

    Args:
        nodes: versions to merge, in task order (repeats are merged once).
        merge: the graph's merge function.

    Returns:
        The merged state (the single state when there is only one version).

    Raises:
        MergeConflictError: from `merge`; its `branches` are indices into the
            distinct versions of `nodes`.
    """
    unique = distinct(nodes)
    if len(unique) == 1:
        return unique[0].state
    return _merge([_Branch(n, (i,)) for i, n in enumerate(unique)], merge)


def _merge(branches: list[_Branch], merge: Merge) -> Any:
    while len(branches) > 1:
        survey = _survey([b.node for b in branches])
        if not survey.shared:
            return _merge_at_base(branches, survey.bases, merge)
        group = [b for i, b in enumerate(branches) if survey.shared >> i & 1]
        state = _merge(group, merge)
        members = tuple(sorted(m for b in group for m in b.members))
        joined = _Branch(Node.child("", state, *(b.node for b in group)), members)
        rest = set(map(id, group[1:]))
        branches = [joined if b is group[0] else b for b in branches if id(b) not in rest]
    return branches[0].node.state


def _merge_at_base(branches: Sequence[_Branch], bases: Sequence[Node], merge: Merge) -> Any:
    """One call of the merge function: no two branches share history beyond `bases`."""
    if not bases:
        base: Any = {}
    elif len(bases) == 1:
        base = bases[0].state
    else:
        try:
            base = merge_nodes(bases, merge)
        except MergeConflictError as exc:  # the conflict is in the shared history: no branch to blame
            raise exc.regrouped(()) from None
    try:
        return merge(base, [b.node.state for b in branches])
    except MergeConflictError as exc:
        members = [m for i in exc.branches if i < len(branches) for m in branches[i].members]
        raise exc.regrouped(members) from None


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
