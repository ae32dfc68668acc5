"""Writing a run to its checkpointer, by its durability mode.

- "sync": each task's final result is stored as soon as it arrives; each
  committed superstep is a checkpoint.
- "step": one checkpoint per committed superstep.
- "exit": nothing until the run pauses or ends.

States are encoded where they are made (on the vertex actor's thread, see
`encode_new_states`), so a state that cannot be stored fails its own task,
naming the vertex and the key, before anything is written. Each version is
sent to the store once.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from typing import Literal, TypeAlias

from actorgraph._superstep import status_of
from actorgraph._types import Interrupt, Node, Position, SuperstepState, VertexResult
from actorgraph.checkpoint._codec import (
    FORMAT,
    aad,
    encode_blobs,
    encode_interrupts,
    encode_position,
    encode_result,
    new_checkpoint_id,
    reachable,
    result_nodes,
    structure_of,
)
from actorgraph.checkpoint._load import write_aad
from actorgraph.checkpoint._protocol import Checkpointer, CheckpointRow, WriteRow

__all__ = ["DURABILITY", "Durability", "Recorder", "encode_new_states"]

Durability: TypeAlias = Literal["sync", "step", "exit"]
DURABILITY: tuple[str, ...] = ("sync", "step", "exit")


def encode_new_states(
    checkpointer: Checkpointer, thread_id: str, own: str, result: VertexResult
) -> dict[str, bytes]:
    """Encode the states a task created (on the vertex's thread); `own` is the task's node id.

    Raises:
        SerializationError: naming the vertex and the key that cannot be stored.
    """
    created = [n for n in result_nodes(result) if _made_by(n.id, own)]
    return encode_blobs(checkpointer.serializer, thread_id, created, who=f"vertex {result.vertex!r}")


def _made_by(node_id: str, own: str) -> bool:
    return node_id == own or node_id.startswith((f"{own}>", f"{own}<"))


class Recorder:
    """One run's writer. Lives on the run's coordinator thread."""

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
    ) -> None:
        """Start writing a run whose thread's head is `head`.

        Args:
            checkpointer: the store.
            thread_id: the thread.
            durability: "sync", "step" or "exit".
            head: the thread's head when the run started (None for a new thread).
            stored: version ids already in the store.
            parent: the checkpoint the run continues from (an older one when replaying).
            source: the source recorded on the run's first checkpoint ("input", "fork", ...).
        """
        self.checkpointer = checkpointer
        self.serializer = checkpointer.serializer
        self.thread_id = thread_id
        self.durability = durability
        self.head = head
        self.parent = parent if parent is not None else head
        self.source = source
        self.stored: set[str] = set(stored)
        self.pending_blobs: dict[str, bytes] = {}
        self.written: set[str] = set()  # task ids stored against the current parent
        self.dirty = False  # committed supersteps not yet written ("exit")

    # -- task results ----------------------------------------------------------------

    def task_finished(self, result: VertexResult, blobs: Mapping[str, bytes]) -> None:
        """A task's final result (and the states it made) arrived."""
        self.pending_blobs.update(blobs)
        if self.durability == "sync" and self.parent is not None:
            self._store_writes([result], status=None)

    def carry(self, results: Iterable[VertexResult]) -> None:
        """Store outcomes carried over to a new checkpoint (a fork keeps what its origin had)."""
        carried = list(results)
        if carried and self.durability != "exit" and self.parent is not None and not self.dirty:
            self._store_writes(carried, status=None)

    def _store_writes(self, results: Iterable[VertexResult], *, status: str | None) -> None:
        assert self.parent is not None  # noqa: S101 - writes always follow a checkpoint
        rows = []
        refs: set[str] = set()
        nodes: dict[str, Node] = {}
        for r in results:
            own = reachable(result_nodes(r))
            nodes.update(own)
            structure = structure_of(own)
            data = self.serializer.dumps(
                {"format": FORMAT, "result": encode_result(r), "nodes": structure},
                aad=write_aad(self.thread_id, self.parent, r.task_id),
            )
            rows.append(WriteRow(r.task_id, data, tuple(structure)))
            refs.update(structure)
        blobs = self._blobs_for(refs, nodes=nodes)
        self.checkpointer.put_writes(self.thread_id, self.parent, rows, blobs=blobs, status=status)
        self.stored.update(blobs)
        self.written.update(r.task_id for r in rows)

    def _blobs_for(self, ids: Iterable[str], *, nodes: Mapping[str, Node]) -> dict[str, bytes]:
        """The bytes of the versions among `ids` not stored yet (encoded now if need be)."""
        missing = [i for i in ids if i not in self.stored]
        if not missing:
            return {}
        out = {i: self.pending_blobs.pop(i) for i in missing if i in self.pending_blobs}
        unencoded = [nodes[i] for i in missing if i not in out]
        out.update(encode_blobs(self.serializer, self.thread_id, unencoded))
        return out

    # -- checkpoints -------------------------------------------------------------------

    def committed(self, pos: Position, *, pauses: Iterable[Interrupt] = ()) -> str | None:
        """A superstep committed (or the input was recorded): checkpoint it by durability.

        Returns:
            The new checkpoint id, or None when nothing was written ("exit").
        """
        if self.durability == "exit" and not pos.done:
            self.dirty = True
            self._forget_dead_blobs(pos)
            return None
        return self.checkpoint(pos, pauses=pauses)

    def checkpoint(self, pos: Position, *, pauses: Iterable[Interrupt] = ()) -> str:
        """Write `pos` as a new checkpoint and make it the head."""
        nodes = reachable(m.node for m in pos.messages())
        structure = structure_of(nodes)
        blobs = self._blobs_for(structure, nodes=nodes)
        checkpoint_id = new_checkpoint_id()
        pauses = tuple(pauses)
        record = {
            "format": FORMAT,
            "position": encode_position(pos),
            "nodes": structure,
            "pauses": encode_interrupts(pauses),
        }
        data = self.serializer.dumps(record, aad=aad(self.thread_id, checkpoint_id))
        row = CheckpointRow(
            self.thread_id,
            checkpoint_id,
            self.parent,
            pos.step,
            self.source,
            status_of(pos, None, pauses),
            time.time(),
            data,
            tuple(structure),
        )
        self.checkpointer.put(row, blobs=blobs, expect_head=self.head)
        self.stored.update(blobs)
        self.head = self.parent = checkpoint_id
        self.source = "loop"
        self.written = set()
        self.dirty = False
        self._forget_dead_blobs(pos)
        return checkpoint_id

    def paused(self, pos: Position, superstep: SuperstepState, status: str) -> None:
        """The run paused with `superstep` unfinished: store what is not stored yet."""
        if self.dirty or self.parent is None:
            self.checkpoint(pos)
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
        if len(self.pending_blobs) > 64:  # noqa: PLR2004 - only worth a walk when many are waiting
            live = reachable(m.node for m in pos.messages())
            self.pending_blobs = {k: v for k, v in self.pending_blobs.items() if k in live}
