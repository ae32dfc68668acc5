"""What the three stores share: the default serializer, error messages, refs and pruning plans.

Every store behaves the same way, so the decisions that do not depend on where
the bytes go are made here once: how `refs` are stored as text, which
checkpoints a prune deletes, and what the errors say.
"""

from __future__ import annotations

import importlib
import itertools
import json
import re
import threading
import time
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from types import TracebackType
from typing import Any, Self, cast

from actorgraph._model.errors import CheckpointError, ConfigError
from actorgraph.checkpoint._protocol import (
    SCHEMA_VERSION,
    Checkpointer,
    CheckpointRow,
    Serializer,
    ThreadInfo,
)

__all__ = [
    "META_VERSION_KEY",
    "ROW_COLUMNS",
    "StoreBase",
    "already_stored",
    "bad_schema",
    "cas_refused",
    "check_keep",
    "check_limit",
    "check_metadata",
    "check_schema",
    "check_stored_thread_id",
    "check_thread_id",
    "decode_refs",
    "decode_row",
    "encode_refs",
    "moved_on",
    "newer_schema",
    "now",
    "prune_plan",
    "thread_counts",
    "thread_order",
    "unknown_checkpoint",
    "unused_blobs",
]

META_VERSION_KEY = "schema_version"
"""The key under which every database store records `SCHEMA_VERSION`."""

ROW_COLUMNS = "thread_id, checkpoint_id, parent_id, step, source, status, created_at, data, refs"
"""The columns of a stored checkpoint row, in `CheckpointRow` order (SQL stores)."""

_dumps = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode
_loads = json.JSONDecoder().decode


class StoreBase:
    """The parts of a checkpointer that do not depend on its storage.

    Holds the serializer (the default `MsgpackSerializer` is created on first
    use, so a store works without the serde module until something encodes),
    and makes every store a context manager that closes itself.
    """

    def __init__(self, serializer: Serializer | None) -> None:
        self._serializer = serializer
        self._serializer_lock = threading.Lock()

    @property
    def serializer(self) -> Serializer:
        """The serializer the engine encodes this store's records with."""
        found = self._serializer
        if found is None:
            with self._serializer_lock:
                if self._serializer is None:
                    serde = importlib.import_module("actorgraph.checkpoint.serde")
                    self._serializer = cast("Serializer", serde.MsgpackSerializer())
                found = self._serializer
        return found

    @serializer.setter
    def serializer(self, value: Serializer) -> None:
        self._serializer = value

    @property
    def schema_version(self) -> int:
        """The schema version recorded by the store (equal to `SCHEMA_VERSION` when open)."""
        return SCHEMA_VERSION

    def close(self) -> None:
        """Release connections and files; calling it again does nothing."""
        raise NotImplementedError

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


def now() -> float:
    """Wall-clock seconds, as recorded in a thread's `updated_at`."""
    return time.time()


def encode_refs(refs: Iterable[str]) -> str:
    """The stored text of a row's blob ids (a JSON array, so any id survives)."""
    return _dumps(list(refs))


def decode_refs(text: str) -> tuple[str, ...]:
    """The blob ids of a row, from the text made by `encode_refs`."""
    return tuple(_loads(text))


def decode_row(values: Sequence[Any]) -> CheckpointRow:
    """A `CheckpointRow` from the columns `ROW_COLUMNS` of a SQL store."""
    thread_id, checkpoint_id, parent_id, step, source, status, created_at, data, refs = values
    return CheckpointRow(
        thread_id, checkpoint_id, parent_id, step, source, status, created_at, bytes(data), decode_refs(refs)
    )


def unused_blobs(refs: Iterable[str], blob_ids: Iterable[str]) -> list[str]:
    """The blob ids that none of the stored `refs` texts (from `encode_refs`) lists."""
    used = {ref for text in refs for ref in decode_refs(text)}
    return [b for b in blob_ids if b not in used]


def check_keep(keep: int) -> None:
    """Refuse a `prune(keep=...)` that would delete the head."""
    if keep < 1:
        raise ConfigError(
            f"prune(keep={keep}) would delete every checkpoint; keep must be at least 1 "
            f"(the head is always kept). Use delete_thread() to remove a whole thread."
        )


THREAD_ID_LIMIT = 256
"""The longest thread id, in characters."""

# C0 and C1 controls, DEL, and the Unicode marks that reorder or hide text when shown
_UNSHOWABLE = re.compile("[\x00-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]")


