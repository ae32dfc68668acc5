"""Checkpoint rows for the store tests: ids in order, one row, a chain of them on a thread."""

from __future__ import annotations

from actorgraph.checkpoint._protocol import Checkpointer, CheckpointRow


def cid(n: int) -> str:
    return f"{n:020x}-abc"


def row(thread: str, n: int, *, parent: int | None = None, status: str = "running", refs=()) -> CheckpointRow:
    return CheckpointRow(
        thread_id=thread,
        checkpoint_id=cid(n),
        parent_id=None if parent is None else cid(parent),
        step=n,
        source="input" if parent is None else "loop",
        status=status,
        created_at=1_700_000_000.0 + n,
        data=f"record {thread}/{n}".encode(),
        refs=tuple(refs),
    )


def chain(store: Checkpointer, thread: str, count: int, **blobs: bytes) -> list[CheckpointRow]:
    """Put `count` checkpoints 1..count on a new thread, each following the last."""
    rows = []
    for n in range(1, count + 1):
        r = row(thread, n, parent=n - 1 if n > 1 else None)
        store.put(r, blobs=blobs if n == 1 else {}, expect_head=rows[-1].checkpoint_id if rows else None)
        rows.append(r)
    return rows
