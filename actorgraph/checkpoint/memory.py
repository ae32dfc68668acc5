"""A checkpointer that keeps everything in the process's memory (for tests and short-lived runs)."""

from __future__ import annotations

import dataclasses
import heapq
import operator
import threading
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from actorgraph._model.errors import CheckpointError
from actorgraph._model.records import NS
from actorgraph.checkpoint._protocol import (
    SCHEMA_VERSION,
    AnswerRow,
    CheckpointRow,
    Serializer,
    ThreadInfo,
    WriteRow,
)
from actorgraph.checkpoint._store import (
    StoreBase,
    already_stored,
    cas_refused,
    check_keep,
    check_limit,
    check_line,
    check_metadata,
    check_stored_thread_id,
    moved_on,
    now,
    prune_plan,
    thread_order,
    unknown_checkpoint,
)

__all__ = ["MemoryCheckpointer"]


@dataclass(slots=True)
class _Thread:
    head: str
    status: str
    updated_at: float
    checkpoints: dict[str, CheckpointRow] = field(default_factory=dict)
    writes: dict[str, dict[str, WriteRow]] = field(default_factory=dict)
    blobs: dict[str, bytes] = field(default_factory=dict)
    answers: dict[str, AnswerRow] = field(default_factory=dict)


def _own_row(row: CheckpointRow) -> CheckpointRow:
    if type(row.data) is bytes and type(row.refs) is tuple:
        return row
    return dataclasses.replace(row, data=bytes(row.data), refs=tuple(row.refs))


def _own_write(write: WriteRow) -> WriteRow:
    if type(write.data) is bytes and type(write.refs) is tuple:
        return write
    return WriteRow(write.task_id, bytes(write.data), tuple(write.refs))


