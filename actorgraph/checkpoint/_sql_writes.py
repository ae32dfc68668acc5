"""Writing checkpoints to a SQL store: a checkpoint, a line of them, task results; each in one transaction.

A checkpoint (or a line of them) moves the thread's head by compare-and-set:
the statement that moves it names the head the writer started from, so of two
writers only one moves it, and the other's transaction stores nothing.

Each write is one batch of statements sent at once (`SqlStore._batch`): on
PostgreSQL one round trip per superstep, however many rows it stores. Nothing
is read back in the middle, so the conditions are checked by the SQL itself
(`Refused`), and a refused batch is explained by a read afterwards.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from actorgraph._model.errors import CheckpointError
from actorgraph.checkpoint._dialect import Refused, Statements, Step
from actorgraph.checkpoint._protocol import CheckpointRow, WriteRow
from actorgraph.checkpoint._store import (
    already_stored,
    cas_refused,
    check_line,
    check_stored_thread_id,
    encode_refs,
    now,
    unknown_checkpoint,
)

__all__ = ["SqlWrites", "write_rows"]

_T = TypeVar("_T")


class SqlWrites:
    """`put`, `put_many` and `put_writes` for `SqlStore`."""

    sql: Statements

    def _write(self, op: str, work: Callable[[Any], _T]) -> _T:
        raise NotImplementedError

    def _batch(self, op: str, steps: Sequence[Step]) -> None:
        raise NotImplementedError

    def _read(self, op: str, sql: str, args: Sequence[Any]) -> list[Any]:
        raise NotImplementedError

    def get(self, thread_id: str, checkpoint_id: str | None = None) -> CheckpointRow | None:
        raise NotImplementedError

    def put(
        self,
        row: CheckpointRow,
        *,
        blobs: Mapping[str, bytes] | None = None,
        expect_head: str | None,
        writes: Sequence[WriteRow] = (),
    ) -> None:
        """Store the blobs and the checkpoint, and make it the thread's head, in one transaction.

        Args:
            row: the checkpoint.
            blobs: state versions it refers to; an id already stored keeps its bytes.
            expect_head: the head the writer started from (None for a new thread).
            writes: task results stored against `row.parent_id` in the same transaction.

        Raises:
            CheckpointError: the head moved (another run advanced the thread), the id
                is already stored, or the database failed; nothing was written.
        """
        check_stored_thread_id(row.thread_id)
        against = {row.parent_id or "": writes} if writes else {}
        self._commit([row], blobs, expect_head, against, f"checkpoint {row.checkpoint_id!r}")

    def put_many(
        self,
        rows: Sequence[CheckpointRow],
        *,
        blobs: Mapping[str, bytes] | None = None,
        expect_head: str | None,
        writes: Mapping[str, Sequence[WriteRow]] | None = None,
    ) -> None:
        """Store a line of checkpoints and make the last the head, in one transaction (see `Checkpointer`).

        Raises:
            CheckpointError: the head moved, an id is already stored, `rows` is not
                one line of one thread, or the database failed; nothing was written.
        """
        check_line(rows)
        self._commit(rows, blobs, expect_head, writes or {}, f"{len(rows)} checkpoint(s)")

    def _commit(
        self,
        rows: Sequence[CheckpointRow],
        blobs: Mapping[str, bytes] | None,
        expect_head: str | None,
        writes: Mapping[str, Sequence[WriteRow]],
        what: str,
    ) -> None:
        """Store `rows` (a line of one thread), blobs and `writes` by checkpoint id; the last is the head.

        One batch: the head moves by compare-and-set, and each row is stored only
        if the head is now the line's last checkpoint (else its thread id is NULL,
        which the database refuses), so a writer that lost the race stores nothing.
        """
        sql, first, last = self.sql, rows[0], rows[-1]
        thread_id, stamp, head = first.thread_id, now(), last.checkpoint_id
        if expect_head is None:
            move: Step = (sql.new_thread, (thread_id, head, last.status, stamp), False)
        else:
            move = (sql.move_head, (head, last.status, stamp, thread_id, expect_head), False)
        values = [
            (thread_id, head, r.checkpoint_id, r.parent_id, r.step, r.source, r.status, r.created_at, r.data,
             encode_refs(r.refs))
            for r in rows
        ]  # fmt: skip
        results = [w for cid, ws in writes.items() for w in write_rows(thread_id, cid, ws)]
        steps = [
            move,
            (sql.insert_row, values, True),
            (sql.insert_blob, [(thread_id, k, v) for k, v in (blobs or {}).items()], True),
            (sql.insert_write, results, True),
        ]
        try:
            self._batch(f"storing {what} of thread {thread_id!r}", steps)
        except Refused as refused:
            raise self._why_refused(refused, rows, expect_head) from None

    def _why_refused(
        self, refused: Refused, rows: Sequence[CheckpointRow], expect_head: str | None
    ) -> CheckpointError:
        """What a refused line of checkpoints was refused for (read after the rollback)."""
        thread_id = rows[0].thread_id
        if refused.kind == "unique":
            stored = [r.checkpoint_id for r in rows if self.get(thread_id, r.checkpoint_id) is not None]
            return already_stored(thread_id, stored[0] if stored else rows[0].checkpoint_id)
        found = self._read(f"reading the head of thread {thread_id!r}", self.sql.head, (thread_id,))
        return cas_refused(thread_id, rows[0].checkpoint_id, expect_head, found[0][0] if found else None)

    def put_writes(
        self,
        thread_id: str,
        checkpoint_id: str,
        writes: Sequence[WriteRow],
        *,
        blobs: Mapping[str, bytes] | None = None,
        status: str | None = None,
    ) -> None:
        """Store task results against a checkpoint (and their blobs), in one transaction.

        Args:
            thread_id: the thread.
            checkpoint_id: the checkpoint whose next superstep the tasks belong to.
            writes: the results; a later one for a task id replaces the earlier one.
            blobs: state versions they refer to; an id already stored keeps its bytes.
            status: when given, the thread's new status.

        Raises:
            CheckpointError: the checkpoint is unknown or the database failed; nothing was written.
        """
        stamp, sql = now(), self.sql
        op = f"storing task results of thread {thread_id!r}"
        if not writes:
            self._mark(op, thread_id, checkpoint_id, status, stamp)
            return
        # each result is stored only against a stored checkpoint (else NULL: refused)
        rows = [(t, t, c, *rest) for t, c, *rest in write_rows(thread_id, checkpoint_id, writes)]
        steps = [
            (sql.touch_thread, (stamp, status, thread_id), False),
            (sql.insert_write_at, rows, True),
            (sql.insert_blob, [(thread_id, k, v) for k, v in (blobs or {}).items()], True),
        ]
        try:
            self._batch(op, steps)
        except Refused:
            raise unknown_checkpoint(thread_id, checkpoint_id) from None

    def _mark(self, op: str, thread_id: str, checkpoint_id: str, status: str | None, stamp: float) -> None:
        """Record the thread's status (and time) alone, against a checkpoint that must be stored."""

        def work(conn: Any) -> None:
            touched = conn.execute(self.sql.touch, (stamp, status, thread_id, thread_id, checkpoint_id))
            if touched.rowcount != 1:
                raise unknown_checkpoint(thread_id, checkpoint_id)

        self._write(op, work)


def write_rows(thread_id: str, checkpoint_id: str, writes: Sequence[WriteRow]) -> list[tuple[object, ...]]:
    """The rows of task results stored against a checkpoint (the last one for a task id wins)."""
    latest = {w.task_id: w for w in writes}  # one statement may not upsert a key twice
    return [(thread_id, checkpoint_id, w.task_id, w.data, encode_refs(w.refs)) for w in latest.values()]
