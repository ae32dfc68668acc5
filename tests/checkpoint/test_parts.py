"""Unchanged values stored once: versions as manifests of content-addressed parts, in every store."""

from __future__ import annotations

import dataclasses
import hashlib
import sqlite3
import tracemalloc
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest
from exact_values import same
from hypothesis import given
from hypothesis import strategies as st
from twins import twins, values

import actorgraph as ag
from actorgraph.checkpoint import (
    EncryptedSerializer,
    MemoryCheckpointer,
    MsgpackSerializer,
    SqliteCheckpointer,
)
from actorgraph.checkpoint._codec import FORMAT, aad, blob_aad
from actorgraph.checkpoint._parts import (
    CHUNK_ITEMS,
    INLINE_MAX,
    PartCodec,
    assemble,
    encode_state,
    is_part_id,
)

Compile = Callable[..., ag.CompiledGraph]

BIG = 200_000  # bytes of the value that does not change


class Counting:
    """A store that counts the blob bytes the writer sends it (and passes everything on)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.sent: list[int] = []  # bytes of blobs per call

    @property
    def serializer(self) -> Any:
        return self.inner.serializer

    def put(self, row: Any, *, blobs: Mapping[str, bytes] | None = None, **kwargs: Any) -> None:
        self.sent.append(sum(map(len, (blobs or {}).values())))
        self.inner.put(row, blobs=blobs, **kwargs)

    def put_writes(self, thread_id: str, checkpoint_id: str, writes: Any, **kwargs: Any) -> None:
        self.sent.append(sum(map(len, (kwargs.get("blobs") or {}).values())))
        self.inner.put_writes(thread_id, checkpoint_id, writes, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def loop(steps: int, change: Callable[[dict[str, Any]], dict[str, Any]] | None = None) -> ag.Graph:
    """A vertex that counts `n` up to `steps`, returning the whole state (changed by `change`)."""

    def step(s: dict[str, Any]) -> dict[str, Any]:
        out = {**s, "n": s["n"] + 1}
        return change(out) if change else out

    g: ag.Graph = ag.Graph()
    g.add_vertex("inc", step)
    g.add_edge(ag.START, "inc")
    g.add_conditional_edges("inc", lambda s: "inc" if s["n"] < steps else ag.END)
    return g


def blob_rows(path: Path, thread: str = "t") -> dict[str, bytes]:
    with sqlite3.connect(path) as raw:
        rows = raw.execute("SELECT blob_id, data FROM actorgraph_blobs WHERE thread_id = ?", (thread,))
        return dict(rows.fetchall())


# -- every store -----------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("value", [b"x" * BIG, "y" * BIG, [{"i": i, "text": "z" * 90} for i in range(2000)]])
def test_an_unchanged_value_is_sent_to_the_store_once(compile_graph: Compile, store: Any, value: Any) -> None:
    counting = Counting(store)
    app = compile_graph(loop(20), checkpointer=counting)
    assert app.invoke({"n": 0, "big": value}, thread_id="t").state == {"n": 20, "big": value}
    assert sum(counting.sent) < BIG * 1.5, counting.sent  # once, not 21 times
    assert max(counting.sent[1:]) < INLINE_MAX * 4  # after the input: only the small changes
    history = app.get_history("t")
    assert [s.state["n"] for s in history] == list(range(20, -1, -1))
    assert all(s.state["big"] == value for s in history)


def test_a_list_that_grows_at_its_end_shares_its_earlier_chunks(compile_graph: Compile, store: Any) -> None:
    counting = Counting(store)
    log = [f"entry {i:05d} " + "w" * 40 for i in range(CHUNK_ITEMS * 8 + 3)]
    app = compile_graph(
        loop(10, lambda s: {**s, "log": [*s["log"], f"step {s['n']}"]}), checkpointer=counting
    )
    result = app.invoke({"n": 0, "log": log}, thread_id="t")
    assert result.state["log"] == [*log, *(f"step {n}" for n in range(1, 11))]
    first = counting.sent[0]
    assert first > CHUNK_ITEMS * 8 * 50
    assert max(counting.sent[1:]) < first / 4  # each step sends the last chunk, not the list
    assert [len(s.state["log"]) for s in app.get_history("t")] == [len(log) + n for n in range(10, -1, -1)]


def test_updates_forks_and_resumes_reassemble_every_version(compile_graph: Compile, store: Any) -> None:
    big = {"doc": "d" * BIG, "items": list(range(3000))}
    g = loop(3, lambda s: {**s, "items": [*s["items"], s["n"]]})
    app = compile_graph(g, checkpointer=store, interrupt_after=["inc"])
    app.invoke({"n": 0, **big}, thread_id="t")
    first = app.get_state("t")
    app.update_state("t", {"doc": "changed", "n": 1})
    app.invoke(None, thread_id="t")
    assert app.get_state("t").state["doc"] == "changed"
    replay = app.invoke(None, thread_id="t", checkpoint_id=first.checkpoint_id)
    assert replay.state["doc"] == big["doc"] and replay.state["n"] == 2
    for snap in app.get_history("t"):
        assert snap.state["items"][:3000] == big["items"]
        assert snap.state["items"][3000:] == list(range(1, len(snap.state["items"]) - 2999))


def test_prune_removes_the_parts_no_checkpoint_refers_to(compile_graph: Compile, tmp_path: Path) -> None:
    path = tmp_path / "cp.db"
    store = SqliteCheckpointer(path)
    try:
        g = loop(4, lambda s: {**s, "big": "new" * BIG} if s["n"] == 2 else s)
        app = compile_graph(g, checkpointer=store)
        app.invoke({"n": 0, "big": "old" * BIG}, thread_id="t")
        parts = [k for k in blob_rows(path) if is_part_id(k)]
        assert len(parts) == 2  # the old value and the new one, each once
        assert store.prune("t", keep=1) > 0
        left = blob_rows(path)
        assert len([k for k in left if is_part_id(k)]) == 1
        assert sum(map(len, left.values())) < len("new" * BIG) * 1.2
        assert app.get_state("t").state == {"n": 4, "big": "new" * BIG}
    finally:
        store.close()


def test_a_value_equal_to_its_parents_but_of_another_type_is_stored_as_itself(
    compile_graph: Compile, store: Any
) -> None:
    changes = {1: 1.0, 2: True, 3: 1}
    app = compile_graph(loop(3, lambda s: {**s, "v": changes[s["n"]]}), checkpointer=store)
    app.invoke({"n": 0, "v": 1}, thread_id="t")
    kinds = [type(s.state["v"]) for s in app.get_history("t")]
    assert kinds == [int, bool, float, int]


def forms(n: int) -> dict[str, Any]:
    """The values of step `n`: equal by `==` to step n - 1's, but never alike (types, key order, sign)."""
    xs = [[1, 2], [1.0, 2.0], [True, 2], [1, 2.0], [1.0, True]][n]
    keyed = [{"a": 1, "b": 0.0}, {"b": 0.0, "a": 1}, {"b": -0.0, "a": 1}, {"a": True, "b": -0.0}][n % 4]
    inline = {"xs": xs, "keyed": keyed}
    return {"inline": inline, "part": [inline] * 100, "chunks": [xs[0]] * (CHUNK_ITEMS * 2 + 3)}


