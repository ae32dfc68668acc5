"""Reading and changing a thread's history: snapshots, history, state updates."""

from __future__ import annotations

import dataclasses
import uuid
from typing import Any

from actorgraph._errors import ActorGraphError, InvalidUpdateError, MergeConflictError
from actorgraph._inputs import updated_state
from actorgraph._lineage import distinct
from actorgraph._recorder import Recorder
from actorgraph._results import Snapshot
from actorgraph._resume import ThreadNotFoundError
from actorgraph._spec import GraphSpec
from actorgraph._superstep import deliver_as, initial, replace_state, state_of, status_of
from actorgraph._types import END, START, ErrorInfo, Message, Node, Position
from actorgraph.checkpoint._load import Loaded, load
from actorgraph.checkpoint._protocol import Checkpointer

__all__ = ["History", "snapshot"]

_SEVERITY = {"pending": 0, "ok": 1, "interrupt": 2, "error": 3}


def snapshot(spec: GraphSpec, loaded: Loaded) -> Snapshot[Any]:
    """The `Snapshot` of a loaded checkpoint."""
    pos = loaded.position
    superstep = loaded.superstep
    row = loaded.row
    status = status_of(pos, superstep, loaded.pauses)
    error = None
    try:
        state = state_of(pos, spec.merge)
    except MergeConflictError as exc:  # the thread must stay readable, to be repaired
        state, status, error = None, "error", ErrorInfo.from_exception(exc, retryable=False)
    return Snapshot(
        state=state,
        status=status,  # type: ignore[arg-type]
        step=pos.step,
        next=pos.next_vertices(),
        superstep=superstep,
        interrupts=loaded.interrupts,
        checkpoint_id=row.checkpoint_id,
        parent_id=row.parent_id,
        created_at=row.created_at,
        thread_id=row.thread_id,
        source=row.source,
        error=error,
    )


class History:
    """A compiled graph's access to the threads in its checkpointer: snapshots, history, updates."""

    def __init__(self, spec: GraphSpec, checkpointer: Checkpointer | None) -> None:
        self.spec = spec
        self.checkpointer = checkpointer

    def _store(self) -> Checkpointer:
        if self.checkpointer is None:
            msg = "this graph has no checkpointer; compile it with checkpointer=... to keep threads"
            raise ActorGraphError(msg)
        return self.checkpointer

    def _load(self, thread_id: str, checkpoint_id: str | None) -> Loaded:
        loaded = load(self._store(), thread_id, checkpoint_id)
        if loaded is None:
            where = f"checkpoint {checkpoint_id!r} of thread" if checkpoint_id else "thread"
            msg = f"{where} {thread_id!r} has no stored checkpoint"
            raise ThreadNotFoundError(msg)
        return loaded

    def get_state(self, thread_id: str, checkpoint_id: str | None = None) -> Snapshot[Any]:
        """The snapshot at the head (or at `checkpoint_id`)."""
        return snapshot(self.spec, self._load(thread_id, checkpoint_id))

    def get_history(
        self, thread_id: str, *, limit: int | None = None, before: str | None = None
    ) -> list[Snapshot[Any]]:
        """Snapshots of the thread's checkpoints, newest first."""
        rows = self._store().history(thread_id, limit=limit, before=before)
        return [self.get_state(thread_id, row.checkpoint_id) for row in rows]

    def statuses(self, thread_id: str) -> dict[str, str]:
        """Each vertex's last status in the thread: ok, error, interrupt, or pending (about to run)."""
        history = self.get_history(thread_id)
        out: dict[str, str] = {}
        for index, snap in enumerate(history):
            latest: dict[str, str] = {}
            for result in snap.superstep.results.values():
                previous = latest.get(result.vertex)
                if previous is None or _SEVERITY[result.status] > _SEVERITY[previous]:
                    latest[result.vertex] = result.status
            if index == 0:
                latest.update({v: "pending" for v in snap.next if v not in latest})
            for vertex, status in latest.items():
                out.setdefault(vertex, status)
        return out

    def _base(self, pos: Position, replace: bool) -> Any:
        """The state an update applies to (none is needed to replace it)."""
        if replace:
            return None
        try:
            return state_of(pos, self.spec.merge)
        except MergeConflictError as exc:
            msg = (
                f"the thread's state cannot be computed ({exc}), so an update has nothing to apply to; "
                "give the whole repaired state with update_state(..., replace=True)"
            )
            raise InvalidUpdateError(msg) from exc

    def update_state(
        self,
        thread_id: str,
        values: Any,
        *,
        as_vertex: str | None,
        checkpoint_id: str | None,
        replace: bool,
    ) -> str:
        """Write an "update" checkpoint with `values` applied to the thread's state; return its id."""
        store = self._store()
        loaded = self._load(thread_id, checkpoint_id)
        head = store.get(thread_id)
        if as_vertex is not None and as_vertex not in (*self.spec.vertices, START, END):
            known = ", ".join(self.spec.vertices)
            msg = f"update_state(as_vertex={as_vertex!r}): no such vertex (vertices: {known}; or START, END)"
            raise InvalidUpdateError(msg)
        pos = loaded.position
        who = "update_state(...)"
        state = updated_state(self.spec, self._base(pos, replace), values, who, replace=replace)
        live = distinct(m.node for m in pos.messages())
        node = Node.child(f"{uuid.uuid4().hex[:12]}/update", state, *live)
        carried = [
            r for r in loaded.pending.values() if r.status != "ok" and as_vertex not in (r.vertex, START, END)
        ]
        if as_vertex is None:
            updated = replace_state(pos, node)
        elif as_vertex == END:  # the thread ends here: nothing pending, nothing in flight
            updated = Position(pos.step, finished=(Message(END, node, "update_state", step=pos.step),))
        elif as_vertex == START:  # the values are a new input: the next invoke(None) starts over
            updated = dataclasses.replace(initial(self.spec, node), step=pos.step)
        else:
            updated = deliver_as(self.spec, pos, as_vertex, node)
        recorder = Recorder(
            store,
            thread_id,
            "sync",
            head=head.checkpoint_id if head is not None else None,
            parent=loaded.row.checkpoint_id,
            stored=loaded.stored,
            source="update",
            origin=loaded.origin,
        )
        new_id = recorder.checkpoint(updated)
        recorder.carry(carried)
        return new_id
