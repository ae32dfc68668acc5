"""Rewinding a stateful subgraph's thread for a new call: the store reads of `_engine/rewind.py`.

A new call of a stateful subgraph starts from the newest checkpoint of its
thread that a call in the calling task's past made: the head, unless the
parent was replayed or forked from an older checkpoint since (or a call made
on another line of the parent's history left the head), then an older one,
or none (the call starts the subgraph afresh).
"""

from __future__ import annotations

from collections.abc import Iterator

from actorgraph._engine.rewind import LineRow, Past, PastLines
from actorgraph.checkpoint._load import Loaded, line_of, load
from actorgraph.checkpoint._protocol import Checkpointer, CheckpointRow

__all__ = ["rewound"]

_PAGE = 64  # checkpoints of the subgraph's thread read at a time, newest first


def rewound(store: Checkpointer, head: Loaded, past: Past) -> Loaded | None:
    """The checkpoint of `head`'s thread a new call in `past` starts from (None: nothing of it is past).

    Raises:
        CheckpointError: the store failed.
        SerializationError: a checkpoint read cannot be loaded.
    """
    lines = PastLines(past, lambda checkpoint_id: _line_row(store, past.thread_id, checkpoint_id))
    if lines.holds(head.owner):
        return head
    for row in _newest_first(store, head.thread_id):
        if lines.holds(line_of(store, row)[1]):
            return load(store, head.thread_id, row.checkpoint_id)
    return None


def _line_row(store: Checkpointer, thread_id: str, checkpoint_id: str) -> LineRow | None:
    """A checkpoint of the parent's thread as the past reads it, or None if it is not stored."""
    row = store.get(thread_id, checkpoint_id)
    return (row.parent_id, line_of(store, row)[0], row.step) if row is not None else None


def _newest_first(store: Checkpointer, thread_id: str) -> Iterator[CheckpointRow]:
    """The thread's checkpoints, newest first, read a page at a time."""
    before: str | None = None
    while True:
        page = store.history(thread_id, limit=_PAGE, before=before)
        yield from page
        if len(page) < _PAGE:
            return
        before = page[-1].checkpoint_id