class MemoryCheckpointer(StoreBase):
    """Stores checkpoints in dicts under a lock; nothing survives the process.

    It behaves exactly like the SQLite and PostgreSQL stores (history order,
    compare-and-swap of the head, pruning), so it stands in for them in tests.

    Args:
        serializer: encodes the engine's records; None for `MsgpackSerializer()`.
    """

    def __init__(self, serializer: Serializer | None = None) -> None:
        super().__init__(serializer)
        self._lock = threading.Lock()
        self._threads: dict[str, _Thread] = {}
        self._metadata: dict[str, dict[str, str]] = {}
        self._closed = False

    def _open(self) -> dict[str, _Thread]:
        if self._closed:
            raise CheckpointError(
                "this MemoryCheckpointer is closed (and its data is gone); create a new "
                "checkpointer to store runs again."
            )
        return self._threads

    @property
    def schema_version(self) -> int:
        """The schema version of the stored form (always `SCHEMA_VERSION`: nothing outlives the process)."""
        with self._lock:
            self._open()
        return SCHEMA_VERSION

    def put(
        self,
        row: CheckpointRow,
        *,
        blobs: Mapping[str, bytes] | None = None,
        expect_head: str | None,
        writes: Sequence[WriteRow] = (),
    ) -> None:
        """Store the blobs and the checkpoint, and make it the thread's head, atomically (see `Checkpointer`).

        Raises:
            CheckpointError: the head is not `expect_head` (another run advanced the
                thread), or the checkpoint id is already stored; nothing was written.
        """
        check_stored_thread_id(row.thread_id)
        against = {row.parent_id: writes} if writes and row.parent_id is not None else {}
        self._commit([row], blobs, expect_head, against)

    def put_many(
        self,
        rows: Sequence[CheckpointRow],
        *,
        blobs: Mapping[str, bytes] | None = None,
        expect_head: str | None,
        writes: Mapping[str, Sequence[WriteRow]] | None = None,
    ) -> None:
        """Store a line of checkpoints and make the last the head, all or none (see `Checkpointer`).

        Raises:
            CheckpointError: the head is not `expect_head`, an id is already
                stored, or `rows` is not one line of one thread; nothing was written.
        """
        check_line(rows)
        self._commit(rows, blobs, expect_head, writes or {})

    def _commit(
        self,
        rows: Sequence[CheckpointRow],
        blobs: Mapping[str, bytes] | None,
        expect_head: str | None,
        writes: Mapping[str, Sequence[WriteRow]],
    ) -> None:
        """Store `rows` (a line of one thread), blobs and `writes` by checkpoint id; the last is the head."""
        rows = [_own_row(r) for r in rows]
        owned = {checkpoint_id: [_own_write(w) for w in ws] for checkpoint_id, ws in writes.items()}
        first, last = rows[0], rows[-1]
        with self._lock:
            threads = self._open()
            thread = threads.get(first.thread_id)
            actual = None if thread is None else thread.head
            if actual != expect_head:
                raise cas_refused(first.thread_id, first.checkpoint_id, expect_head, actual)
            for row in rows:
                if thread is not None and row.checkpoint_id in thread.checkpoints:
                    raise already_stored(row.thread_id, row.checkpoint_id)
            if thread is None:
                thread = threads[first.thread_id] = _Thread(last.checkpoint_id, last.status, now())
            for blob_id, data in (blobs or {}).items():
                thread.blobs.setdefault(blob_id, bytes(data))
            thread.checkpoints.update((row.checkpoint_id, row) for row in rows)
            for checkpoint_id, stored in owned.items():
                thread.writes.setdefault(checkpoint_id, {}).update((w.task_id, w) for w in stored)
            thread.head = last.checkpoint_id
            thread.status = last.status
            thread.updated_at = now()

    def put_writes(
        self,
        thread_id: str,
        checkpoint_id: str,
        writes: Sequence[WriteRow],
        *,
        blobs: Mapping[str, bytes] | None = None,
        status: str | None = None,
    ) -> None:
        """Store task results against a checkpoint (and their blobs), atomically (see `Checkpointer`).

        Raises:
            CheckpointError: the checkpoint is not stored; nothing was written.
        """
        owned = [_own_write(w) for w in writes]
        with self._lock:
            thread = self._open().get(thread_id)
            if thread is None or checkpoint_id not in thread.checkpoints:
                raise unknown_checkpoint(thread_id, checkpoint_id)
            for blob_id, data in (blobs or {}).items():
                thread.blobs.setdefault(blob_id, bytes(data))
            stored = thread.writes.setdefault(checkpoint_id, {})
            for write in owned:
                stored[write.task_id] = write
            if status is not None:
                thread.status = status
            thread.updated_at = now()

    def get(self, thread_id: str, checkpoint_id: str | None = None) -> CheckpointRow | None:
        """One checkpoint, or the thread's head when `checkpoint_id` is None; None if absent."""
        with self._lock:
            thread = self._open().get(thread_id)
            if thread is None:
                return None
            return thread.checkpoints.get(thread.head if checkpoint_id is None else checkpoint_id)

    def get_writes(self, thread_id: str, checkpoint_id: str) -> dict[str, WriteRow]:
        """The task results stored against a checkpoint, by task id (sorted by task id)."""
        with self._lock:
            thread = self._open().get(thread_id)
            stored = {} if thread is None else thread.writes.get(checkpoint_id, {})
            return {task_id: stored[task_id] for task_id in sorted(stored)}

    def get_blobs(self, thread_id: str, blob_ids: Iterable[str]) -> dict[str, bytes]:
        """The stored blobs among `blob_ids` (missing ids are left out)."""
        wanted = list(blob_ids)
        with self._lock:
            thread = self._open().get(thread_id)
            if thread is None:
                return {}
            return {b: thread.blobs[b] for b in wanted if b in thread.blobs}

    def history(
        self, thread_id: str, *, limit: int | None = None, before: str | None = None
    ) -> list[CheckpointRow]:
        """A thread's checkpoints, newest (greatest checkpoint id) first.

        Args:
            thread_id: the thread.
            limit: at most this many.
            before: only checkpoints whose id sorts before this one.
        """
        check_limit(limit)
        with self._lock:
            thread = self._open().get(thread_id)
            rows = [] if thread is None else list(thread.checkpoints.values())
        if before is not None:
            rows = [r for r in rows if r.checkpoint_id < before]
        newest = operator.attrgetter("checkpoint_id")
        if limit is None:
            return sorted(rows, key=newest, reverse=True)
        return heapq.nlargest(limit, rows, key=newest)

    def threads(
        self, *, status: str | None = None, limit: int | None = None, after: ThreadInfo | None = None
    ) -> list[ThreadInfo]:
        """The threads (with that status, if given), most recently updated first, a page at a time.

        The threads of subgraphs' runs (their ids contain `|`) are not listed.
        See `Checkpointer.threads` for `limit` and `after`.
        """
        check_limit(limit, "threads")
        with self._lock:
            infos = [
                ThreadInfo(thread_id, t.head, t.status, t.updated_at)
                for thread_id, t in self._open().items()
                if (status is None or t.status == status) and NS not in thread_id
            ]
        if after is not None:
            start = thread_order(after)
            infos = [i for i in infos if thread_order(i) > start]
        if limit is not None:
            return heapq.nsmallest(limit, infos, key=thread_order)
        return sorted(infos, key=thread_order)

    def thread_counts(self) -> dict[str, int]:
        """How many threads have each status (subgraphs' runs left out, as `threads()` leaves them)."""
        with self._lock:
            return dict(Counter(t.status for thread_id, t in self._open().items() if NS not in thread_id))

    def claim_answers(
        self, thread_id: str, expect_head: str, answers: Sequence[AnswerRow]
    ) -> list[AnswerRow]:
        """Claim answers to pending questions, all or none (see `Checkpointer.claim_answers`).

        Raises:
            CheckpointError: no answer was stored before, but the head is not `expect_head`.
        """
        owned = [dataclasses.replace(a, data=bytes(a.data)) for a in answers]
        with self._lock:
            thread = self._open().get(thread_id)
            stored = {} if thread is None else thread.answers
            won = [stored[a.interrupt_id] for a in owned if a.interrupt_id in stored]
            if won:
                return won
            if thread is None or thread.head != expect_head:
                raise moved_on(thread_id, expect_head, None if thread is None else thread.head)
            stored.update((a.interrupt_id, a) for a in owned)
            thread.status = "running"
            thread.updated_at = now()
            return []

    def get_answers(self, thread_id: str, interrupt_ids: Iterable[str]) -> dict[str, AnswerRow]:
        """The stored answers among `interrupt_ids`, by interrupt id."""
        wanted = list(interrupt_ids)
        with self._lock:
            thread = self._open().get(thread_id)
            stored = {} if thread is None else thread.answers
            return {i: stored[i] for i in wanted if i in stored}

    def answers_at(self, thread_id: str, checkpoint_id: str) -> dict[str, AnswerRow]:
        """The answers claimed for the questions of the superstep after `checkpoint_id`, by interrupt id."""
        with self._lock:
            thread = self._open().get(thread_id)
            stored = {} if thread is None else thread.answers
            return {i: a for i, a in sorted(stored.items()) if a.checkpoint_id == checkpoint_id}

    def set_metadata(self, thread_id: str, values: Mapping[str, str]) -> None:
        """Record labels of a thread; a key given again is replaced."""
        check_stored_thread_id(thread_id)
        checked = check_metadata(values)
        with self._lock:
            self._open()
            self._metadata.setdefault(thread_id, {}).update(checked)

    def get_metadata(self, thread_id: str) -> dict[str, str]:
        """The labels recorded for a thread (empty when none)."""
        with self._lock:
            self._open()
            return dict(self._metadata.get(thread_id, {}))

    def delete_thread(self, thread_id: str) -> None:
        """Remove a thread: its checkpoints, writes, blobs, answers and metadata, and its subgraphs' threads.

        Nothing happens if it is absent.
        """
        with self._lock:
            threads = self._open()
            for inner in [t for t in threads if t.startswith(thread_id + NS)]:
                del threads[inner]
            threads.pop(thread_id, None)
            self._metadata.pop(thread_id, None)

    def prune(self, thread_id: str, *, keep: int) -> int:
        """Delete all but the newest `keep` checkpoints of a thread (the head always stays).

        Writes of deleted checkpoints go too, and every blob of the thread that no
        remaining checkpoint or write refers to.

        Returns:
            How many checkpoints were deleted.
        """
        check_keep(keep)
        with self._lock:
            thread = self._open().get(thread_id)
            if thread is None:
                return 0
            drop = prune_plan(list(thread.checkpoints), thread.head, keep)
            for checkpoint_id in drop:
                del thread.checkpoints[checkpoint_id]
                thread.writes.pop(checkpoint_id, None)
            gone = set(drop)
            thread.answers = {k: a for k, a in thread.answers.items() if a.checkpoint_id not in gone}
            used = {ref for row in thread.checkpoints.values() for ref in row.refs}
            used.update(ref for ws in thread.writes.values() for w in ws.values() for ref in w.refs)
            for blob_id in [b for b in thread.blobs if b not in used]:
                del thread.blobs[blob_id]
            return len(drop)

    def close(self) -> None:
        """Drop everything stored; calling it again does nothing, any other call then fails."""
        with self._lock:
            self._closed = True
            self._threads = {}
            self._metadata = {}
