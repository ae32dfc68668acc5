"""The SQL a store runs, in one dialect's spelling: the schema and every fixed statement.

Both databases run the same standard SQL (`INSERT ... ON CONFLICT`, `CAST(...
AS text)`); a `Dialect` names only what they spell differently: the
placeholder, the column types and the locking statements.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from actorgraph.checkpoint._store import ROW_COLUMNS

__all__ = ["Dialect", "Refused", "Statements", "Step"]

Step = tuple[str, Sequence[Any], bool]
"""One statement of a batch: its SQL, its arguments (a list of rows when `many`), and `many`."""


class Refused(Exception):  # noqa: N818 - a signal between a dialect and the writes, never shown to users
    """A batch's statement broke a NOT NULL or UNIQUE constraint: how the SQL says "refused".

    The writes of a batch check their conditions in the database, so that the
    whole batch can be sent at once (one round trip on PostgreSQL): a
    compare-and-set that found another head, or a checkpoint that is not
    stored, turns a key into NULL, and a checkpoint id stored twice breaks the
    primary key. The batch is rolled back; the writer says what was refused.

    Attributes:
        kind: "null" or "unique".
        table: the table whose constraint was broken (as the database names it).
    """

    def __init__(self, kind: str, table: str) -> None:
        super().__init__(f"{kind} constraint of {table}")
        self.kind = kind
        self.table = table


_SCHEMA = """
CREATE TABLE IF NOT EXISTS actorgraph_meta (key {key} PRIMARY KEY, value {text} NOT NULL);
CREATE TABLE IF NOT EXISTS actorgraph_threads (
    thread_id {key} PRIMARY KEY, head {key} NOT NULL, status {text} NOT NULL, updated_at {real} NOT NULL
);
CREATE TABLE IF NOT EXISTS actorgraph_checkpoints (
    thread_id {key} NOT NULL, checkpoint_id {key} NOT NULL, parent_id {key}, step {int} NOT NULL,
    source {text} NOT NULL, status {text} NOT NULL, created_at {real} NOT NULL, data {blob} NOT NULL,
    refs {text} NOT NULL, PRIMARY KEY (thread_id, checkpoint_id)
);
CREATE TABLE IF NOT EXISTS actorgraph_writes (
    thread_id {key} NOT NULL, checkpoint_id {key} NOT NULL, task_id {key} NOT NULL, data {blob} NOT NULL,
    refs {text} NOT NULL, PRIMARY KEY (thread_id, checkpoint_id, task_id)
);
CREATE TABLE IF NOT EXISTS actorgraph_blobs (
    thread_id {key} NOT NULL, blob_id {key} NOT NULL, data {blob} NOT NULL, PRIMARY KEY (thread_id, blob_id)
);
CREATE TABLE IF NOT EXISTS actorgraph_answers (
    thread_id {key} NOT NULL, interrupt_id {key} NOT NULL, checkpoint_id {key} NOT NULL,
    vertex {text} NOT NULL, answered_by {text} NOT NULL, answered_at {real} NOT NULL, data {blob} NOT NULL,
    PRIMARY KEY (thread_id, interrupt_id)
);
CREATE TABLE IF NOT EXISTS actorgraph_metadata (
    thread_id {key} NOT NULL, key {key} NOT NULL, value {text} NOT NULL, PRIMARY KEY (thread_id, key)
);
CREATE INDEX IF NOT EXISTS actorgraph_threads_by_status
    ON actorgraph_threads (status, updated_at DESC, thread_id);
CREATE INDEX IF NOT EXISTS actorgraph_threads_by_time
    ON actorgraph_threads (updated_at DESC, thread_id)
"""
# The two indexes give `threads()` its pages in order (with or without a status); a database made
# before them gets them when a writable store opens it (every statement here runs on open).


@dataclass(frozen=True, slots=True)
class Dialect:
    """What a database spells its own way.

    Attributes:
        name: "SQLite" or "PostgreSQL", for messages.
        mark: the parameter placeholder ("?" or "%s").
        key: the column type of ids (compared byte by byte, so they sort alike everywhere).
        text: the column type of other text.
        real: the column type of wall-clock seconds.
        int: the column type of step numbers.
        blob: the column type of bytes.
        lock_thread: appended to the head query in `prune` to lock the thread's row ("" when
            the transaction already holds the database's write lock).
        lock_schema: a statement run before creating the schema, or "".
        table_exists: a query whose single value is not None when the table it is given exists.
    """

    name: str
    mark: str
    key: str
    text: str
    real: str
    int: str
    blob: str
    lock_thread: str
    lock_schema: str
    table_exists: str


@dataclass(frozen=True, slots=True)
class Statements:
    """Every statement of the SQL store, with one dialect's placeholder."""

    schema: tuple[str, ...]
    meta: str
    new_meta: str
    new_thread: str
    move_head: str
    head: str
    insert_row: str
    insert_blob: str
    touch: str
    touch_thread: str
    insert_write: str
    insert_write_at: str
    select_row: str
    select_one: str
    select_head: str
    writes: str
    ids_of_rows: str
    refs: str
    blob_ids: str
    thread_counts: str
    insert_answer: str
    claimed: str
    insert_metadata: str
    metadata: str

    @staticmethod
    def of(d: Dialect) -> Statements:
        """The statements in dialect `d`."""
        ddl = _SCHEMA.format(key=d.key, text=d.text, real=d.real, int=d.int, blob=d.blob)
        schema = tuple(s for s in ddl.split(";") if s.strip())
        return Statements(schema=schema, **_writing(d.mark), **_reading(d.mark))


