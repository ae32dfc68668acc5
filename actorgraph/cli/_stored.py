"""A thread as the store alone tells it: no graph is loaded, none of its code imported.

`show` and `threads` read threads this way. What needs no code is exact:
status, superstep, next vertices, each task's outcome, the questions and who
answered them. The state of a run with several branches in flight is the
merge of their states, and a graph's merge is code: without the graph they are
merged with the default merge (three-way, per key), and the reading says so.
The thread of an `@entrypoint` (or a task call) says so in its labels: its state
is shown as its graph shows it, the function's return value, never its record.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, cast

from actorgraph import ActorGraphError, MergeConflictError, Snapshot, ThreadNotFoundError
from actorgraph._engine.superstep import state_of, status_of
from actorgraph._model.records import Node, Position, RunStatus
from actorgraph._model.runs import Claim
from actorgraph._model.spec import FACE_KEY, Face
from actorgraph.checkpoint import Checkpointer
from actorgraph.checkpoint._load import Loaded, load
from actorgraph.checkpoint._shape import damaged
from actorgraph.func._faces import FACES
from actorgraph.merge import three_way

__all__ = ["Reading", "read", "read_history", "status_of_loaded"]


@dataclass(frozen=True, slots=True)
class Reading:
    """One checkpoint of a thread, read without its graph.

    Attributes:
        snapshot: as `get_state` gives it (the state merged by the default merge, see `note`).
        note: "" when the state is the graph's own; else how it was made without the graph.
        claims: answers taken for the questions of its pending superstep, by interrupt id.
        branches: when the state is not exact (`note`), the states it merges: (sender, state).
    """

    snapshot: Snapshot[Any]
    note: str = ""
    claims: Mapping[str, Claim] = field(default_factory=dict)
    branches: tuple[tuple[str, Any], ...] = ()


def status_of_loaded(loaded: Loaded) -> RunStatus:
    """The status of a loaded checkpoint, as `get_state` gives it (all questions claimed: running)."""
    status = status_of(loaded.position, loaded.superstep, loaded.pauses)
    if status == "interrupted" and not loaded.interrupts:
        status = "running"  # every question answered: its run goes on (or its process stopped)
    return cast("RunStatus", status)


def _live(pos: Position) -> dict[str, tuple[str, Node]]:
    """The versions the state is the merge of (as `state_of` picks them), by id, with their senders."""
    if pos.done:
        messages = [*pos.finished, *(m for buffered in pos.joins.values() for m in buffered)]
        return {m.node.id: (m.sender, m.node) for m in messages}
    picked = ((m.sender, m.node.parents[0] if m.send and m.node.parents else m.node) for m in pos.messages())
    return {node.id: (sender, node) for sender, node in picked}


def _state(pos: Position) -> tuple[Any, str, tuple[tuple[str, Any], ...]]:
    """The state at `pos` without the graph's merge; when that is not exact, a note and the branches."""
    live = _live(pos)
    branches = tuple((sender, node.state) for sender, node in live.values())
    try:
        state = state_of(pos, three_way)
    except (ActorGraphError, TypeError, ValueError) as exc:
        why = f"conflict on key {exc.key!r}" if isinstance(exc, MergeConflictError) else "do not merge"
        note = (
            f"the graph's merge combines the {len(live)} states in flight; without the graph they {why}, "
            "so they are shown one by one (show -g TARGET merges them)"
        )
        return None, note, branches
    if len(live) <= 1:
        return state, "", ()
    note = (
        f"merged from {len(live)} states in flight with the default merge, not the graph's own; "
        "show -g TARGET uses the graph's"
    )
    return state, note, branches


def _face(checkpointer: Checkpointer, thread_id: str) -> Face | None:
    """The face of the graph that made the thread, if its labels name one (an entrypoint's)."""
    return FACES.get(str(checkpointer.get_metadata(thread_id).get(FACE_KEY)))


def _reading(loaded: Loaded, face: Face | None = None) -> Reading:
    pos, row = loaded.position, loaded.row
    state, note, branches = _state(pos)
    if face is not None:  # one line of states: its return value, as the graph shows it
        state, note, branches = face.shown(state), "", ()
    snapshot: Snapshot[Any] = Snapshot(
        state=state,
        status=status_of_loaded(loaded),
        step=pos.step,
        next=pos.next_vertices(),
        superstep=loaded.superstep,
        interrupts=loaded.interrupts,
        checkpoint_id=row.checkpoint_id,
        parent_id=row.parent_id,
        created_at=row.created_at,
        thread_id=row.thread_id,
        source=row.source,
    )
    return Reading(snapshot, note, loaded.claims, branches)


def read(checkpointer: Checkpointer, thread_id: str) -> Reading:
    """The head of `thread_id`, without its graph.

    Raises:
        ThreadNotFoundError: the thread is not in the store.
        SerializationError: a record is damaged (the error names the thread, checkpoint and field).
    """
    loaded = load(checkpointer, thread_id)
    if loaded is None:
        raise ThreadNotFoundError(f"thread {thread_id!r} has no stored checkpoint")
    return _reading(loaded, _face(checkpointer, thread_id))


def read_history(checkpointer: Checkpointer, thread_id: str) -> list[Reading]:
    """Every checkpoint of `thread_id`, newest first, without its graph.

    Raises:
        SerializationError: a record is damaged.
    """
    try:
        rows = checkpointer.history(thread_id)
    except ActorGraphError:
        raise
    except (TypeError, ValueError, KeyError, IndexError) as exc:  # a stored row of the wrong types
        raise damaged(f"the checkpoint list of thread {thread_id!r}", f"{type(exc).__name__}: {exc}") from exc
    readings = []
    face = _face(checkpointer, thread_id) if rows else None
    for row in rows:
        loaded = load(checkpointer, thread_id, row.checkpoint_id)
        if loaded is not None:
            readings.append(_reading(loaded, face))
    return readings