def check_thread_id(thread_id: object) -> str:
    """`thread_id`, once it is a thread id a person can read, type and link to.

    A thread id is a non-empty `str` of at most `THREAD_ID_LIMIT` characters,
    with no control or invisible characters, no `|` (it names the runs of
    subgraphs), and no whitespace at either end. Anything else printable is
    allowed (`/`, `..`, `%`, `#`, `?`, accents): the front ends encode ids
    wherever they put them.

    Raises:
        ConfigError: it is not such a string (the message says which rule it breaks).
    """
    if not isinstance(thread_id, str):
        raise ConfigError(
            f"thread_id must be a string, got {type(thread_id).__name__} {thread_id!r:.60}; "
            f"pass thread_id=str(...) if you name threads by number"
        )
    problem = _thread_id_problem(thread_id)
    if problem:
        raise ConfigError(f"thread_id {thread_id!r:.80} {problem}; choose another thread id")
    return thread_id


def check_stored_thread_id(thread_id: object) -> None:
    """Refuse to store a thread whose id is not a non-empty `str` (the engine's subgraph ids included).

    Raises:
        ConfigError: it is not.
    """
    if not isinstance(thread_id, str) or not thread_id:
        raise ConfigError(
            f"a stored thread id must be a non-empty string, got {type(thread_id).__name__} "
            f"{thread_id!r:.60}; nothing was written"
        )


def _thread_id_problem(thread_id: str) -> str:
    if not thread_id.strip():
        return "is empty or only whitespace"
    if len(thread_id) > THREAD_ID_LIMIT:
        return f"is {len(thread_id)} characters long (at most {THREAD_ID_LIMIT})"
    if thread_id != thread_id.strip():
        return "starts or ends with whitespace"
    found = _UNSHOWABLE.search(thread_id)
    if found:
        return f"contains the control or invisible character U+{ord(found.group()):04X}"
    if "|" in thread_id:
        return "contains '|', which names the runs of subgraphs"
    return ""


METADATA_LIMIT = 4096
"""The longest key or value `set_metadata` stores, in characters (labels, not documents)."""


def check_metadata(values: Mapping[str, str]) -> dict[str, str]:
    """`values` as a plain dict, once every key and value is a short string.

    Raises:
        ConfigError: a key or value is not a string, or is longer than `METADATA_LIMIT`.
    """
    if not isinstance(values, Mapping):
        raise ConfigError(f"set_metadata takes a mapping of strings to strings, got {type(values).__name__}.")
    checked: dict[str, str] = {}
    for key, value in values.items():
        for what, text in (("key", key), ("value", value)):
            if not isinstance(text, str) or len(text) > METADATA_LIMIT:
                raise ConfigError(
                    f"set_metadata: {what} {text!r:.80} is not a string of at most {METADATA_LIMIT} "
                    f"characters; thread metadata holds short labels (store documents in the state)."
                )
        checked[key] = value
    return checked


def check_limit(limit: int | None, call: str = "history") -> None:
    """Refuse a negative `history(limit=...)` or `threads(limit=...)` (`call` names which)."""
    if limit is not None and limit < 0:
        raise ConfigError(f"{call}(limit={limit}): limit must be 0 or more, or None for no limit.")


def thread_order(info: ThreadInfo) -> tuple[float, str]:
    """The sort key of `threads()`: most recently updated first, then by thread id."""
    return (-info.updated_at, info.thread_id)


COUNT_PAGE = 1000
"""Threads read at a time when a store without `thread_counts()` is counted through `threads()`."""


def thread_counts(store: Checkpointer) -> dict[str, int]:
    """How many threads of `store` have each status (subgraphs' runs left out).

    The stores of actorgraph count in the database (`thread_counts()`, one
    `GROUP BY` on an index). A checkpointer written before that method existed
    still works: its `threads()` is read `COUNT_PAGE` threads at a time and
    counted here, which costs a read of every thread.
    """
    own = getattr(store, "thread_counts", None)
    if callable(own):
        return dict(own())
    counts: Counter[str] = Counter()
    after: ThreadInfo | None = None
    while True:
        page = store.threads(limit=COUNT_PAGE, after=after)
        counts.update(info.status for info in page)
        if len(page) < COUNT_PAGE:
            return dict(counts)
        after = page[-1]


def prune_plan(ids: Sequence[str], head: str, keep: int) -> list[str]:
    """The checkpoint ids a prune deletes: all but the newest `keep`, never the head.

    Args:
        ids: the thread's checkpoint ids (any order).
        head: the thread's head.
        keep: how many of the newest to keep (at least 1).
    """
    newest = sorted(ids, reverse=True)
    return [cid for cid in newest[keep:] if cid != head]


