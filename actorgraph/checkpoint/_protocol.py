"""The storage protocol every checkpointer implements, and the rows it stores.

A checkpointer stores bytes and a little metadata; it never decodes what it
stores (the bytes may be encrypted). The engine encodes records with the
checkpointer's serializer (see `_codec.py`) and decides what to write when.

What is stored, per thread:

- **blobs**: every state version once, keyed by its lineage id: a small
  manifest of the version's parts; and the parts, keyed by content address
  (`p:<hex>`), so a value shared by many versions is stored once. A
  checkpoint or a task result refers to states by id, so a long run never
  writes its history again (storage grows with the run, not with its square).
- **checkpoints**: one row per committed position (after the input, after each
  superstep, after `update_state`), with its parent, step, source, status and
  the ids of the blobs it refers to, versions and parts (`refs`, for pruning).
- **writes**: the results of the tasks of the superstep after a checkpoint, as
  they finish (durability "sync"), so a crash loses no finished task.
- **head**: the thread's newest checkpoint. Moving it is a compare-and-swap, so
  two processes resuming one thread cannot both commit the same step.
- **answers**: each answer to a question (an interrupt), claimed before any
  vertex code runs with it: a compare-and-set, so of two people (or processes)
  answering one question, exactly one wins and the other runs nothing.
- **metadata**: a few labels per thread (such as the graph a command line run
  was started from), so tools can find what they need without loading code.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

__all__ = [
    "SCHEMA_VERSION",
    "AnswerRow",
    "CheckpointRow",
    "Checkpointer",
    "Serializer",
    "ThreadInfo",
    "WriteRow",
]

SCHEMA_VERSION = 1
"""The version of the stored form; every store records it and refuses newer ones."""


@runtime_checkable
class Serializer(Protocol):
    """Turns values into bytes and back.

    `aad` is associated data that an authenticating serializer binds to the
    bytes (the engine passes the thread id and the checkpoint or blob id), so
    stored bytes moved to another place are refused when loaded.
    """

    def dumps(self, value: Any, *, aad: bytes = b"") -> bytes:
        """Encode `value`; raise `SerializationError` if it could not be loaded back."""
        ...

    def loads(self, data: bytes, *, aad: bytes = b"") -> Any:
        """Decode bytes made by `dumps`; raise `SerializationError` on anything else."""
        ...


@dataclass(frozen=True, slots=True)
class CheckpointRow:
    """One stored checkpoint.

    Attributes:
        thread_id: the thread.
        checkpoint_id: sorts by creation time.
        parent_id: the checkpoint this one follows, or None for the first.
        step: the last committed superstep.
        source: "input", "loop", "update" or "fork".
        status: "running", "done", "interrupted" or "error".
        created_at: wall-clock seconds.
        data: the encoded record (opaque to the store).
        refs: ids of the blobs the record refers to.
    """

    thread_id: str
    checkpoint_id: str
    parent_id: str | None
    step: int
    source: str
    status: str
    created_at: float
    data: bytes
    refs: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class WriteRow:
    """One task's result in the superstep after a checkpoint.

    Attributes:
        task_id: the task (a later write for the same task replaces the earlier one).
        data: the encoded `VertexResult` (opaque to the store).
        refs: ids of the blobs it refers to.
    """

    task_id: str
    data: bytes
    refs: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class AnswerRow:
    """One claimed answer to a question (an interrupt) of a thread.

    Attributes:
        interrupt_id: the question's id (unique to one question of one run).
        checkpoint_id: the checkpoint whose pending superstep asked it.
        vertex: the vertex that asked (a path inside subgraphs), for messages.
        answered_by: who answered (a person's name, or `user@host (pid N)`).
        answered_at: wall-clock seconds of the claim.
        data: the encoded answer (opaque to the store).
    """

    interrupt_id: str
    checkpoint_id: str
    vertex: str
    answered_by: str
    answered_at: float
    data: bytes


@dataclass(frozen=True, slots=True)
class ThreadInfo:
    """A thread as listed by `Checkpointer.threads()`.

    Attributes:
        thread_id: the thread.
        head: its newest checkpoint id.
        status: the status last recorded for it ("running", "done", "interrupted", "error").
        updated_at: wall-clock seconds of the last write.
    """

    thread_id: str
    head: str
    status: str
    updated_at: float


class Checkpointer(Protocol):
    """What the engine needs of a store. Every method is safe to call from any thread.

    Errors of the store itself (locked, unreachable, full) raise `CheckpointError`.

    A store may also have `thread_counts() -> dict[str, int]`: how many threads
    (subgraphs' runs left out) have each status, as the stores of actorgraph
    count them in the database. It is not required: the web inbox's `/runs`
    counts the threads of a store without it by reading `threads()` a page at a
    time, which reads every thread.
    """

    serializer: Serializer

    def put(
        self,
        row: CheckpointRow,
        *,
        blobs: Mapping[str, bytes] = ...,
        expect_head: str | None,
        writes: Sequence[WriteRow] = (),
    ) -> None:
        """Store the blobs and the checkpoint, and make it the thread's head, atomically.

        Args:
            row: the checkpoint.
            blobs: state versions the checkpoint (or `writes`) refer to that may not
                be stored yet (an id already stored is left as it is).
            expect_head: the head the writer started from (None for a new
                thread). When the head has moved since, nothing is written and
                `CheckpointError` says the thread was advanced by another run.
            writes: task results of the superstep this checkpoint commits, stored
                against `row.parent_id` in the same transaction (the engine's last
                task result of a superstep, which would otherwise take a
                transaction of its own just before this one).
        """
        ...

    def put_many(
        self,
        rows: Sequence[CheckpointRow],
        *,
        blobs: Mapping[str, bytes] = ...,
        expect_head: str | None,
        writes: Mapping[str, Sequence[WriteRow]] = ...,
    ) -> None:
        """Store a line of checkpoints of one thread and make the last the head, all or none.

        What `bulk_update_state` writes: one checkpoint per superstep of updates,
        with the outcomes each carries, in one transaction, so a failure on the
        way leaves the thread as it was.

        Args:
            rows: the checkpoints, oldest first, each the parent of the next.
            blobs: state versions they (or `writes`) refer to that may not be
                stored yet (an id already stored is left as it is).
            expect_head: the head the writer started from (None for a new
                thread); as in `put`, a head that moved refuses the whole line.
            writes: task results stored against some of `rows`, by checkpoint id
                (the outcomes a checkpoint carries: its unfinished superstep's).

        Raises:
            CheckpointError: the head moved, an id is already stored, `rows` is
                not one line of one thread, or the store failed; nothing was written.
        """
        ...

    def put_writes(
        self,
        thread_id: str,
        checkpoint_id: str,
        writes: Sequence[WriteRow],
        *,
        blobs: Mapping[str, bytes] = ...,
        status: str | None = None,
    ) -> None:
        """Store task results against `checkpoint_id` (and their blobs), atomically.

        Args:
            thread_id: the thread.
            checkpoint_id: the checkpoint whose next superstep the tasks belong to.
            writes: the results; one per task id (a new one replaces an old one).
            blobs: state versions they refer to.
            status: when given, the thread's new status ("interrupted", "error", ...).
        """
        ...

    def get(self, thread_id: str, checkpoint_id: str | None = None) -> CheckpointRow | None:
        """One checkpoint, or the thread's head when `checkpoint_id` is None; None if absent."""
        ...

    def get_writes(self, thread_id: str, checkpoint_id: str) -> dict[str, WriteRow]:
        """The task results stored against a checkpoint, by task id."""
        ...

    def get_blobs(self, thread_id: str, blob_ids: Iterable[str]) -> dict[str, bytes]:
        """The stored blobs among `blob_ids` (missing ids are left out)."""
        ...

    def history(
        self, thread_id: str, *, limit: int | None = None, before: str | None = None
    ) -> list[CheckpointRow]:
        """A thread's checkpoints, newest first.

        Args:
            thread_id: the thread.
            limit: at most this many.
            before: only checkpoints older than this checkpoint id.
        """
        ...

    def threads(
        self, *, status: str | None = None, limit: int | None = None, after: ThreadInfo | None = None
    ) -> list[ThreadInfo]:
        """The threads (with that status, if given), most recently updated first, a page at a time.

        The order is `updated_at` descending, then `thread_id` ascending, and a
        database store reads it from an index, so a page costs the same in a
        store of ten threads or of a million.

        The threads of subgraphs' runs, named `parent|namespace`, are left out.

        Args:
            status: only the threads with this status.
            limit: at most this many (None: all of them).
            after: only the threads listed after this one: pass the last of a
                page to get the next page (keyset pagination, so a thread
                updated meanwhile moves to the front rather than being listed twice
                on later pages).
        """
        ...

    def claim_answers(
        self, thread_id: str, expect_head: str, answers: Sequence[AnswerRow]
    ) -> list[AnswerRow]:
        """Claim answers to pending questions, atomically: all of them or none (compare-and-set).

        When no answer is stored yet for any of the questions and the thread's
        head is `expect_head`, the answers are stored, the thread's status
        becomes "running", and the result is empty. Otherwise nothing is
        stored.

        Returns:
            The answers already stored for those questions (the claims that won),
            or an empty list when these answers were stored.

        Raises:
            CheckpointError: no answer was stored before, but the head is not
                `expect_head` (another run moved the thread on); nothing was written.
        """
        ...

    def get_answers(self, thread_id: str, interrupt_ids: Iterable[str]) -> dict[str, AnswerRow]:
        """The stored answers among `interrupt_ids`, by interrupt id (missing ids are left out)."""
        ...

    def answers_at(self, thread_id: str, checkpoint_id: str) -> dict[str, AnswerRow]:
        """The answers claimed for the questions of the superstep after `checkpoint_id`, by interrupt id."""
        ...

    def set_metadata(self, thread_id: str, values: Mapping[str, str]) -> None:
        """Record labels of a thread (kept with it until it is deleted); a key given again is replaced."""
        ...

    def get_metadata(self, thread_id: str) -> dict[str, str]:
        """The labels recorded for a thread (empty when none)."""
        ...

    def delete_thread(self, thread_id: str) -> None:
        """Remove a thread (checkpoints, writes, blobs, answers, metadata) and its subgraphs' threads."""
        ...

    def prune(self, thread_id: str, *, keep: int) -> int:
        """Delete all but the newest `keep` checkpoints of a thread (the head always stays).

        Writes of deleted checkpoints go too, and blobs no remaining checkpoint or
        write refers to.

        Returns:
            How many checkpoints were deleted.
        """
        ...

    def close(self) -> None:
        """Release connections and files."""
        ...