def test_a_value_equal_to_its_parents_but_not_alike_inside_is_stored_as_itself(
    compile_graph: Compile, store: Any
) -> None:
    """Inline, as a part or in chunks: ints made floats or bools, keys reordered, 0.0 made -0.0."""
    app = compile_graph(loop(4, lambda s: {**s, **forms(s["n"])}), checkpointer=store)
    app.invoke({"n": 0, **forms(0)}, thread_id="t")
    assert len(app.get_history("t")) == 5
    for snap in app.get_history("t"):
        assert same(snap.state, {"n": snap.state["n"], **forms(snap.state["n"])}), snap.state["n"]


PART_AAD = b"part"


@pytest.mark.slow  # a property over many drawn values
@given(pair=twins(st.dictionaries(st.sampled_from("abc"), values, min_size=1)), big=st.booleans())
def test_property_a_version_reads_back_type_for_type_whatever_its_parent_lends(
    pair: tuple[dict[str, Any], dict[str, Any]], big: bool
) -> None:
    """A child version encoded with its parent's layout as hints reads back exactly as it was made."""
    parent, child = pair
    if big:  # each value a part of its own
        parent, child = ({k: [v] * 300 for k, v in state.items()} for state in (parent, child))
    codec = PartCodec(MsgpackSerializer(), "t", PART_AAD)
    layout, parts = encode_state(codec, parent, [], lambda _: PART_AAD)
    child_layout, child_parts = encode_state(codec, child, [(parent, layout)], lambda _: PART_AAD)
    stored = {**parts, **child_parts}
    decoded = {p: codec.loads(codec.open(p, data, PART_AAD)) for p, data in stored.items()}
    assert same(assemble(codec, child_layout, decoded, "the child"), child)


