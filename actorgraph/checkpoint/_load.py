"""Reading a stored checkpoint back: its position, pending superstep and lineage.

Every record is checked for its shape (`_shape.py`) before anything is built
from it, so a damaged or forged record is refused with an error naming the
thread and checkpoint.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from actorgraph._model.errors import ActorGraphError, SerializationError
from actorgraph._model.records import Interrupt, Node, Position, SuperstepState, VertexResult, task_order
from actorgraph._model.runs import Claim
from actorgraph.checkpoint._codec import (
    FORMAT,
    aad,
    build_nodes,
    decode_interrupts,
    decode_position,
    decode_result,
    whole_versions,
)
from actorgraph.checkpoint._protocol import AnswerRow, Checkpointer, CheckpointRow
from actorgraph.checkpoint._shape import check_checkpoint, check_write, damaged, format_of
from actorgraph.checkpoint._versions import Stored, read_versions

__all__ = ["Loaded", "answer_aad", "claims_of", "line_of", "load", "outcomes", "write_aad"]


def write_aad(thread_id: str, checkpoint_id: str, task_id: str) -> bytes:
    """The associated data of a task result stored against a checkpoint."""
    return aad(thread_id, f"write:{checkpoint_id}:{task_id}")


def answer_aad(thread_id: str, interrupt_id: str) -> bytes:
    """The associated data of a claimed answer (bound to its thread and question)."""
    return aad(thread_id, f"answer:{interrupt_id}")


@dataclass(frozen=True, slots=True)
class Loaded:
    """A checkpoint as the engine needs it.

    Attributes:
        row: the stored row (ids, step, source, status, created_at).
        position: the committed position.
        pending: the results stored against it (the next superstep, possibly unfinished).
        pauses: `interrupt_after` breakpoints waiting to be passed.
        stored: ids of every blob in the store that this checkpoint knows of, with
            each version's parts.
        origin: the checkpoint that began this line of the thread's history (a
            new input or a fork); names the runs of its subgraphs and its questions.
        claims: the answers claimed for pending questions whose tasks have not
            run with them yet (the process that claimed them stopped, or is running
            them now), by interrupt id.
        owner: in the thread of a stateful subgraph, the parent's task (its
            per-task name) whose call began this line: a call of another task starts
            a new line from this state, the same task's continues it.
    """

    row: CheckpointRow
    position: Position
    pending: dict[str, VertexResult]
    pauses: tuple[Interrupt, ...]
    stored: Stored
    origin: str
    claims: Mapping[str, Claim] = field(default_factory=dict)
    owner: str | None = None

    @property
    def thread_id(self) -> str:
        """The thread."""
        return self.row.thread_id

    @property
    def checkpoint_id(self) -> str:
        """This checkpoint's id."""
        return self.row.checkpoint_id

    @property
    def parent_id(self) -> str | None:
        """The checkpoint before this one, if any."""
        return self.row.parent_id

    @property
    def source(self) -> str:
        """How this checkpoint was made: "input", "loop", "update" or "fork"."""
        return self.row.source

    @property
    def superstep(self) -> SuperstepState:
        """The pending results as a `SuperstepState` of the next superstep."""
        return SuperstepState(self.position.step + 1, dict(self.pending))

    @property
    def asked(self) -> tuple[Interrupt, ...]:
        """Every question of the pending superstep not yet run with an answer, claimed or not."""
        return (*self.superstep.questions, *self.pauses)

    @property
    def interrupts(self) -> tuple[Interrupt, ...]:
        """Every interrupt waiting for an answer (vertex interrupts, subgraphs' and breakpoints).

        A question whose answer was claimed waits no more: it is left out.
        """
        return tuple(i for i in self.asked if i.id not in self.claims)


def load(checkpointer: Checkpointer, thread_id: str, checkpoint_id: str | None = None) -> Loaded | None:
    """Load a checkpoint (the thread's head by default) with its writes; None if absent.

    Raises:
        CheckpointError: the store failed, or the checkpoint is of a newer format.
        SerializationError: the stored bytes cannot be loaded (tampered, wrong key,
            a type not allowed by the serializer, a record of the wrong shape).
    """
    where = f"checkpoint {checkpoint_id!r}" if checkpoint_id else "the head checkpoint"
    with _reading(f"the stored row of {where} of thread {thread_id!r}"):
        row = checkpointer.get(thread_id, checkpoint_id)
    if row is None:
        return None
    what = f"checkpoint {row.checkpoint_id!r} of thread {thread_id!r}"
    serializer = checkpointer.serializer
    with _reading(f"the data of {what}"):
        record = serializer.loads(row.data, aad=aad(thread_id, row.checkpoint_id))
        form = _checked(record, what, check_checkpoint)
        whole = whole_versions(record["nodes"], form)
    stored = _write_records(checkpointer, thread_id, row.checkpoint_id, what)
    with _reading(f"a task result stored against {what}"):
        for rec, form in stored.values():
            whole.update(whole_versions(rec["nodes"], form))
    with _reading(f"a state of {what}"):
        states, blobs = read_versions(checkpointer, thread_id, whole, what)
    position, pending, pauses = _decoded(record, {t: rec for t, (rec, _) in stored.items()}, states, what)
    origin, owner = record.get("origin", row.checkpoint_id), record.get("owner")
    loaded = Loaded(row, position, pending, pauses, blobs, origin, owner=owner)
    asked = [i.id for i in loaded.asked]
    with _reading(f"an answer claimed for {what}"):
        rows = checkpointer.get_answers(thread_id, asked) if asked else {}
        claims = claims_of(checkpointer, thread_id, rows.values())
    return dataclasses.replace(loaded, claims=claims) if claims else loaded


