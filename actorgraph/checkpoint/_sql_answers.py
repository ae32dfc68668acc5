"""Answers and thread metadata on a SQL store: claiming an answer is a compare-and-set.

A claim runs in one transaction that locks the thread's row first (SQLite's
`BEGIN IMMEDIATE` holds the database's write lock; PostgreSQL takes the row
with `FOR UPDATE`), so of two processes claiming one question at once, the
second sees the first's answer and stores nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, TypeVar

from actorgraph.checkpoint._dialect import Dialect, Statements
from actorgraph.checkpoint._protocol import AnswerRow
from actorgraph.checkpoint._store import check_metadata, check_stored_thread_id, moved_on, now

__all__ = ["SqlAnswers"]

_T = TypeVar("_T")


def _answer(values: Sequence[Any]) -> AnswerRow:
    interrupt_id, checkpoint_id, vertex, by, at, data = values
    return AnswerRow(interrupt_id, checkpoint_id, vertex, by, at, bytes(data))


class SqlAnswers:
    """`claim_answers`, `get_answers`, `set_metadata` and `get_metadata` for `SqlStore`."""

    dialect: Dialect
    sql: Statements
    answer_tables = True  # False for a read-only database older than answers and metadata

    def _write(self, op: str, work: Callable[[Any], _T]) -> _T:
        raise NotImplementedError

    def _query(self, op: str, work: Callable[[Any], _T]) -> _T:
        raise NotImplementedError

    def _matching(self, column: str, ids: Sequence[str]) -> list[tuple[str, list[Any]]]:
        raise NotImplementedError

    def claim_answers(
        self, thread_id: str, expect_head: str, answers: Sequence[AnswerRow]
    ) -> list[AnswerRow]:
        """Claim answers to pending questions in one transaction, all or none (compare-and-set).

        Returns:
            The answers already stored for those questions, or an empty list when
            these answers were stored (and the thread's status became "running").

        Raises:
            CheckpointError: no answer was stored before, but the head is not
                `expect_head`, or the database failed; nothing was written.
        """
        sql, ids = self.sql, [a.interrupt_id for a in answers]

        def work(conn: Any) -> list[AnswerRow]:
            head = conn.execute(sql.head + self.dialect.lock_thread, (thread_id,)).fetchone()
            won = self._claimed(conn, thread_id, ids)
            if won:
                return list(won.values())
            if head is None or head[0] != expect_head:
                raise moved_on(thread_id, expect_head, None if head is None else head[0])
            rows = [
                (thread_id, a.interrupt_id, a.checkpoint_id, a.vertex, a.answered_by, a.answered_at, a.data)
                for a in answers
            ]
            cursor = conn.cursor()
            try:
                cursor.executemany(sql.insert_answer, rows)
            finally:
                cursor.close()
            conn.execute(
                "UPDATE actorgraph_threads SET status = 'running', updated_at = "  # noqa: S608 - fixed text
                f"{self.dialect.mark} WHERE thread_id = {self.dialect.mark}",
                (now(), thread_id),
            )
            return []

        return self._write(f"claiming answers of thread {thread_id!r}", work)

    def get_answers(self, thread_id: str, interrupt_ids: Iterable[str]) -> dict[str, AnswerRow]:
        """The stored answers among `interrupt_ids`, by interrupt id (missing ids are left out)."""
        ids = list(dict.fromkeys(interrupt_ids))
        if not ids or not self.answer_tables:
            return {}
        return self._query(
            f"reading answers of thread {thread_id!r}", lambda conn: self._claimed(conn, thread_id, ids)
        )

    def answers_at(self, thread_id: str, checkpoint_id: str) -> dict[str, AnswerRow]:
        """The answers claimed for the questions of the superstep after `checkpoint_id`, by interrupt id."""
        if not self.answer_tables:
            return {}
        m = self.dialect.mark
        sql = f"{self.sql.claimed} AND checkpoint_id = {m} ORDER BY interrupt_id"
        found = self._query(
            f"reading answers of thread {thread_id!r}",
            lambda conn: conn.execute(sql, (thread_id, checkpoint_id)).fetchall(),
        )
        return {values[0]: _answer(values) for values in found}

    def _claimed(self, conn: Any, thread_id: str, ids: Sequence[str]) -> dict[str, AnswerRow]:
        found: dict[str, AnswerRow] = {}
        for condition, args in self._matching("interrupt_id", ids):
            for values in conn.execute(f"{self.sql.claimed} AND {condition}", (thread_id, *args)):
                found[values[0]] = _answer(values)
        return {i: found[i] for i in ids if i in found}

    def set_metadata(self, thread_id: str, values: Mapping[str, str]) -> None:
        """Record labels of a thread; a key given again is replaced.

        Raises:
            ConfigError: a key or value is not a short string.
            CheckpointError: the database failed.
        """
        check_stored_thread_id(thread_id)
        rows = [(thread_id, k, v) for k, v in check_metadata(values).items()]

        def work(conn: Any) -> None:
            if rows:
                cursor = conn.cursor()
                try:
                    cursor.executemany(self.sql.insert_metadata, rows)
                finally:
                    cursor.close()

        self._write(f"recording metadata of thread {thread_id!r}", work)

    def get_metadata(self, thread_id: str) -> dict[str, str]:
        """The labels recorded for a thread (empty when none)."""
        if not self.answer_tables:
            return {}
        found = self._query(
            f"reading metadata of thread {thread_id!r}",
            lambda conn: conn.execute(self.sql.metadata, (thread_id,)).fetchall(),
        )
        return dict(found)