@dataclasses.dataclass(eq=False)
class Grid:
    cells: list[int]

    def __eq__(self, other: object) -> Any:  # like numpy: elementwise, never a bool
        return [a == b for a, b in zip(self.cells, getattr(other, "cells", []), strict=False)]

    __hash__ = None  # type: ignore[assignment]


def test_a_value_whose_eq_is_not_a_bool_is_always_stored_again(
    compile_graph: Compile, store_factory: Callable[..., Any]
) -> None:
    store = store_factory(serializer=MsgpackSerializer(allowed=[Grid]))
    grids = {n: Grid([n] * 400) for n in range(4)}
    app = compile_graph(loop(3, lambda s: {**s, "g": grids[s["n"]]}), checkpointer=store)
    app.invoke({"n": 0, "g": grids[0]}, thread_id="t")
    assert [s.state["g"].cells[0] for s in app.get_history("t")] == [3, 2, 1, 0]


class Recording:
    """A serializer that records the size of everything it serializes."""

    def __init__(self) -> None:
        self.inner = MsgpackSerializer()
        self.sizes: list[int] = []

    def dumps(self, value: Any, *, aad: bytes = b"") -> bytes:
        data = self.inner.dumps(value, aad=aad)
        self.sizes.append(len(data))
        return data

    def loads(self, data: bytes, *, aad: bytes = b"") -> Any:
        return self.inner.loads(data, aad=aad)


def test_an_unchanged_value_is_not_serialized_again(compile_graph: Compile) -> None:
    serializer = Recording()
    value = [{"i": i, "text": "t" * 50} for i in range(4000)]  # copied for each task, equal, not identical
    app = compile_graph(loop(10), checkpointer=MemoryCheckpointer(serializer=serializer))
    app.invoke({"n": 0, "big": value, "doc": "d" * BIG}, thread_id="t")
    big = [size for size in serializer.sizes if size > INLINE_MAX * 4]
    assert len(big) == 2 + len(value) // CHUNK_ITEMS  # the input's document and chunks, once


@pytest.mark.threads_only(
    "it measures this process's memory from inside a vertex, which runs elsewhere on Ray"
)
def test_saving_an_unchanged_value_takes_memory_for_the_changes_only(compile_graph: Compile) -> None:
    seen: list[int] = []

    def step(s: dict[str, Any], ctx: ag.Context) -> dict[str, Any]:
        if ctx.step == 2:  # the input is stored by now: what is held from here is the store's
            tracemalloc.reset_peak()
            seen.append(tracemalloc.get_traced_memory()[0])
        if ctx.step == 20:
            seen.append(tracemalloc.get_traced_memory()[1])
        return {**s, "n": s["n"] + 1}

    g: ag.Graph = ag.Graph()
    g.add_vertex("inc", step)
    g.add_edge(ag.START, "inc")
    g.add_conditional_edges("inc", lambda s: "inc" if s["n"] < 20 else ag.END)
    app = compile_graph(g, checkpointer=MemoryCheckpointer())
    big = b"m" * (4 << 20)
    tracemalloc.start()
    try:
        app.invoke({"n": 0, "big": big}, thread_id="t")
    finally:
        tracemalloc.stop()
    held, peak = seen
    assert peak - held < 1 << 20, f"{peak - held} bytes more at the peak while saving 18 supersteps"


