"""State versions in a store: encoding new ones as manifests and parts, reading stored ones back.

Encoding happens where a version is made (a vertex's thread, or the run's
coordinator for inputs and updates); each version's `Layout` is remembered in
its thread's `Book`, so a child version re-serializes only the values that
changed. The book is a hint: a version it does not know is encoded in full.
What the writer must know for certain (which parts each version refers to,
for the rows' `refs`) travels with the bytes: `Encoded.parts` from the
encoder, `Stored.parts` from the reader.
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from types import MappingProxyType
from typing import Any, Self

from actorgraph._model.errors import SerializationError
from actorgraph._model.records import Node
from actorgraph.checkpoint._codec import aad, blob_aad
from actorgraph.checkpoint._parts import (
    SMALL,
    Layout,
    PartCodec,
    assemble,
    encode_state,
    is_small,
    layout_of,
)
from actorgraph.checkpoint._protocol import Checkpointer, Serializer

__all__ = ["Book", "Encoded", "Stored", "book_for", "encode_versions", "read_versions"]

_BOOK_SIZE = 4096  # layouts a book keeps at most (a writer trims it to the live versions)
_BOOKS_PER_STORE = 256  # threads whose books a checkpointer keeps, most recently used


class Encoded(dict[str, bytes]):
    """Blobs of some versions: manifests by version id, and the new parts by content address.

    Attributes:
        parts: the part ids of each encoded version that has parts, including
            parts it shares with earlier versions (whose bytes are not here). A
            version left out has none (a small state, stored in its manifest).
    """

    parts: Mapping[str, tuple[str, ...]] = MappingProxyType({})


class Stored(frozenset[str]):
    """Ids of blobs known to be in the store, with the part ids of each version read.

    `parts[version]` is None for a version stored whole (written by actorgraph
    before manifests, format 1).
    """

    parts: Mapping[str, tuple[str, ...] | None]

    def __new__(
        cls, ids: Iterable[str] = (), parts: Mapping[str, tuple[str, ...] | None] | None = None
    ) -> Self:
        made = super().__new__(cls, ids)
        made.parts = dict(parts or {})
        return made


class Book:
    """The layouts of one thread's recent versions (hints for encoding their children)."""

    def __init__(self, serializer: Serializer) -> None:
        self.serializer = serializer
        self._layouts: dict[str, Layout] = {}
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._layouts)

    def get(self, version: str) -> Layout | None:
        """The layout of `version`, if known."""
        return self._layouts.get(version)

    def put(self, version: str, layout: Layout) -> None:
        """Remember a version's layout (the oldest are forgotten past the book's size)."""
        with self._lock:
            self._layouts[version] = layout
            if len(self._layouts) > _BOOK_SIZE:
                for old in list(self._layouts)[: _BOOK_SIZE // 4]:
                    del self._layouts[old]

    def keep(self, versions: Collection[str]) -> None:
        """Forget every version but these (no later version can descend from the others)."""
        with self._lock:
            self._layouts = {k: v for k, v in self._layouts.items() if k in versions}


_books: weakref.WeakKeyDictionary[Any, OrderedDict[str, Book]] = weakref.WeakKeyDictionary()
_books_lock = threading.Lock()


def book_for(checkpointer: Checkpointer, thread_id: str) -> Book | None:
    """The book of a thread in a store (a new one when the serializer changed); None if none can be kept."""
    serializer = checkpointer.serializer
    with _books_lock:
        try:
            books = _books.get(checkpointer)
            if books is None:
                books = _books[checkpointer] = OrderedDict()
        except TypeError:  # a store that cannot be weakly referenced: no hints, every value encoded
            return None
        book = books.get(thread_id)
        if book is None or book.serializer is not serializer:
            book = books[thread_id] = Book(serializer)
            while len(books) > _BOOKS_PER_STORE:
                books.popitem(last=False)
        else:
            books.move_to_end(thread_id)
        return book


def _located(exc: SerializationError, who: str) -> SerializationError:
    path = getattr(exc, "path", "")
    where = f" at {path}" if path else ""
    owner = f"the state returned by {who}" if who else "a state"
    located = SerializationError(f"{owner} cannot be checkpointed{where}: {exc}")
    located.path = path  # type: ignore[attr-defined]
    return located


def _small(serializer: Serializer, thread_id: str, node: Node, out: Encoded) -> bool:
    """Store a small state in its manifest, as it is; False if it cannot be (the full path says why)."""
    try:
        out[node.id] = serializer.dumps(["val", node.state], aad=blob_aad(thread_id, node.id))
    except SerializationError:
        return False
    return True


def _parents(node: Node, made: Mapping[str, Layout], hints: Book | None) -> list[tuple[Any, Layout]]:
    """(state, layout) of the parents of `node` whose layouts are known."""
    found = []
    for parent in node.parents:
        layout = made.get(parent.id) or (hints.get(parent.id) if hints is not None else None)
        if layout is not None:
            found.append((parent.state, layout))
    return found


def encode_versions(
    serializer: Serializer,
    thread_id: str,
    nodes: Sequence[Node],
    *,
    book: Callable[[], Book | None] | None,
    who: str = "",
) -> Encoded:
    """Manifests of `nodes` and the parts they need, each bound to its thread and id.

    Args:
        serializer: the store's serializer.
        thread_id: the thread.
        nodes: the versions to encode (their parents, when in the book or among
            `nodes`, lend the references of unchanged values).
        book: gets the thread's book (asked only for a state that is not small),
            or None to encode every value afresh.
        who: the vertex that made the versions, for errors.

    Raises:
        SerializationError: naming `who` and the key that cannot be stored.
    """
    out = Encoded()
    todo = nodes
    if len(todo) > 1:  # parents first, each version once
        todo = sorted({n.id: n for n in todo}.values(), key=lambda n: n.depth)
    codec: PartCodec | None = None
    hints: Book | None = None
    made: dict[str, Layout] = {}
    for node in todo:
        if is_small(node.state) and _small(serializer, thread_id, node, out):
            continue
        if codec is None:
            codec = PartCodec(serializer, thread_id, aad(thread_id, "part"))
            hints = book() if book is not None else None
        try:
            layout, parts = encode_state(
                codec, node.state, _parents(node, made, hints), lambda p: blob_aad(thread_id, p)
            )
        except SerializationError as exc:
            raise _located(exc, who) from exc
        out[node.id] = serializer.dumps(layout.manifest(), aad=blob_aad(thread_id, node.id))
        out.update(parts)
        if not out.parts:
            out.parts = {}
        out.parts[node.id] = layout.parts  # type: ignore[index]
        made[node.id] = layout
        if hints is not None:
            hints.put(node.id, layout)
    return out


def read_versions(
    checkpointer: Checkpointer, thread_id: str, whole: Mapping[str, bool], what: str
) -> tuple[dict[str, Any], Stored]:
    """The states of stored versions, and what was read (for the writer of a resumed run).

    Args:
        checkpointer: the store.
        thread_id: the thread.
        whole: the versions to read; True for one stored whole (format 1).
        what: names the checkpoint in errors.

    Returns:
        The states by version id (a version not stored is left out), and the
        ids of every blob read with each version's part ids.

    Raises:
        SerializationError: a manifest or part is damaged, tampered with or missing.
    """
    serializer = checkpointer.serializer
    blobs = checkpointer.get_blobs(thread_id, whole)
    codec = PartCodec(serializer, thread_id, aad(thread_id, "part"))
    book = book_for(checkpointer, thread_id)
    states: dict[str, Any] = {}
    layouts: dict[str, Layout] = {}
    for version, data in blobs.items():
        value = serializer.loads(data, aad=blob_aad(thread_id, version))
        if whole[version]:
            states[version] = value
            continue
        layout = layout_of(value, f"state version {version!r} of {what}")
        if layout is SMALL:
            states[version] = value[1]
        else:
            layouts[version] = layout
    wanted = {part for layout in layouts.values() for part in layout.parts}
    found = checkpointer.get_blobs(thread_id, wanted) if wanted else {}
    values = {p: codec.loads(codec.open(p, data, blob_aad(thread_id, p))) for p, data in found.items()}
    for version, layout in layouts.items():
        states[version] = assemble(codec, layout, values, f"state version {version!r} of {what}")
        if book is not None:
            book.put(version, layout)
    parts = {v: (None if whole[v] else layouts[v].parts if v in layouts else ()) for v in blobs}
    return states, Stored([*blobs, *found], parts)
