"""Undoing what a run wrote to its thread: the checkpoints it committed, and what it stored against its start.

A run that is rolled back (`multitask_strategy="rollback"`, or a cancel with
`action="rollback"`) leaves its thread as it found it: the checkpoints it
committed are deleted (with their task results, answers and the blobs no
remaining checkpoint refers to), the head goes back to `base_head` (the head
when a worker first took the run), and the task results and answers it stored
against that checkpoint go too: the queue recorded, at the first take, what
was there before (`base_items`: the task results whole, since a resumed task's
result replaces its interrupt's, and the answers' ids), and puts it back. It
runs in the transaction that ends the run, once the run no longer commits (its
worker stopped it, or died), and moving the head is guarded as every commit is:
a worker that still runs it cannot commit on top of the rolled-back head.

Which checkpoints are the run's: walking back from the head along parents, each
one newer than `base_head` (checkpoint ids sort by creation time) until the walk
meets `base_head` or one of its ancestors. Under a clock skew between machines
larger than the run, the walk may stop early and leave some of the run's
checkpoints in the history (never delete one that is not the run's).
"""

# ruff: noqa: S608, SLF001 - statements are fixed text with placeholders; this runs in its store's transaction

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Mapping
from typing import Any

from actorgraph.checkpoint._store import now, unused_blobs

__all__ = ["base_items", "roll_back"]


def _json(value: Any) -> str:
    """Compact JSON text, as orjson writes it (the engine needs no orjson: that is the server extra's)."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def base_items(conn: Any, m: str, thread_id: str, base: str | None) -> str:
    """What the thread holds against `base` before a run starts, as JSON text.

    Its task results, whole (a resumed task's result replaces its interrupt's), and its answers' ids.
    """
    if base is None:
        return _json({"writes": {}, "answers": []})
    writes = conn.execute(
        f"SELECT task_id, data, refs FROM actorgraph_writes WHERE thread_id = {m} AND checkpoint_id = {m}",
        (thread_id, base),
    ).fetchall()
    answers = conn.execute(
        f"SELECT interrupt_id FROM actorgraph_answers WHERE thread_id = {m} AND checkpoint_id = {m}",
        (thread_id, base),
    ).fetchall()
    kept = {task: [base64.b64encode(bytes(data)).decode(), refs] for task, data, refs in writes}
    return _json({"writes": kept, "answers": [a for (a,) in answers]})


def _kept(text: object) -> tuple[dict[str, tuple[bytes, str]], set[str]] | None:
    """What `base_items` recorded, or None when unreadable (then nothing at the base is touched)."""
    try:
        found = json.loads(text) if isinstance(text, str) else None
        if not isinstance(found, Mapping) or not isinstance(found["writes"], Mapping):
            return None
        writes = {
            str(t): (base64.b64decode(d, validate=True), str(r)) for t, (d, r) in found["writes"].items()
        }
        return writes, {str(a) for a in found["answers"]}
    except (json.JSONDecodeError, KeyError, TypeError, ValueError, binascii.Error):
        return None


def _ancestors(start: str | None, parents: Mapping[str, Any]) -> set[str]:
    found: set[str] = set()
    node = start
    while isinstance(node, str) and node not in found:
        found.add(node)
        node = parents.get(node)
    return found


def _dropped(head: str, base: str | None, parents: Mapping[str, Any]) -> list[str]:
    """The run's checkpoints: from the head back, newer than `base`, until `base` or one of its ancestors."""
    keep = _ancestors(base, parents)
    drop: list[str] = []
    node: Any = head
    while isinstance(node, str) and node in parents and node not in keep and node not in drop:
        if base is not None and node <= base:
            break
        drop.append(node)
        node = parents[node]
    return drop


def roll_back(store: Any, conn: Any, thread_id: str, base: str | None, items: object) -> None:
    """Delete what a stopped run wrote to `thread_id` and put its head back on `base` (see the module)."""
    m, sql = store.dialect.mark, store.sql
    head_row = conn.execute(sql.head + store.dialect.lock_thread, (thread_id,)).fetchone()
    if head_row is None:
        return
    parents = dict(
        conn.execute(
            f"SELECT checkpoint_id, parent_id FROM actorgraph_checkpoints WHERE thread_id = {m}", (thread_id,)
        ).fetchall()
    )
    drop = _dropped(head_row[0], base, parents)
    for table in ("writes", "answers", "checkpoints"):
        store._delete(conn, thread_id, table, "checkpoint_id", drop)
    if base is None or base not in parents:
        if len(drop) == len(parents):  # the run began the thread: nothing of it is left
            conn.execute(f"DELETE FROM actorgraph_threads WHERE thread_id = {m}", (thread_id,))
    else:
        _back_to(store, conn, thread_id, base, items)
    refs = [text for (text,) in conn.execute(sql.refs, (thread_id, thread_id))]
    unused = unused_blobs(refs, [b for (b,) in conn.execute(sql.blob_ids, (thread_id,))])
    store._delete(conn, thread_id, "blobs", "blob_id", unused)


def _back_to(store: Any, conn: Any, thread_id: str, base: str, items: object) -> None:
    """Make `base` the head again, and delete what the run stored against it (what was there stays)."""
    m = store.dialect.mark
    (status,) = conn.execute(
        f"SELECT status FROM actorgraph_checkpoints WHERE thread_id = {m} AND checkpoint_id = {m}",
        (thread_id, base),
    ).fetchone()
    conn.execute(
        f"UPDATE actorgraph_threads SET head = {m}, status = {m}, updated_at = {m} WHERE thread_id = {m}",
        (base, status, now(), thread_id),
    )
    kept = _kept(items)
    if kept is None:
        return
    writes, answers = kept
    for table, column, keep in (("writes", "task_id", set(writes)), ("answers", "interrupt_id", answers)):
        where = f"WHERE thread_id = {m} AND checkpoint_id = {m}"
        found = conn.execute(f"SELECT {column} FROM actorgraph_{table} {where}", (thread_id, base)).fetchall()
        gone = [(thread_id, base, i) for (i,) in found if i not in keep]
        store._many(conn, f"DELETE FROM actorgraph_{table} {where} AND {column} = {m}", gone)
    restored = [(thread_id, base, task, data, refs) for task, (data, refs) in writes.items()]
    store._many(conn, store.sql.insert_write, restored)  # a result the run replaced is the one before it