# -- authenticity of parts ----------------------------------------------------------------------


def encrypted_store(path: Path, key: bytes) -> SqliteCheckpointer:
    return SqliteCheckpointer(path, serializer=EncryptedSerializer(MsgpackSerializer(), key))


def test_an_encrypted_part_swapped_for_another_is_refused(compile_graph: Compile, tmp_path: Path) -> None:
    path = tmp_path / "secret.db"
    store = encrypted_store(path, EncryptedSerializer.generate_key())
    try:
        app = compile_graph(loop(2), checkpointer=store)
        app.invoke({"n": 0, "a": "a" * BIG, "b": "b" * BIG}, thread_id="t")
        first, second = sorted(k for k in blob_rows(path) if is_part_id(k))
        with sqlite3.connect(path) as raw:
            data = dict(raw.execute("SELECT blob_id, data FROM actorgraph_blobs").fetchall())
            raw.execute("UPDATE actorgraph_blobs SET data = ? WHERE blob_id = ?", (data[second], first))
        with pytest.raises(ag.SerializationError, match="authentication"):
            app.get_state("t")
    finally:
        store.close()


def test_an_encrypted_part_moved_to_another_thread_is_refused(compile_graph: Compile, tmp_path: Path) -> None:
    path = tmp_path / "secret.db"
    store = encrypted_store(path, EncryptedSerializer.generate_key())
    try:
        app = compile_graph(loop(1), checkpointer=store)
        for thread in ("a", "b"):
            app.invoke({"n": 0, "same": "s" * BIG}, thread_id=thread)
        (part,) = (k for k in blob_rows(path, "a") if is_part_id(k))
        assert part in blob_rows(path, "b")  # one key: equal values, equal addresses
        with sqlite3.connect(path) as raw:
            moved = blob_rows(path, "a")[part]
            raw.execute(
                "UPDATE actorgraph_blobs SET data = ? WHERE thread_id = 'b' AND blob_id = ?", (moved, part)
            )
        assert app.get_state("a").state["same"] == "s" * BIG
        with pytest.raises(ag.SerializationError, match="authentication"):
            app.get_state("b")
    finally:
        store.close()


def test_encrypted_part_addresses_are_keyed(compile_graph: Compile, tmp_path: Path) -> None:
    value = {"n": 0, "doc": "k" * BIG}
    found = []
    for key in (EncryptedSerializer.generate_key(), EncryptedSerializer.generate_key(), None):
        path = tmp_path / f"{len(found)}.db"
        store = SqliteCheckpointer(path) if key is None else encrypted_store(path, key)
        with store:
            compile_graph(loop(1), checkpointer=store).invoke(value, thread_id="t")
            found.append({k for k in blob_rows(path) if is_part_id(k)})
    plain = MsgpackSerializer().dumps("k" * BIG, aad=aad("t", "part"))
    assert found[2] == {"p:" + hashlib.sha256(plain).digest()[:16].hex()}  # unkeyed: the plaintext's digest
    assert found[0].isdisjoint(found[1]) and found[0].isdisjoint(found[2])


