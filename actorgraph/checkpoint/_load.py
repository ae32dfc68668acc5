"""Reading a stored checkpoint back: its position, pending superstep and lineage."""

from __future__ import annotations

from dataclasses import dataclass

from actorgraph._errors import CheckpointError
from actorgraph._types import Interrupt, Node, Position, SuperstepState, VertexResult, task_order
from actorgraph.checkpoint._codec import (
    FORMAT,
    aad,
    blob_aad,
    build_nodes,
    decode_interrupts,
    decode_position,
    decode_result,
)
from actorgraph.checkpoint._protocol import Checkpointer, CheckpointRow

__all__ = ["Loaded", "load", "write_aad"]


def write_aad(thread_id: str, checkpoint_id: str, task_id: str) -> bytes:
    """The associated data of a task result stored against a checkpoint."""
    return aad(thread_id, f"write:{checkpoint_id}:{task_id}")


@dataclass(frozen=True, slots=True)
class Loaded:
    """A checkpoint as the engine needs it.

    Attributes:
        row: the stored row (ids, step, source, status, created_at).
        position: the committed position.
        pending: the results stored against it (the next superstep, possibly unfinished).
        pauses: `interrupt_after` breakpoints waiting to be passed.
        stored: ids of every version in the store that this checkpoint knows of.
    """

    row: CheckpointRow
    position: Position
    pending: dict[str, VertexResult]
    pauses: tuple[Interrupt, ...]
    stored: frozenset[str]

    @property
    def superstep(self) -> SuperstepState:
        """The pending results as a `SuperstepState` of the next superstep."""
        return SuperstepState(self.position.step + 1, dict(self.pending))

    @property
    def interrupts(self) -> tuple[Interrupt, ...]:
        """Every interrupt waiting for an answer (vertex interrupts and breakpoints)."""
        waiting = [r.interrupt for r in self.pending.values() if r.status == "interrupt" and r.interrupt]
        return (*waiting, *self.pauses)


def load(checkpointer: Checkpointer, thread_id: str, checkpoint_id: str | None = None) -> Loaded | None:
    """Load a checkpoint (the thread's head by default) with its writes; None if absent.

    Raises:
        CheckpointError: the store failed, or the checkpoint is of a newer format.
        SerializationError: the stored bytes cannot be loaded (tampered, wrong key,
            a type not allowed by the serializer).
    """
    row = checkpointer.get(thread_id, checkpoint_id)
    if row is None:
        return None
    serializer = checkpointer.serializer
    record = serializer.loads(row.data, aad=aad(thread_id, row.checkpoint_id))
    if not isinstance(record, dict) or record.get("format", 0) > FORMAT:
        msg = (
            f"checkpoint {row.checkpoint_id} of thread {thread_id!r} was written by a newer "
            "actorgraph (or is not an actorgraph checkpoint); upgrade actorgraph to read it"
        )
        raise CheckpointError(msg)
    writes = checkpointer.get_writes(thread_id, row.checkpoint_id)
    stored = {
        task_id: serializer.loads(w.data, aad=write_aad(thread_id, row.checkpoint_id, task_id))
        for task_id, w in writes.items()
    }
    wanted = set(record["nodes"])
    for rec in stored.values():
        wanted.update(rec["nodes"])
    blobs = checkpointer.get_blobs(thread_id, wanted)
    states = {key: serializer.loads(data, aad=blob_aad(thread_id, key)) for key, data in blobs.items()}
    nodes: dict[str, Node] = {}
    build_nodes(record["nodes"], states, nodes)
    for rec in stored.values():
        build_nodes(rec["nodes"], states, nodes)
    pending = {
        task_id: decode_result(stored[task_id]["result"], nodes) for task_id in sorted(stored, key=task_order)
    }
    return Loaded(
        row,
        decode_position(record["position"], nodes),
        pending,
        decode_interrupts(record.get("pauses", ())),
        frozenset(blobs),
    )
