"""Writing checkpoints to a SQL store: a checkpoint, a line of them, task results; each in one transaction.

A checkpoint (or a line of them) moves the thread's head by compare-and-set:
the statement that moves it names the head the writer started from, so of two
writers only one moves it, and the other's transaction stores nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from actorgraph.checkpoint._dialect import Statements
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

    @staticmethod
    def _many(conn: Any, sql: str, rows: Sequence[Sequence[Any]]) -> None:
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
        """Store `rows` (a line of one thread), blobs and `writes` by checkpoint id; the last is the head."""
        sql, first, last = self.sql, rows[0], rows[-1]
        thread_id, stamp = first.thread_id, now()
        values = [
            (
                thread_id,
                r.checkpoint_id,
                r.parent_id,
                r.step,
                r.source,
                r.status,
                r.created_at,
                r.data,
                encode_refs(r.refs),
            )
            for r in rows
        ]
        results = [
            w for checkpoint_id, ws in writes.items() for w in write_rows(thread_id, checkpoint_id, ws)
        ]

        def work(conn: Any) -> None:
            if expect_head is None:
                moved = conn.execute(sql.new_thread, (thread_id, last.checkpoint_id, last.status, stamp))
            else:
                moved = conn.execute(
                    sql.move_head, (last.checkpoint_id, last.status, stamp, thread_id, expect_head)
                )
            if moved.rowcount != 1:
                actual = conn.execute(sql.head, (thread_id,)).fetchone()
                raise cas_refused(
                    thread_id, first.checkpoint_id, expect_head, None if actual is None else actual[0]
                )
            for row, value in zip(rows, values, strict=True):
                if conn.execute(sql.insert_row, value).rowcount != 1:
                    raise already_stored(thread_id, row.checkpoint_id)
            self._many(conn, sql.insert_blob, [(thread_id, k, v) for k, v in (blobs or {}).items()])
            self._many(conn, sql.insert_write, results)

        self._write(f"storing {what} of thread {thread_id!r}", work)

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
        rows = write_rows(thread_id, checkpoint_id, writes)

        def work(conn: Any) -> None:
            touched = conn.execute(sql.touch, (stamp, status, thread_id, thread_id, checkpoint_id))
            if touched.rowcount != 1:
                raise unknown_checkpoint(thread_id, checkpoint_id)
            self._many(conn, sql.insert_write, rows)
            self._many(conn, sql.insert_blob, [(thread_id, k, v) for k, v in (blobs or {}).items()])

        self._write(f"storing task results of thread {thread_id!r}", work)


def write_rows(thread_id: str, checkpoint_id: str, writes: Sequence[WriteRow]) -> list[tuple[object, ...]]:
    """The rows of task results stored against a checkpoint (the last one for a task id wins)."""
    latest = {w.task_id: w for w in writes}  # one statement may not upsert a key twice
    return [(thread_id, checkpoint_id, w.task_id, w.data, encode_refs(w.refs)) for w in latest.values()]
