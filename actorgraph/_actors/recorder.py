"""Writing a run to its checkpointer, by its durability mode.

- "sync": each task's final result is stored as soon as it arrives; each
  committed superstep is a checkpoint.
- "step": one checkpoint per committed superstep.
- "exit": nothing until the run pauses or ends.

States are encoded where they are made (on the vertex actor's thread, see
`encode_new_states`), so a state that cannot be stored fails its own task,
naming the vertex and the key, before anything is written. Each version is
sent to the store once, as a manifest of content-addressed parts
(`checkpoint/_parts.py`): a value that did not change since the version's
parent is not serialized again, and a part already stored is not sent again.
Every row's `refs` lists the versions it refers to and their parts, so
pruning keeps exactly what the remaining rows need.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Iterable, Mapping

from actorgraph._engine.superstep import status_of
from actorgraph._model.errors import SerializationError
from actorgraph._model.records import Interrupt, Node, Position, SuperstepState, VertexResult
from actorgraph._model.runs import Durability
from actorgraph.checkpoint._codec import (
    FORMAT,
    aad,
    blob_aad,
    encode_interrupts,
    encode_position,
    encode_result,
    new_checkpoint_id,
    reachable,
    result_nodes,
    structure_of,
)
from actorgraph.checkpoint._load import write_aad
from actorgraph.checkpoint._parts import layout_of
from actorgraph.checkpoint._protocol import Checkpointer, CheckpointRow, WriteRow
from actorgraph.checkpoint._versions import Encoded, book_for, encode_versions

__all__ = ["Recorder", "encode_new_states"]


def encode_new_states(checkpointer: Checkpointer, thread_id: str, own: str, result: VertexResult) -> Encoded:
    """Encode the states a task created (on the vertex's thread); `own` is the task's node id.

    Raises:
        SerializationError: naming the vertex and the key that cannot be stored.
    """
    created = [n for n in result_nodes(result) if _made_by(n.id, own)]
    return encode_versions(
        checkpointer.serializer,
        thread_id,
        created,
        book=lambda: book_for(checkpointer, thread_id),  # asked only for a state that is not small
        who=f"vertex {result.vertex!r}",
    )


def _made_by(node_id: str, own: str) -> bool:
    return node_id == own or node_id.startswith((f"{own}>", f"{own}<"))


class Recorder:
    """One run's writer. Lives on the run's coordinator thread."""

    # told of each checkpoint stored, with the paused superstep's outcomes: set when a listener wants them
    saved: Callable[[CheckpointRow, Position, SuperstepState | None], None] | None = None
    # asks the run's coordinator for a `flush` behind the outcomes it has queued: set by the coordinator
    later: Callable[[], None] | None = None
    dirty = False  # committed supersteps not yet written ("exit")

    def __init__(  # noqa: PLR0913 - where the run is, and how to write it
        self,
        checkpointer: Checkpointer,
        thread_id: str,
        durability: Durability,
        *,
        head: str | None,
        stored: Iterable[str] = (),
        parent: str | None = None,
        source: str = "loop",
        origin: str | None = None,
        owner: str | None = None,
    ) -> None:
        """Start writing a run whose thread's head is `head`.

        Args:
            checkpointer: the store.
            thread_id: the thread.
            durability: "sync", "step" or "exit".
            head: the thread's head when the run started (None for a new thread).
            stored: blob ids already in the store (a `Stored` also gives each
                version's parts; the parts of other versions are read when needed).
            parent: the checkpoint the run continues from (an older one when replaying).
            source: the source recorded on the run's first checkpoint ("input", "fork", ...).
            origin: the checkpoint that began the line of history the run continues; a new
                input or a fork (a first checkpoint whose parent is not the head) begins a line
                of its own: its first checkpoint's id, chosen now to name subgraph runs by.
            owner: in a stateful subgraph's thread, the parent's task whose call the
                run serves, written into every checkpoint (see `Loaded.owner`).
        """
        self.checkpointer = checkpointer
        self.serializer = checkpointer.serializer
        self.thread_id = thread_id
        self.durability = durability
        self.head = head
        self.parent = parent if parent is not None else head
        self.source = source
        new_line = source in ("input", "fork") or origin is None or self.parent != head
        self._first_id = new_checkpoint_id() if new_line else None
        self.origin: str = self._first_id or origin or ""
        self.owner = owner
        self.stored: set[str] = set(stored)
        # the part ids of each version the run may refer to (None: stored whole, format 1)
        self.layouts: dict[str, tuple[str, ...] | None] = dict(getattr(stored, "parts", {}))
        self.whole = {k for k, v in self.layouts.items() if v is None}
        self.book = book_for(checkpointer, thread_id)
        self.pending_blobs: dict[str, bytes] = {}
        self.written: set[str] = set()  # task ids stored against the current parent
        self.deferred: list[VertexResult] = []  # results the next checkpoint's transaction stores
        self.unwritten: list[VertexResult] = []  # finished results waiting for `flush` ("sync")

    # -- task results ----------------------------------------------------------------

    def task_finished(
        self, result: VertexResult, blobs: Mapping[str, bytes], *, commits: bool = False, now: bool = False
    ) -> None:
        """A task's final result (and the states it made) arrived.

        With `commits`, it completes a superstep that commits at once, on this
        thread: its result, and those still waiting for a flush, go into that
        checkpoint's transaction instead of one of their own (a crash before that
        transaction is a crash before these results were stored, either way).
        Otherwise the result waits for `flush`, which `later` asks for behind the
        outcomes already queued for the coordinator, so the results that finish
        while the store is busy are stored in one transaction (group commit); with
        `now`, or without `later`, it is stored at once.
        """
        self.pending_blobs.update(blobs)
        self.layouts.update(getattr(blobs, "parts", {}))
        if self.durability == "sync" and self.parent is not None:
            if commits:
                self.deferred += self.unwritten
                self.deferred.append(result)
                self.unwritten = []
            elif now or self.later is None:
                self._store_writes([result], status=None)
            else:
                if not self.unwritten:
                    self.later()
                self.unwritten.append(result)

    def flush(self) -> None:
        """Store the results that finished since the last write, in one transaction."""
        if self.unwritten:
            results, self.unwritten = self.unwritten, []
            self._store_writes(results, status=None)

    def carry(self, results: Iterable[VertexResult]) -> None:
        """Store outcomes carried over to a new checkpoint (a fork keeps what its origin had)."""
        carried = list(results)
        if carried and self.durability != "exit" and self.parent is not None and not self.dirty:
            self._store_writes(carried, status=None)

    def _store_writes(self, results: Iterable[VertexResult], *, status: str | None) -> None:
        rows, blobs = self._write_rows(results)
        self.checkpointer.put_writes(self.thread_id, self.parent, rows, blobs=blobs, status=status)  # type: ignore[arg-type]
        self._sent(blobs)
        self.written.update(r.task_id for r in rows)

    def _write_rows(self, results: Iterable[VertexResult]) -> tuple[list[WriteRow], dict[str, bytes]]:
        """Task results as rows stored against the current parent, and the blobs they need."""
        assert self.parent is not None  # noqa: S101 - writes always follow a checkpoint
        owned = [(r, reachable(result_nodes(r))) for r in results]
        nodes: dict[str, Node] = {}
        for _, own in owned:
            nodes.update(own)
        blobs = self._blobs_for(nodes, nodes=nodes)
        rows = []
        for r, own in owned:
            structure = self._structure(own)
            data = self.serializer.dumps(
                {"format": FORMAT, "result": encode_result(r), "nodes": structure},
                aad=write_aad(self.thread_id, self.parent, r.task_id),
            )
            rows.append(WriteRow(r.task_id, data, self._refs(structure)))
        return rows, blobs

    # -- versions and their parts ----------------------------------------------------------

    def _blobs_for(self, ids: Collection[str], *, nodes: Mapping[str, Node]) -> dict[str, bytes]:
        """The manifests of the versions among `ids` not stored yet, and the parts they need.

        A version is encoded now if need be; one whose parts went missing (a hint
        named a part this run never had) is encoded again, in full.
        """
        missing = [i for i in ids if i not in self.stored]
        if not missing:
            return {}
        pending, layouts = self.pending_blobs, self.layouts
        out = {}
        for i in missing:
            if i in pending:
                out[i] = pending[i]
                layouts.setdefault(i, ())  # an encoded version not in `Encoded.parts` has no parts
        if len(out) < len(missing):
            self._encode(out, [nodes[i] for i in missing if i not in out], book=True)
        lost = []
        for i in missing:
            for part in layouts[i] or ():
                if part not in out and part not in self.stored:
                    if part not in pending:
                        lost.append(nodes[i])
                        break
                    out[part] = pending[part]
        if lost:
            self._encode(out, lost, book=False)
        return out

    def _encode(self, out: dict[str, bytes], nodes: list[Node], *, book: bool) -> None:
        encoded = encode_versions(
            self.serializer, self.thread_id, nodes, book=(lambda: self.book) if book else None
        )
        out.update(encoded)
        for node in nodes:
            self.layouts[node.id] = encoded.parts.get(node.id, ())

    def _sent(self, blobs: Mapping[str, bytes]) -> None:
        self.stored.update(blobs)
        pending = self.pending_blobs
        if pending:
            for key in blobs:
                pending.pop(key, None)

    def _structure(self, nodes: Mapping[str, Node]) -> dict[str, list[object]]:
        return structure_of(nodes, self.whole.intersection(nodes) if self.whole else ())

    def _refs(self, versions: Collection[str]) -> tuple[str, ...]:
        """What a row refers to: its versions and every part they name."""
        layouts = self.layouts
        unknown = [v for v in versions if v not in layouts]
        if unknown:
            self._learn(unknown)
        parts: dict[str, None] = {}
        for v in versions:
            found = layouts[v]
            if found:
                parts.update(dict.fromkeys(found))
        return (*versions, *parts) if parts else tuple(versions)

    def _learn(self, versions: list[str]) -> None:
        """Read the part ids of stored versions this run was not told about."""
        for version in versions:
            self.layouts[version] = ()
        for version, data in self.checkpointer.get_blobs(self.thread_id, versions).items():
            manifest = self.serializer.loads(data, aad=blob_aad(self.thread_id, version))
            try:
                self.layouts[version] = layout_of(manifest, version).parts
            except SerializationError:  # not a manifest: a version stored whole (format 1)
                self.layouts[version] = None
                self.whole.add(version)

    # -- checkpoints -------------------------------------------------------------------

    def committed(self, pos: Position, *, pauses: Iterable[Interrupt] = ()) -> str | None:
        """A superstep committed (or the input was recorded): checkpoint it by durability.

        Returns:
            The new checkpoint id, or None when nothing was written ("exit").
        """
        if self.durability == "exit":
            if self.dirty:  # a superstep after the unwritten start: the next checkpoint is the loop's
                self.source = "loop"
            if not pos.done:
                self.dirty = True
                self._forget_dead_blobs(pos)
                return None
        return self.checkpoint(pos, pauses=pauses)

    def checkpoint(
        self, pos: Position, *, pauses: Iterable[Interrupt] = (), superstep: SuperstepState | None = None
    ) -> str:
        """Write `pos` as a new checkpoint and make it the head (with the results deferred to it).

        `superstep`: the unfinished superstep whose outcomes are stored with it next (a run that paused).
        """
        writes: list[WriteRow] = []
        blobs: dict[str, bytes] = {}
        if self.deferred:
            writes, blobs = self._write_rows(self.deferred)
            self.deferred = []
        row = self._row(pos, tuple(pauses), blobs)
        self.checkpointer.put(row, blobs=blobs, expect_head=self.head, writes=writes)
        if self.saved is not None:
            self.saved(row, pos, superstep)
        self._moved(row, blobs, pos)
        return row.checkpoint_id

    def line(self, steps: Iterable[tuple[Position, Iterable[VertexResult]]]) -> list[str]:
        """Write positions as a line of checkpoints, each with the outcomes it carries: all or none.

        One transaction (`put_many`): a step that cannot be stored (a state the
        serializer refuses, a store that fails) leaves the thread as it was.
        """
        head, source = self.head, self.source
        rows: list[CheckpointRow] = []
        blobs: dict[str, bytes] = {}
        writes: dict[str, list[WriteRow]] = {}
        for pos, carried in steps:
            self.source = source  # each checkpoint of the line is, say, an "update"
            row = self._row(pos, (), blobs)
            self._moved(row, blobs, pos)
            rows.append(row)
            outcomes, needed = self._write_rows(carried)
            if outcomes:
                writes[row.checkpoint_id] = outcomes
                blobs.update(needed)
                self._sent(needed)
        self.checkpointer.put_many(rows, blobs=blobs, expect_head=head, writes=writes)
        return [row.checkpoint_id for row in rows]

    def _row(self, pos: Position, pauses: tuple[Interrupt, ...], blobs: dict[str, bytes]) -> CheckpointRow:
        """The row of a checkpoint of `pos` after the current parent; the blobs it needs go into `blobs`."""
        nodes = reachable(m.node for m in pos.messages())
        blobs.update(self._blobs_for(nodes.keys() - blobs.keys(), nodes=nodes))
        structure = self._structure(nodes)
        checkpoint_id, self._first_id = self._first_id or new_checkpoint_id(), None
        record = {
            "format": FORMAT,
            "position": encode_position(pos),
            "nodes": structure,
            "pauses": encode_interrupts(pauses),
            "origin": self.origin,
        }
        if self.owner is not None:
            record["owner"] = self.owner
        data = self.serializer.dumps(record, aad=aad(self.thread_id, checkpoint_id))
        return CheckpointRow(
            self.thread_id,
            checkpoint_id,
            self.parent,
            pos.step,
            self.source,
            status_of(pos, None, pauses),
            time.time(),
            data,
            self._refs(structure),
        )

    def _moved(self, row: CheckpointRow, blobs: Mapping[str, bytes], pos: Position) -> None:
        """The thread's head is `row` now (or will be, once the line it ends is stored)."""
        self._sent(blobs)
        self.head = self.parent = row.checkpoint_id
        self.source = "loop"
        self.written = set()
        self.dirty = False
        self._forget_dead_blobs(pos)

    def paused(self, pos: Position, superstep: SuperstepState, status: str) -> None:
        """The run paused with `superstep` unfinished: store what is not stored yet."""
        self.unwritten = []  # among the results below
        if self.dirty or self.parent is None:
            self.checkpoint(pos, superstep=superstep)
        unwritten = [r for r in superstep.results.values() if r.task_id not in self.written]
        if unwritten or self.durability != "sync":
            self._store_writes(unwritten, status=status)
        else:
            self.checkpointer.put_writes(self.thread_id, self.parent, [], status=status)  # type: ignore[arg-type]

    def mark(self, status: str) -> None:
        """Record the thread's status without a new checkpoint (a run that failed at its end)."""
        if self.parent is not None:
            self.checkpointer.put_writes(self.thread_id, self.parent, [], status=status)

    def finished(self, pos: Position) -> None:
        """The run ended: make sure its final position is stored."""
        if self.dirty:
            self.checkpoint(pos)

    def _forget_dead_blobs(self, pos: Position) -> None:
        """Drop what no later version can need: pending bytes, part lists and hints of dead versions."""
        # (the book grows with the encoded versions, which `layouts` counts too)
        if len(self.pending_blobs) > 64 or len(self.layouts) > 64:  # noqa: PLR2004 - worth a walk
            live = reachable(m.node for m in pos.messages())
            needed = {p for v in live for p in self.layouts.get(v) or ()}
            self.pending_blobs = {k: v for k, v in self.pending_blobs.items() if k in live or k in needed}
            self.layouts = {k: v for k, v in self.layouts.items() if k in live}
            if self.book is not None:
                self.book.keep(live)
