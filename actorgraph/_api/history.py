"""Reading and changing a thread's history: snapshots, history, state updates."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from actorgraph._actors.recorder import Recorder
from actorgraph._api.inside import children, inner_spec
from actorgraph._engine.boundary import shown_state, written_update
from actorgraph._engine.by_hand import (
    carried_over,
    check_vertex,
    kept_pending,
    moved,
    plan_supersteps,
    supersteps_of,
)
from actorgraph._engine.subgraphs import questions_dropped, vertex_of
from actorgraph._engine.superstep import (
    next_vertices,
    state_of,
    status_of,
)
from actorgraph._model.errors import (
    ActorGraphError,
    ConfigError,
    MergeConflictError,
    ThreadNotFoundError,
)
from actorgraph._model.records import NS, ErrorInfo, Position, VertexResult
from actorgraph._model.results import Snapshot
from actorgraph._model.spec import FACE_KEY, GraphSpec
from actorgraph.checkpoint._load import Loaded, load, outcomes
from actorgraph.checkpoint._protocol import Checkpointer, CheckpointRow
from actorgraph.checkpoint._queue import run_queue
from actorgraph.checkpoint._store import check_thread_id

__all__ = ["History", "snapshot"]

_SEVERITY = {"pending": 0, "ok": 1, "interrupt": 2, "error": 3}
STATUS_PAGE = 64
"""Checkpoints `History.statuses` reads at a time (newest first) to colour a thread's picture."""


def snapshot(
    spec: GraphSpec, loaded: Loaded, subgraphs: dict[str, Snapshot[Any]] | None = None
) -> Snapshot[Any]:
    """The `Snapshot` of a loaded checkpoint (with the snapshots of its subgraphs' runs, if given)."""
    pos = loaded.position
    superstep = loaded.superstep
    row = loaded.row
    status = status_of(pos, superstep, loaded.pauses)
    if status == "interrupted" and not loaded.interrupts:  # every question answered: its run goes on
        status = "running"
    error = None
    try:
        state = state_of(pos, spec.merge)
        state = shown_state(spec, state)
    except MergeConflictError as exc:  # the thread must stay readable, to be repaired
        state, status, error = None, "error", ErrorInfo.from_exception(exc, retryable=False)
    return Snapshot(
        state=state,
        status=status,  # type: ignore[arg-type]
        step=pos.step,
        next=next_vertices(spec, pos),
        superstep=superstep,
        interrupts=loaded.interrupts,
        checkpoint_id=row.checkpoint_id,
        parent_id=row.parent_id,
        created_at=row.created_at,
        thread_id=row.thread_id,
        source=row.source,
        error=error,
        subgraphs=subgraphs or {},
    )


def _most_severe(outcomes: Iterable[tuple[str, str]]) -> dict[str, str]:
    """Each vertex's most severe status among (vertex, status) outcomes of one superstep."""
    latest: dict[str, str] = {}
    for vertex, status in outcomes:
        previous = latest.get(vertex)
        if previous is None or _SEVERITY[status] > _SEVERITY[previous]:
            latest[vertex] = status
    return latest


