"""Threads' states and histories as the API shows them, read and changed through the facade.

A thread's checkpoints are read with the graph that ran it (its `graph_id`
label, set by its first run): `get_state`, `get_history`, `update_state`. A
snapshot becomes a `ThreadState` (`values`, `next`, `tasks`, `interrupts`,
`checkpoint`, `parent_checkpoint`, `metadata`, `created_at`), and a thread row
with its newest snapshot becomes a `Thread` (`status`, `values`, `interrupts` as
`{task_id: [{id, value}]}`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from actorgraph import END, START, Snapshot, ThreadNotFoundError
from actorgraph._model.spec import Face
from actorgraph.server._graphs import Graphs, NotFoundError, Served
from actorgraph.server._tables import ThreadRow
from actorgraph.server._wire import interrupt_list, iso, jsonable, message_keys, wire_state

__all__ = ["State", "thread_json"]

_STATUS: Final = {"interrupted": "interrupted", "error": "error"}


def _checkpoint(thread_id: str, checkpoint_id: str | None) -> dict[str, Any] | None:
    if checkpoint_id is None:
        return None
    return {"thread_id": thread_id, "checkpoint_ns": "", "checkpoint_id": checkpoint_id}


def _tasks(snap: Snapshot[Any], face: Face | None) -> list[dict[str, Any]]:
    """The tasks of the snapshot's superstep; a graph with a face (an entrypoint's) shows their results so."""
    results = snap.superstep.results
    names = dict.fromkeys(
        [*results, *(v for v in snap.next if v not in {r.vertex for r in results.values()})]
    )
    tasks = []
    for task_id in names:
        result = results.get(task_id)
        vertex = result.vertex if result is not None else task_id
        interrupts = (
            () if result is None else (result.nested or ((result.interrupt,) if result.interrupt else ()))
        )
        tasks.append(
            {
                "id": task_id,
                "name": vertex,
                "path": ["__pregel_pull", vertex],
                "error": jsonable(result.error) if result is not None and result.status == "error" else None,
                "interrupts": interrupt_list(interrupts),
                "checkpoint": None,
                "state": None,
                "result": jsonable(_result(result.state, face))
                if result is not None and result.status == "ok"
                else None,
            }
        )
    return tasks


def _result(state: Any, face: Face | None) -> Any:
    return state if face is None else face.shown(state)


def empty_state(thread_id: str) -> dict[str, Any]:
    """The state of a thread no run has written yet."""
    return {
        "values": {},
        "next": [],
        "tasks": [],
        "metadata": {},
        "created_at": None,
        "checkpoint": {"thread_id": thread_id, "checkpoint_ns": "", "checkpoint_id": None},
        "parent_checkpoint": None,
        "interrupts": [],
        "checkpoint_id": None,
        "parent_checkpoint_id": None,
    }


def status_of(snap: Snapshot[Any] | None) -> str:
    """A thread's status (when no run goes on) from its newest snapshot: idle, interrupted or error."""
    return "idle" if snap is None else _STATUS.get(snap.status, "idle")


class State:
    """Reading and changing threads' states with the graphs that ran them."""

    def __init__(self, graphs: Graphs) -> None:
        """Read threads with `graphs` (a thread's `graph_id` label chooses; with one graph, that one)."""
        self.graphs = graphs

    def graph_of(self, row: ThreadRow | None) -> Served | None:
        """The graph a thread is read with, or None when it has none yet."""
        name = row.metadata.get("graph_id") if row is not None else None
        if isinstance(name, str):
            try:
                return self.graphs.get(name)
            except NotFoundError:
                return None
        served = list(self.graphs)
        return served[0] if len(served) == 1 else None

    def snapshot(
        self, served: Served | None, thread_id: str, checkpoint_id: str | None = None
    ) -> Snapshot[Any] | None:
        """The thread's snapshot (at `checkpoint_id`), or None when it has no checkpoint."""
        if served is None:
            return None
        try:
            return served.app.get_state(thread_id, checkpoint_id)
        except ThreadNotFoundError:
            if checkpoint_id is not None:
                raise NotFoundError(f"thread {thread_id} has no checkpoint {checkpoint_id!r:.80}") from None
            return None

    def state_json(self, served: Served, snap: Snapshot[Any]) -> dict[str, Any]:
        """A snapshot as the API's `ThreadState`."""
        state = snap.state
        return {
            "values": wire_state(state, message_keys(served.app.spec.merge, state)),
            "next": list(snap.next),
            "tasks": _tasks(snap, served.app.spec.face),
            "metadata": {
                "source": snap.source,
                "step": snap.step,
                "parents": {},
                "graph_id": served.name,
                "assistant_id": served.assistant_id,
            },
            "created_at": iso(snap.created_at),
            "checkpoint": _checkpoint(snap.thread_id, snap.checkpoint_id),
            "parent_checkpoint": _checkpoint(snap.thread_id, snap.parent_id),
            "interrupts": interrupt_list(snap.interrupts),
            "checkpoint_id": snap.checkpoint_id,
            "parent_checkpoint_id": snap.parent_id,
        }

    def history(
        self,
        served: Served | None,
        thread_id: str,
        *,
        limit: int,
        before: str | None,
        metadata: Mapping[str, Any] | None,
    ) -> list[dict[str, Any]]:
        """The thread's states, newest first (at most `limit`, older than `before`, matching `metadata`)."""
        if served is None:
            return []
        try:
            snaps = served.app.get_history(thread_id, limit=None if metadata else limit, before=before)
        except ThreadNotFoundError:
            return []
        states = [self.state_json(served, s) for s in snaps]
        if metadata:
            states = [s for s in states if all(s["metadata"].get(k) == v for k, v in metadata.items())]
        return states[:limit]

    def update(
        self, served: Served, thread_id: str, values: Any, *, as_node: str | None, checkpoint_id: str | None
    ) -> str:
        """Apply an update to the thread's state (a thread without checkpoints begins so); its checkpoint."""
        if served.entrypoint and as_node is None:  # LangGraph's: as if its function had returned `values`
            as_node = next(iter(served.app.spec.vertices))
        try:
            return served.app.update_state(thread_id, values, as_vertex=as_node, checkpoint_id=checkpoint_id)
        except ThreadNotFoundError:
            if checkpoint_id is not None:
                raise
        return served.app.bulk_update_state(thread_id, [[(values, as_node or START)]])[-1]

    def copy(self, served: Served, source: str, target: str) -> None:
        """Begin thread `target` with `source`'s newest state (its history is not copied)."""
        snap = self.snapshot(served, source)
        if snap is not None:
            served.app.bulk_update_state(target, [[(snap.state, END)]])


def thread_json(row: ThreadRow, served: Served | None, snap: Snapshot[Any] | None) -> dict[str, Any]:
    """A thread as the API shows it: its row, and its newest state's values and questions."""
    values = None
    interrupts: dict[str, list[dict[str, Any]]] = {}
    if served is not None and snap is not None:
        state = snap.state
        values = wire_state(state, message_keys(served.app.spec.merge, state))
        for question in snap.interrupts:
            if question.kind == "interrupt":
                interrupts.setdefault(question.task_id or question.vertex, []).append(
                    {"id": question.id, "value": jsonable(question.value)}
                )
    return {
        "thread_id": row.thread_id,
        "created_at": iso(row.created_at),
        "updated_at": iso(row.updated_at),
        "state_updated_at": iso(snap.created_at if snap is not None else row.updated_at),
        "metadata": row.metadata,
        "status": row.status,
        "config": {"configurable": {}},
        "values": values,
        "error": row.error,
        "interrupts": interrupts,
    }