def test_a_plain_part_swapped_for_another_is_refused(compile_graph: Compile, tmp_path: Path) -> None:
    path = tmp_path / "plain.db"
    with SqliteCheckpointer(path) as store:
        app = compile_graph(loop(1), checkpointer=store)
        app.invoke({"n": 0, "a": "a" * BIG, "b": "b" * BIG}, thread_id="t")
        first, second = sorted(k for k in blob_rows(path) if is_part_id(k))
        with sqlite3.connect(path) as raw:
            data = blob_rows(path)[second]
            raw.execute("UPDATE actorgraph_blobs SET data = ? WHERE blob_id = ?", (data, first))
        with pytest.raises(ag.SerializationError, match="does not match its content address") as info:
            app.get_state("t")
        assert first in str(info.value) and "'t'" in str(info.value)


@dataclasses.dataclass(frozen=True)
class Page:
    text: str


def test_the_allowlist_applies_to_each_part(
    compile_graph: Compile, store_factory: Callable[..., Any]
) -> None:
    wide = store_factory(serializer=MsgpackSerializer(allowed=[Page]))
    app = compile_graph(loop(1), checkpointer=wide)
    app.invoke({"n": 0, "page": Page("p" * BIG), "plain": "q" * BIG}, thread_id="t")
    if isinstance(wide, MemoryCheckpointer):
        wide.serializer = MsgpackSerializer()
        narrow = wide
    else:
        narrow = store_factory()
    with pytest.raises(ag.SerializationError, match="Page") as info:
        compile_graph(loop(1), checkpointer=narrow).get_state("t")
    assert "nothing was imported" in str(info.value)


# -- checkpoints of format 1 ----------------------------------------------------------------------


def write_format_1(store: Any, thread: str) -> None:
    """A checkpoint as actorgraph wrote it before manifests: the input, about to run `inc`."""
    serializer = store.serializer
    version, checkpoint = "0abc/0:input", f"{1:020x}-000000000"
    record = {
        "format": 1,
        "position": {"step": 0, "inbox": [["inc", version, "__start__", False, 0, ""]], "joins": {},
                     "finished": [], "values": {}},
        "nodes": {version: [[], 0]},
        "pauses": [],
    }  # fmt: skip
    data = serializer.dumps(record, aad=aad(thread, checkpoint))
    blob = serializer.dumps({"n": 0, "big": "f" * BIG}, aad=blob_aad(thread, version))
    row = ag.checkpoint.CheckpointRow(thread, checkpoint, None, 0, "input", "running", 1.0, data, (version,))
    store.put(row, blobs={version: blob}, expect_head=None)


def test_a_format_1_checkpoint_is_read_resumed_and_pruned(compile_graph: Compile, store: Any) -> None:
    assert FORMAT == 2
    write_format_1(store, "old")
    app = compile_graph(loop(3), checkpointer=store)
    assert app.get_state("old").state == {"n": 0, "big": "f" * BIG}
    assert app.invoke(None, thread_id="old").state == {"n": 3, "big": "f" * BIG}
    store.prune("old", keep=1)
    assert app.get_state("old").state == {"n": 3, "big": "f" * BIG}
    assert app.invoke({"n": 1}, thread_id="old").state == {"n": 3, "big": "f" * BIG}


@pytest.mark.slow
@pytest.mark.parametrize("durability", ["sync", "step", "exit"])
def test_every_durability_keeps_the_parts_its_checkpoints_need(
    compile_graph: Compile, store: Any, durability: str
) -> None:
    # past 64 versions the writer forgets what no live version needs: parts still referenced must stay
    change = lambda s: {**s, "doc": f"version {s['n'] // 30} " * 5000} if s["n"] % 30 == 0 else s
    app = compile_graph(loop(100, change), checkpointer=store)
    result = app.invoke(
        {"n": 0, "doc": "first " * 5000, "keep": "k" * BIG}, thread_id="t", durability=durability
    )
    assert result.state["doc"] == "version 3 " * 5000
    for snap in app.get_history("t"):
        assert snap.state["keep"] == "k" * BIG
    store.prune("t", keep=1)
    assert app.get_state("t").state == result.state
    assert app.invoke(None, thread_id="t").state == result.state
