"""Changing a thread's state by hand (`update_state`, `bulk_update_state`), as positions. Pure.

One superstep of updates is one new checkpoint. A superstep of one update
stands for a vertex (`as_vertex`: routing goes on as if it had just produced
the state), for the input (`START`), for the end (`END`), or for no one (None:
the vertices about to run see the new state). A superstep of several updates
stands for several vertices at once, as the parallel tasks of one superstep:
their writes apply in order through the reducers, as one task's would (a key
without a reducer takes one of them), and each of the vertices routes the
resulting state, as if it had produced it. `bulk_update_state` plans every
superstep before anything is written, so a bad update leaves the thread as it
was, and the error names the superstep and the update.
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Mapping, Sequence
from typing import Any

from actorgraph._engine.inputs import updated_state
from actorgraph._engine.lineage import distinct
from actorgraph._engine.superstep import deliver_all, initial, replace_state, state_of
from actorgraph._engine.updates import writes_of
from actorgraph._model.errors import ActorGraphError, InvalidUpdateError, MergeConflictError
from actorgraph._model.records import END, START, Message, Node, Position, VertexResult
from actorgraph._model.spec import GraphSpec

__all__ = [
    "Update",
    "base_state",
    "carried_over",
    "check_vertex",
    "kept_pending",
    "moved",
    "plan_supersteps",
    "supersteps_of",
]

Update = tuple[Any, "str | None"]
"""One update: its values and the vertex it stands for (None: no one)."""


def supersteps_of(supersteps: Any, spec: GraphSpec) -> list[list[Update]]:
    """`bulk_update_state`'s supersteps, each a list of `(values, as_vertex)`.

    An update is a mapping (standing for no vertex) or a `(values, as_vertex)` pair.

    Raises:
        InvalidUpdateError: not a list of lists, an empty one, an update of
            another shape, a vertex that does not exist, or a superstep of
            several updates that names no vertex, START or END, or one vertex twice.
    """
    if not isinstance(supersteps, Sequence) or isinstance(supersteps, (str, bytes)) or not supersteps:
        msg = (
            "bulk_update_state takes a non-empty list of supersteps, each a list of updates: [[update, ...]]"
        )
        raise InvalidUpdateError(msg)
    out = []
    for index, updates in enumerate(supersteps):
        if not isinstance(updates, Sequence) or isinstance(updates, (str, bytes)) or not updates:
            msg = f"bulk_update_state: superstep {index} is {updates!r}, not a non-empty list of updates"
            raise InvalidUpdateError(msg)
        parsed = [
            _update(update, spec, f"bulk_update_state: update {j} of superstep {index}")
            for j, update in enumerate(updates)
        ]
        if len(parsed) > 1:
            _check_parallel(parsed, index)
        out.append(parsed)
    return out


def _update(update: Any, spec: GraphSpec, where: str) -> Update:
    if isinstance(update, Mapping):
        return update, None
    if isinstance(update, tuple) and len(update) == 2 and (update[1] is None or isinstance(update[1], str)):  # noqa: PLR2004 - a pair
        check_vertex(spec, update[1], f"{where} ")
        return update[0], update[1]
    msg = f"{where} is {update!r}; an update is a mapping, or a (values, as_vertex) pair"
    raise InvalidUpdateError(msg)


def _check_parallel(updates: list[Update], index: int) -> None:
    """Several updates in one superstep stand for several vertices, each named once."""
    vertices = [vertex for _, vertex in updates]
    if any(vertex in (None, START, END) for vertex in vertices):
        msg = (
            f"bulk_update_state: superstep {index} has {len(updates)} updates, so each stands for a "
            f"vertex, as parallel tasks (as_vertex: {vertices}); None, START and END take a superstep each"
        )
        raise InvalidUpdateError(msg)
    twice = sorted({str(v) for v in vertices if vertices.count(v) > 1})
    if twice:
        msg = (
            f"bulk_update_state: superstep {index} names vertex(es) {twice} more than once; put a "
            "vertex's writes in one update, or in supersteps of their own"
        )
        raise InvalidUpdateError(msg)


def check_vertex(spec: GraphSpec, as_vertex: str | None, where: str) -> None:
    """Refuse an `as_vertex` that names no vertex (or START, END).

    Raises:
        InvalidUpdateError: naming the vertices there are.
    """
    if as_vertex is not None and as_vertex not in (*spec.vertices, START, END):
        known = ", ".join(spec.vertices)
        msg = f"{where}(as_vertex={as_vertex!r}): no such vertex (vertices: {known}; or START, END)"
        raise InvalidUpdateError(msg)


def base_state(spec: GraphSpec, pos: Position) -> Any:
    """The state updates apply to at `pos`.

    Raises:
        InvalidUpdateError: the state cannot be computed (a merge conflict), saying how to repair it.
    """
    try:
        return state_of(pos, spec.merge)
    except MergeConflictError as exc:
        msg = (
            f"the thread's state cannot be computed ({exc}), so an update has nothing to apply to; "
            "give the whole repaired state with update_state(..., replace=True)"
        )
        raise InvalidUpdateError(msg) from exc


def moved(
    spec: GraphSpec, pos: Position, updates: Sequence[Update], *, replace: bool = False, who: str = ""
) -> Position:
    """The position after one superstep of updates (with `replace`, a single update is the whole state).

    Args:
        spec: the graph.
        pos: the thread's position.
        updates: the superstep's updates.
        replace: the single update is the whole new state.
        who: what makes the updates, for messages (default: "update_state(...)";
            else each update is named by its place and vertex).

    Raises:
        InvalidUpdateError: an update does not fit the state or its schema.
        RoutingError: a router of a vertex an update stands for failed.
    """
    base = None if replace else base_state(spec, pos)
    if base is None and not replace and not pos.messages():
        base = {}  # a new thread: the updates make its first state
    live = distinct(m.node for m in pos.messages())
    state = _new_state(spec, base, updates, replace=replace, who=who)
    node = Node.child(f"{uuid.uuid4().hex[:12]}/update", state, *live)
    if len(updates) > 1:
        return deliver_all(spec, pos, [(vertex, node) for _, vertex in updates if vertex is not None])
    as_vertex = updates[0][1]
    if as_vertex is None:
        return replace_state(pos, node)
    if as_vertex == END:  # the thread ends here: nothing pending, nothing in flight
        return Position(pos.step, finished=(Message(END, node, "update_state", step=pos.step),))
    if as_vertex == START:  # the values are a new input: the next invoke(None) starts over
        return dataclasses.replace(initial(spec, node), step=pos.step)
    return deliver_all(spec, pos, [(as_vertex, node)])


def _new_state(spec: GraphSpec, base: Any, updates: Sequence[Update], *, replace: bool, who: str) -> Any:
    """A superstep's new state: the writes of all its updates, in order, as one task's.

    Each update is checked on its own first, so that an error names it; a key
    without a reducer takes one write. Values of None change nothing, as a
    vertex that returns None.
    """
    states = [
        updated_state(
            spec,
            base,
            values,
            f"{who}update {i} (as_vertex={vertex!r})" if who else "update_state(...)",
            replace=replace,
        )
        for i, (values, vertex) in enumerate(updates)
        if values is not None or replace
    ]
    if len(updates) == 1:
        return states[0] if states else base
    writes = [write for values, _ in updates if values is not None for write in writes_of(values, who)]
    return updated_state(spec, base, writes, f"{who}its updates together")


def carried_over(pending: Sequence[VertexResult], updates: Sequence[Update]) -> list[VertexResult]:
    """The outcomes still pending after a superstep of updates: failures and questions of other vertices.

    START and END drop them all (a new input, or the end).
    """
    vertices = {vertex for _, vertex in updates}
    if vertices & {START, END}:
        return []
    return [r for r in pending if r.status != "ok" and r.vertex not in vertices]


def kept_pending(pending: Sequence[VertexResult], *, fork: bool) -> list[VertexResult]:
    """The outcomes an update may carry from the checkpoint it applies to.

    An update of a checkpoint that is not the thread's head forks the thread: a
    new line of its history, whose questions are asked under ids of its own (as a
    replay's are). So a fork carries no question: its task runs again and asks
    anew, and an answer given to the old line's question never answers the fork's.
    """
    return [r for r in pending if r.status != "interrupt"] if fork else list(pending)


def plan_supersteps(
    spec: GraphSpec, pos: Position, pending: Sequence[VertexResult], supersteps: list[list[Update]]
) -> list[tuple[Position, list[VertexResult]]]:
    """Each superstep's position and the outcomes it carries, planned before anything is written.

    Raises:
        InvalidUpdateError: naming the superstep (and the update) that failed, and what was wrong.
    """
    planned = []
    for index, updates in enumerate(supersteps):
        where = f"bulk_update_state: superstep {index}, "
        try:
            pos = moved(spec, pos, updates, who=where)
            state_of(pos, spec.merge)  # the updates of one superstep must merge
        except ActorGraphError as exc:
            raise _located(exc, where) from exc
        pending = carried_over(pending, updates)
        planned.append((pos, list(pending)))
    return planned


def _located(exc: ActorGraphError, where: str) -> InvalidUpdateError:
    """The error of a planned superstep, named by its place (once), saying nothing was written."""
    said = str(exc) if str(exc).startswith(where) else f"{where}{exc}"
    return InvalidUpdateError(f"{said}; nothing was written, the thread is as it was")