def _writing(m: str) -> dict[str, str]:
    """The statements that change rows, with placeholder `m`."""
    rest = ", ".join([m] * (len(ROW_COLUMNS.split(",")) - 1))  # the columns after thread_id
    return {
        "new_meta": f"INSERT INTO actorgraph_meta VALUES ({m}, {m}) ON CONFLICT (key) DO NOTHING",
        "new_thread": (
            f"INSERT INTO actorgraph_threads VALUES ({m}, {m}, {m}, {m}) ON CONFLICT (thread_id) DO NOTHING"
        ),
        "move_head": (
            f"UPDATE actorgraph_threads SET head = {m}, status = {m}, updated_at = {m}"
            f" WHERE thread_id = {m} AND head = {m}"
        ),
        # the thread's id only when its head is now this line's last checkpoint (else NULL: refused)
        "insert_row": (
            f"INSERT INTO actorgraph_checkpoints ({ROW_COLUMNS}) VALUES ((SELECT thread_id"
            f" FROM actorgraph_threads WHERE thread_id = {m} AND head = {m}), {rest})"
        ),
        "insert_blob": (
            f"INSERT INTO actorgraph_blobs VALUES ({m}, {m}, {m}) ON CONFLICT (thread_id, blob_id) DO NOTHING"
        ),
        "touch": (
            f"UPDATE actorgraph_threads SET updated_at = {m}, status = coalesce(CAST({m} AS text), status)"
            f" WHERE thread_id = {m} AND EXISTS (SELECT 1 FROM actorgraph_checkpoints"
            f" WHERE thread_id = {m} AND checkpoint_id = {m})"
        ),
        "touch_thread": (
            f"UPDATE actorgraph_threads SET updated_at = {m}, status = coalesce(CAST({m} AS text), status)"
            f" WHERE thread_id = {m}"
        ),
        "insert_answer": (
            f"INSERT INTO actorgraph_answers VALUES ({m}, {m}, {m}, {m}, {m}, {m}, {m})"
            " ON CONFLICT (thread_id, interrupt_id) DO NOTHING"
        ),
        "insert_metadata": (
            f"INSERT INTO actorgraph_metadata VALUES ({m}, {m}, {m})"
            " ON CONFLICT (thread_id, key) DO UPDATE SET value = excluded.value"
        ),
        "insert_write": (
            f"INSERT INTO actorgraph_writes VALUES ({m}, {m}, {m}, {m}, {m})"
            " ON CONFLICT (thread_id, checkpoint_id, task_id)"
            " DO UPDATE SET data = excluded.data, refs = excluded.refs"
        ),
        # the checkpoint's id only when it is stored (else NULL: refused)
        "insert_write_at": (
            f"INSERT INTO actorgraph_writes VALUES ({m}, (SELECT checkpoint_id FROM actorgraph_checkpoints"
            f" WHERE thread_id = {m} AND checkpoint_id = {m}), {m}, {m}, {m})"
            " ON CONFLICT (thread_id, checkpoint_id, task_id)"
            " DO UPDATE SET data = excluded.data, refs = excluded.refs"
        ),
    }


def _reading(m: str) -> dict[str, str]:
    """The statements that read rows, with placeholder `m`."""
    select_row = f"SELECT {ROW_COLUMNS} FROM actorgraph_checkpoints WHERE thread_id = {m}"
    head = f"SELECT head FROM actorgraph_threads WHERE thread_id = {m}"
    return {
        "meta": f"SELECT value FROM actorgraph_meta WHERE key = {m}",
        "head": head,
        "select_row": select_row,
        "select_one": f"{select_row} AND checkpoint_id = {m}",
        "select_head": f"{select_row} AND checkpoint_id = ({head})",
        "writes": (
            "SELECT task_id, data, refs FROM actorgraph_writes"
            f" WHERE thread_id = {m} AND checkpoint_id = {m} ORDER BY task_id"
        ),
        "ids_of_rows": f"SELECT checkpoint_id FROM actorgraph_checkpoints WHERE thread_id = {m}",
        "refs": (
            f"SELECT refs FROM actorgraph_checkpoints WHERE thread_id = {m}"
            f" UNION ALL SELECT refs FROM actorgraph_writes WHERE thread_id = {m}"
        ),
        "blob_ids": f"SELECT blob_id FROM actorgraph_blobs WHERE thread_id = {m}",
        "thread_counts": (  # read from actorgraph_threads_by_status alone (it holds every column used)
            f"SELECT status, count(*) FROM actorgraph_threads WHERE thread_id NOT LIKE {m} GROUP BY status"
        ),
        "claimed": (
            "SELECT interrupt_id, checkpoint_id, vertex, answered_by, answered_at, data"
            f" FROM actorgraph_answers WHERE thread_id = {m}"
        ),
        "metadata": f"SELECT key, value FROM actorgraph_metadata WHERE thread_id = {m} ORDER BY key",
    }