def _show(checkpoint_id: str | None, missing: str) -> str:
    return missing if checkpoint_id is None else repr(checkpoint_id)


def cas_refused(
    thread_id: str, checkpoint_id: str, expected: str | None, actual: str | None
) -> CheckpointError:
    """The error of a `put` whose `expect_head` is not the thread's head (nothing was written)."""
    want = _show(expected, "no head (a new thread)")
    have = _show(actual, "no head (the thread does not exist)")
    return CheckpointError(
        f"refused to commit checkpoint {checkpoint_id!r} to thread {thread_id!r}: expected "
        f"head {want}, but the head is {have}. Another run advanced the thread (or deleted "
        f"it) since this run read it, so nothing was written. Load the thread's current "
        f"head and resume from there, or use a new thread_id."
    )


def moved_on(thread_id: str, expected: str, actual: str | None) -> CheckpointError:
    """The error of a `claim_answers` whose thread moved on since its questions were read."""
    have = _show(actual, "gone (the thread was deleted)")
    return CheckpointError(
        f"refused to store answers for thread {thread_id!r}: its questions were read at checkpoint "
        f"{expected!r}, but the thread's head is now {have}. Another run moved the thread on "
        f"since, so those questions are no longer pending and nothing was written. Read the "
        f"thread again (get_state) and answer what it asks now."
    )


def already_stored(thread_id: str, checkpoint_id: str) -> CheckpointError:
    """The error of a `put` whose checkpoint id the thread already has."""
    return CheckpointError(
        f"checkpoint {checkpoint_id!r} of thread {thread_id!r} is already stored; nothing was "
        f"written. Checkpoint ids must be unique: generate a new id for every checkpoint."
    )


def check_line(rows: Sequence[CheckpointRow]) -> str:
    """The thread of `put_many`'s rows, once they are checked to be one line of it, oldest first.

    Raises:
        CheckpointError: no rows, rows of several threads, or a row whose parent is not the row before.
    """
    if not rows:
        raise CheckpointError("put_many was given no checkpoint; give it at least one row")
    thread_id = rows[0].thread_id
    check_stored_thread_id(thread_id)
    if len({row.checkpoint_id for row in rows}) < len(rows):
        raise CheckpointError(f"put_many was given one checkpoint id twice for thread {thread_id!r}")
    for before, row in itertools.pairwise(rows):
        if row.thread_id != thread_id or row.parent_id != before.checkpoint_id:
            raise CheckpointError(
                f"put_many: checkpoint {row.checkpoint_id!r} of thread {row.thread_id!r} does not follow "
                f"checkpoint {before.checkpoint_id!r} of thread {thread_id!r}; the rows must be one line "
                f"of one thread, oldest first, each the parent of the next. Nothing was written."
            )
    return thread_id


def unknown_checkpoint(thread_id: str, checkpoint_id: str) -> CheckpointError:
    """The error of a `put_writes` against a checkpoint that is not stored."""
    return CheckpointError(
        f"cannot store task results for thread {thread_id!r}: its checkpoint "
        f"{checkpoint_id!r} is not stored (never written, pruned, or the thread was "
        f"deleted); nothing was written. Store the checkpoint with put() first."
    )


def newer_schema(where: str, found: int) -> CheckpointError:
    """The error of opening a store written by a newer actorgraph."""
    return CheckpointError(
        f"{where} records schema version {found}, but this actorgraph understands version "
        f"{SCHEMA_VERSION} at most; it was written by a newer actorgraph. Upgrade actorgraph "
        f"to use this store, or point the checkpointer at another database."
    )


def bad_schema(where: str, found: object) -> CheckpointError:
    """The error of opening a store whose recorded schema version is not one this version knows."""
    return CheckpointError(
        f"{where} records schema version {found!r}, which this actorgraph (version "
        f"{SCHEMA_VERSION}) cannot read. Point the checkpointer at a database made by "
        f"actorgraph, or at a new one."
    )


def check_schema(where: str, found: object) -> None:
    """Refuse a recorded schema version other than `SCHEMA_VERSION`."""
    try:
        version = int(cast("str", found))
    except (TypeError, ValueError):
        raise bad_schema(where, found) from None
    if version > SCHEMA_VERSION:
        raise newer_schema(where, version)
    if version != SCHEMA_VERSION:
        raise bad_schema(where, found)