def _queued(store: Checkpointer, thread_id: str) -> str | None:
    """The state of the thread's submitted run ("queued", "running") if it has one not yet started."""
    try:
        state = run_queue(store).state_of(thread_id)
    except ConfigError:  # a store that keeps no queue (in memory)
        return None
    return state if state in ("queued", "running") else None


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
            queued = None if checkpoint_id else _queued(self._store(), thread_id)
            if queued is not None:
                msg += (
                    f" yet: its submitted run is {queued}, and a worker stores the first checkpoint "
                    "when it starts it (the handle's wait(), or `actorgraph threads`, tells when)"
                )
            raise ThreadNotFoundError(msg)
        return loaded

    def get_state(
        self,
        thread_id: str,
        checkpoint_id: str | None = None,
        *,
        subgraphs: bool = False,
        namespace: str | None = None,
    ) -> Snapshot[Any]:
        """The snapshot at the head (or at `checkpoint_id`), of a subgraph's run if `namespace` is given."""
        spec, thread = self._within(thread_id, namespace)
        return self._snapshot(spec, thread, self._load(thread, checkpoint_id), subgraphs=subgraphs)

    def get_history(
        self,
        thread_id: str,
        *,
        limit: int | None = None,
        before: str | None = None,
        namespace: str | None = None,
    ) -> list[Snapshot[Any]]:
        """Snapshots of the thread's checkpoints (or of a subgraph's run's), newest first."""
        spec, thread = self._within(thread_id, namespace)
        rows = self._store().history(thread, limit=limit, before=before)
        return [self._snapshot(spec, thread, self._load(thread, row.checkpoint_id)) for row in rows]

    def _snapshot(
        self, spec: GraphSpec, thread_id: str, loaded: Loaded, *, subgraphs: bool = False
    ) -> Snapshot[Any]:
        if not subgraphs:
            return snapshot(spec, loaded)
        inner = {
            namespace: self._snapshot(
                child,
                f"{thread_id}{NS}{namespace}",
                self._load(f"{thread_id}{NS}{namespace}", None),
                subgraphs=True,
            )
            for namespace, child in self._children(spec, thread_id, loaded, nested=True)
        }
        return snapshot(spec, loaded, inner)

    def _within(self, thread_id: str, namespace: str | None) -> tuple[GraphSpec, str]:
        """The graph and the thread of the run `namespace` (a subgraph's or a nested one) of `thread_id`.

        Raises:
            ConfigError: `thread_id` is not a valid thread id; a nested run's graph is not known here.
            ThreadNotFoundError: no subgraph run of that name in the thread.
        """
        check_thread_id(thread_id)
        if not namespace:
            return self.spec, thread_id
        spec: GraphSpec | None = self.spec
        thread = thread_id
        for name in namespace.split(NS):
            thread = f"{thread}{NS}{name}"
            spec = inner_spec(self._store(), spec, thread, name, strict=True) if spec is not None else None
        if spec is None or self._store().get(thread) is None:
            known = self._namespaces(thread_id)
            msg = (
                f"thread {thread_id!r} has no subgraph run {namespace!r}; "
                f"its subgraph runs: {', '.join(known) if known else 'none'} (Snapshot.subgraphs "
                "of get_state(thread_id, subgraphs=True) names them)"
            )
            raise ThreadNotFoundError(msg)
        return spec, thread

    def _namespaces(self, thread_id: str) -> list[str]:
        """The namespaces of every subgraph and nested run of `thread_id`, nested ones too, newest first."""
        found: list[str] = []

        def walk(spec: GraphSpec, thread: str, prefix: str) -> None:
            for row in self._store().history(thread):
                loaded = self._load(thread, row.checkpoint_id)
                for namespace, child in self._children(spec, thread, loaded, nested=True):
                    if prefix + namespace not in found:
                        found.append(prefix + namespace)
                        walk(child, f"{thread}{NS}{namespace}", prefix + namespace + NS)

        walk(self.spec, thread_id, "")
        return found

    def _children(
        self, spec: GraphSpec, thread: str, loaded: Loaded, *, nested: bool = False
    ) -> list[tuple[str, GraphSpec]]:
        """The runs inside the superstep after `loaded` (see `inside.children`)."""
        return children(self._store(), spec, thread, loaded, nested=nested)

    def statuses(self, thread_id: str, spec: GraphSpec | None = None) -> dict[str, str]:
        """Each vertex's last status in the thread: ok, error, interrupt, or pending (about to run).

        The vertices inside subgraphs are listed by path (`research/fetch`), with
        their statuses in the newest run of that subgraph.

        The history is read newest first, `STATUS_PAGE` checkpoints at a time,
        and no further once every vertex has its status and every subgraph vertex
        its newest run: no older checkpoint can change them. So a long thread
        costs a page or two, unless a vertex never ran in it (a branch not
        taken): then every checkpoint is read, to be sure, but of a checkpoint
        past the head only its task results once no subgraph run is sought.
        """
        spec = spec or self.spec
        out: dict[str, str] = {}
        subgraphs = {f"{v}/" for v, vertex in spec.vertices.items() if vertex.child is not None}
        wanted = {*spec.vertices, *subgraphs}
        for index, row in enumerate(self._newest_first(thread_id)):
            if wanted <= out.keys():
                break
            if index and subgraphs <= out.keys():  # only the results are needed: no state is read
                found = _most_severe(outcomes(self._store(), thread_id, row.checkpoint_id))
                for vertex, status in found.items():
                    out.setdefault(vertex, status)
            else:
                self._colour_at(spec, thread_id, row.checkpoint_id, out, head=index == 0)
        return {path: status for path, status in out.items() if status}

    def _colour_at(
        self, spec: GraphSpec, thread_id: str, checkpoint_id: str, out: dict[str, str], *, head: bool
    ) -> None:
        """Add to `out` the statuses a checkpoint gives vertices, and subgraph runs, not yet in it.

        At the head, a vertex about to run without a result yet is "pending".
        """
        loaded = self._load(thread_id, checkpoint_id)
        latest = _most_severe((r.vertex, r.status) for r in loaded.pending.values())
        if head:
            latest.update({v: "pending" for v in next_vertices(spec, loaded.position) if v not in latest})
        for vertex, status in latest.items():
            out.setdefault(vertex, status)
        for namespace, child in self._children(spec, thread_id, loaded):
            vertex = vertex_of(namespace)
            if f"{vertex}/" not in out:
                out[f"{vertex}/"] = ""  # the newest run of this subgraph is taken
                inner = self.statuses(f"{thread_id}{NS}{namespace}", child)
                out.update({f"{vertex}/{path}": status for path, status in inner.items()})

    def _newest_first(self, thread_id: str) -> Iterator[CheckpointRow]:
        """The thread's checkpoints, newest first, read `STATUS_PAGE` at a time as they are taken."""
        before: str | None = None
        while True:
            page = self._store().history(thread_id, limit=STATUS_PAGE, before=before)
            yield from page
            if len(page) < STATUS_PAGE:
                return
            before = page[-1].checkpoint_id

    def update_state(  # noqa: PLR0913 - the thread, the update, and where it applies
        self,
        thread_id: str,
        values: Any,
        *,
        as_vertex: str | None,
        checkpoint_id: str | None,
        replace: bool,
        namespace: str | None = None,
    ) -> str:
        """Write an "update" checkpoint with `values` applied to the thread's state; return its id.

        With `namespace`, the thread of that subgraph's run is updated, with its graph.
        """
        spec, thread = self._within(thread_id, namespace)
        loaded = self._load(thread, checkpoint_id)
        check_vertex(spec, as_vertex, "update_state")
        dropped = questions_dropped(loaded.pending.values(), as_vertex) if namespace else None
        if dropped is not None:
            raise dropped
        updates = [(written_update(spec, values, as_vertex), as_vertex)]
        moved_to = moved(spec, loaded.position, updates, replace=replace)
        head = self._head(thread)
        pending = kept_pending(list(loaded.pending.values()), fork=loaded.checkpoint_id != head)
        return self._write(thread, loaded, head, [(moved_to, carried_over(pending, updates))])[0]

    def bulk_update_state(self, thread_id: str, supersteps: Any, *, checkpoint_id: str | None) -> list[str]:
        """Write an "update" checkpoint per superstep of updates, all planned before the first is written."""
        check_thread_id(thread_id)
        parsed = supersteps_of(supersteps, self.spec)
        planned = [
            [(written_update(self.spec, values, vertex), vertex) for values, vertex in step]
            for step in parsed
        ]
        loaded = self._load(thread_id, checkpoint_id) if checkpoint_id else load(self._store(), thread_id)
        head = self._head(thread_id)
        pos, pending = (loaded.position, list(loaded.pending.values())) if loaded else (Position(0), [])
        pending = kept_pending(pending, fork=loaded is not None and loaded.checkpoint_id != head)
        return self._write(thread_id, loaded, head, plan_supersteps(self.spec, pos, pending, planned))

    def _head(self, thread_id: str) -> str | None:
        """The id of the thread's head checkpoint (None: a new thread)."""
        row = self._store().get(thread_id)
        return row.checkpoint_id if row is not None else None

    def _write(
        self,
        thread_id: str,
        loaded: Loaded | None,
        head: str | None,
        steps: Sequence[tuple[Position, Sequence[VertexResult]]],
    ) -> list[str]:
        """Write the planned positions as "update" checkpoints after `loaded` (None: a new thread).

        An update of a checkpoint that is not the `head` forks the thread: the
        recorder begins a new line of its history there, as a replay does.
        """
        if head is None and self.spec.face is not None:  # a new thread of an entrypoint, begun by hand
            self._store().set_metadata(thread_id, {FACE_KEY: self.spec.face.name})
        recorder = Recorder(
            self._store(),
            thread_id,
            "sync",
            head=head,
            parent=loaded.row.checkpoint_id if loaded else None,
            stored=loaded.stored if loaded else (),
            source="update",
            origin=loaded.origin if loaded else None,
            owner=loaded.owner if loaded else None,
        )
        return recorder.line(steps)