def line_of(checkpointer: Checkpointer, row: CheckpointRow) -> tuple[str, str | None]:
    """A stored checkpoint's line and owner (`Loaded.origin`, `Loaded.owner`); its states are not read.

    Raises:
        SerializationError: its bytes cannot be loaded, or are of the wrong shape.
    """
    what = f"checkpoint {row.checkpoint_id!r} of thread {row.thread_id!r}"
    with _reading(f"the data of {what}"):
        record = checkpointer.serializer.loads(row.data, aad=aad(row.thread_id, row.checkpoint_id))
        _checked(record, what, check_checkpoint)
    return record.get("origin", row.checkpoint_id), record.get("owner")


def outcomes(checkpointer: Checkpointer, thread_id: str, checkpoint_id: str) -> list[tuple[str, str]]:
    """The vertex and status of each task result stored against a checkpoint, in task order.

    Only the results' records are read: no checkpoint record, no state. Each is
    checked as `load` checks it.

    Raises:
        CheckpointError: the store failed.
        SerializationError: a result's bytes cannot be loaded, or are of the wrong shape.
    """
    what = f"checkpoint {checkpoint_id!r} of thread {thread_id!r}"
    stored = _write_records(checkpointer, thread_id, checkpoint_id, what)
    return [
        (stored[t][0]["result"]["vertex"], stored[t][0]["result"]["status"])
        for t in sorted(stored, key=task_order)
    ]


def _write_records(
    checkpointer: Checkpointer, thread_id: str, checkpoint_id: str, what: str
) -> dict[str, tuple[dict[str, Any], int]]:
    """The task results stored against a checkpoint (`what` names it), decoded and checked, with formats."""
    with _reading(f"a task result stored against {what}"):
        writes = checkpointer.get_writes(thread_id, checkpoint_id)
    stored: dict[str, tuple[dict[str, Any], int]] = {}
    for task_id, w in writes.items():
        with _reading(f"the result of task {task_id!r} stored against {what}"):
            rec = checkpointer.serializer.loads(w.data, aad=write_aad(thread_id, checkpoint_id, task_id))
            stored[task_id] = (
                rec,
                _checked(rec, f"the result of task {task_id!r} stored against {what}", check_write),
            )
    return stored


def claims_of(checkpointer: Checkpointer, thread_id: str, rows: Iterable[AnswerRow]) -> dict[str, Claim]:
    """Stored answers as the engine reads them (each answer decoded), by interrupt id.

    Raises:
        SerializationError: an answer's bytes cannot be loaded (tampered, a type not allowed).
    """
    loads = checkpointer.serializer.loads
    return {
        r.interrupt_id: Claim(
            r.interrupt_id,
            r.vertex,
            r.answered_by,
            r.answered_at,
            loads(r.data, aad=answer_aad(thread_id, r.interrupt_id)),
        )
        for r in rows
    }


def _decoded(
    record: Any, stored: dict[str, dict[str, Any]], states: Any, what: str
) -> tuple[Position, dict[str, VertexResult], tuple[Interrupt, ...]]:
    """The position, pending results and pauses built from a checkpoint's record, its writes and states."""
    try:
        nodes: dict[str, Node] = {}
        build_nodes(record["nodes"], states, nodes)
        for rec in stored.values():
            build_nodes(rec["nodes"], states, nodes)
        pending = {
            task_id: decode_result(stored[task_id]["result"], nodes)
            for task_id in sorted(stored, key=task_order)
        }
        position = decode_position(record["position"], nodes)
        pauses = decode_interrupts(record.get("pauses", ()))
    except SerializationError as exc:
        raise damaged(what, str(exc)) from exc
    except (KeyError, TypeError, ValueError, IndexError) as exc:  # a shape the checks let through
        raise damaged(what, f"{type(exc).__name__}: {exc}") from exc
    return position, pending, pauses


# What a damaged or forged row raises where no check names it (bytes of the wrong type, bad JSON, ...)
_STRAY = (TypeError, ValueError, KeyError, IndexError, AttributeError, OverflowError, RecursionError)


@contextmanager
def _reading(what: str) -> Iterator[None]:
    """Name `what` in every error reading it raises; a stray exception becomes a `SerializationError`.

    Errors of the store itself (`CheckpointError`) and of the caller (`ConfigError`) pass unchanged.
    """
    try:
        yield
    except SerializationError as exc:
        if what in str(exc) or "of thread" in str(exc):
            raise
        named = SerializationError(f"{what} cannot be read: {exc}")
        named.path = getattr(exc, "path", None)  # type: ignore[attr-defined]
        raise named from exc
    except ActorGraphError:
        raise
    except _STRAY as exc:
        raise damaged(what, f"{type(exc).__name__}: {exc}") from exc


def _checked(record: Any, what: str, check: Any) -> int:
    """The record's format, once its shape is checked."""
    found = format_of(record, what, FORMAT)
    check(record, what)
    return found
