"""A node cache entry damaged outside actorgraph is a miss with one warning, never a bare error."""

from __future__ import annotations

import re
import sqlite3
import warnings
from pathlib import Path
from typing import Any

import pytest

import actorgraph as ag
from actorgraph._model.policy import CachedOutcome
from actorgraph.checkpoint import MsgpackSerializer, PickleSerializer

MSGPACK = MsgpackSerializer()


def entry(returned: Any, **changed: Any) -> bytes:
    """The bytes of an entry, as the cache's serializer writes them, with some fields changed."""
    fields = {"format": 1, "returned": returned, "value": None, **changed}
    return MSGPACK.dumps({k: v for k, v in fields.items() if v is not DROP})


DROP = object()

# (what is stored, what the warning says is wrong)
DAMAGES = [
    pytest.param("text instead of bytes", "stored value is str", id="text"),
    pytest.param(12, "stored value is int", id="int"),
    pytest.param(b"", "cannot be loaded: these bytes are too short", id="empty"),
    pytest.param(b"AGm\x01\xc1", "cannot be loaded: the stored data is damaged or truncated", id="garbage"),
    pytest.param(
        PickleSerializer().dumps({"format": 1}),
        "cannot be loaded: these bytes were written by PickleSerializer",
        id="pickle",
    ),
    pytest.param(MSGPACK.dumps(7), "holds a int, not an entry", id="an-int-entry"),
    pytest.param(MSGPACK.dumps([1, 2, 3]), "holds a list, not an entry", id="a-list-entry"),
    pytest.param(entry(["state", 1], value=DROP), "holds the fields 'format', 'returned'", id="no-value"),
    pytest.param(entry(["state", 1], extra=1), "'extra'", id="extra-field"),
    pytest.param(entry(["state", 1], format=2), "format 2", id="format-2"),
    pytest.param(entry(["state", 1], format=True), "format True", id="format-true"),
    pytest.param(entry(["oops", 1]), "form this version never writes \\('oops'\\)", id="unknown-kind"),
    pytest.param(entry("state"), "form this version never writes \\('str'\\)", id="returned-str"),
    pytest.param(entry([]), "form this version never writes \\('list'\\)", id="returned-empty"),
    pytest.param(entry(["state"]), "never writes", id="state-short"),
    pytest.param(entry(["send", 3, {}]), "never writes", id="send-int-vertex"),
    pytest.param(entry(["command", None, [5], False, None]), "goto holds int 5", id="goto-int"),
    pytest.param(entry(["command", None, [["send", "v"]], False, None]), "goto holds list", id="send-short"),
    pytest.param(
        entry(["command", None, [["send", 1, {}]], False, None]),
        "goto holds list",
        id="send-int-vertex-in-goto",
    ),
    pytest.param(entry(["command", None, [], True, None]), "single goto holds 0 targets", id="single-none"),
    pytest.param(
        entry(["command", None, ["a", "b"], True, None]), "single goto holds 2 targets", id="single-two"
    ),
    pytest.param(entry(["command", None, "a", True, None]), "never writes", id="goto-str"),
    pytest.param(entry(["command", None, ["a"], 1, None]), "never writes", id="single-int"),
    pytest.param(entry(["command", None, ["a"], False, 7]), "graph is a int", id="graph-int"),
]


def stored(path: Path, sql: str, args: tuple[Any, ...]) -> None:
    """Change the cache's file as another program would."""
    with sqlite3.connect(path) as conn:
        conn.execute(sql, args)
    conn.close()


@pytest.fixture
def cache(tmp_path: Path) -> Any:
    with ag.SqliteCache(tmp_path / "cache.db") as made:
        made.put("graph/vertex", "k", CachedOutcome({"kept": 1}, None), None)
        yield made


def one_warning(cache: Any) -> tuple[Any, str]:
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        got = cache.get("graph/vertex", "k")
    assert [w.category for w in seen] == [ag.CacheWarning], [str(w.message) for w in seen]
    return got, str(seen[0].message)


@pytest.mark.parametrize(("value", "wrong"), DAMAGES)
def test_a_damaged_entry_is_a_miss_with_one_warning_saying_what_is_wrong(
    cache: Any, value: Any, wrong: str
) -> None:
    stored(cache.path, "UPDATE actorgraph_cache SET value = ?", (value,))
    got, message = one_warning(cache)
    assert got is None
    assert f"SqliteCache {str(cache.path)!r}" in message
    assert "vertex 'vertex' (graph 'graph')" in message
    assert "checkpointer" not in message
    assert "counts as a miss" in message
    assert re.search(wrong, message), message
    cache.put("graph/vertex", "k", CachedOutcome({"again": 2}, None), None)  # replaced
    assert cache.get("graph/vertex", "k") == CachedOutcome({"again": 2}, None)


def test_an_entry_with_a_text_expiry_is_a_miss(cache: Any) -> None:
    stored(cache.path, "UPDATE actorgraph_cache SET expires_at = 'tomorrow'", ())
    got, message = one_warning(cache)
    assert got is None
    assert "expiry time is stored as text" in message


def test_an_entry_encrypted_with_another_key_is_a_miss(tmp_path: Path) -> None:
    pytest.importorskip("cryptography")
    from actorgraph.checkpoint import EncryptedSerializer

    path = tmp_path / "cache.db"
    with ag.SqliteCache(
        path, serializer=EncryptedSerializer(MSGPACK, EncryptedSerializer.generate_key())
    ) as a:
        a.put("graph/vertex", "k", CachedOutcome(1, None), None)
    with ag.SqliteCache(
        path, serializer=EncryptedSerializer(MSGPACK, EncryptedSerializer.generate_key())
    ) as b:
        got, message = one_warning(b)
    assert got is None
    assert "failed authentication" in message
    assert "checkpoint" not in message


@pytest.mark.threads_only("the vertex counts its calls in this process's memory")
def test_a_run_over_a_damaged_entry_calls_the_vertex_and_replaces_the_entry(tmp_path: Path) -> None:
    calls: list[int] = []

    def double(state: dict[str, int]) -> dict[str, int]:
        calls.append(state["n"])
        return {"n": state["n"] * 2}

    g: ag.Graph = ag.Graph(name="doubling", returns="update")
    g.add_vertex("double", double, cache=ag.CachePolicy())
    g.add_edge(ag.START, "double")
    g.add_edge("double", ag.END)
    with ag.SqliteCache(tmp_path / "cache.db") as cache, g.compile(cache=cache) as app:
        assert app.invoke({"n": 2}).state == {"n": 4}
        stored(cache.path, "UPDATE actorgraph_cache SET value = ?", (MSGPACK.dumps({"format": 1}),))
        with pytest.warns(ag.CacheWarning, match=r"vertex 'double' \(graph 'doubling'\).*fields 'format'"):
            assert app.invoke({"n": 2}).state == {"n": 4}
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            assert app.invoke({"n": 2}).state == {"n": 4}  # a hit on the replaced entry
    assert calls == [2, 2]
