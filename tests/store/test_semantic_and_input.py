"""Every store: semantic search with a toy embedding, and input a store must refuse or survive."""

from __future__ import annotations

import math

import pytest
from store_kinds import INDEX, KINDS, Clock, embed, opener

from actorgraph._model.errors import ConfigError
from actorgraph.store import MemoryStore


@pytest.fixture(params=KINDS)
def make(request, tmp_path):
    yield from opener(request.param, request, tmp_path)


# -- semantic search -------------------------------------------------------------------------------


def _cos(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True)) / (math.hypot(*a) * math.hypot(*b))


def test_a_query_ranks_by_cosine_similarity(make):
    store = make(index=INDEX, clock=Clock())
    store.put(("pets",), "c", {"text": "cat cat"})
    store.put(("pets",), "d", {"text": "dog"})
    store.put(("pets",), "cd", {"text": "cat dog"})
    store.put(("pets",), "none", {"other": "cat"})  # no "text": stored, not embedded
    store.put(("cars",), "car", {"text": "car"})
    found = store.search(("pets",), query="cat")
    assert [i.key for i in found] == ["c", "cd", "d", "none"]
    query = [1, 0, 0, 0.1]
    for item, vector in zip(found, [[2, 0, 0, 0.1], [1, 1, 0, 0.1], [0, 1, 0, 0.1]], strict=False):
        assert item.score == pytest.approx(_cos(query, vector))
    assert found[-1].score is None
    assert [i.key for i in store.search((), query="car", limit=1)] == ["car"]
    assert [i.key for i in store.search(("pets",), query="dog", limit=2, offset=1)] == ["cd", "c"]


def test_a_query_with_a_filter_ranks_only_what_the_filter_keeps(make):
    store = make(index=INDEX)
    store.put(("p",), "c", {"text": "cat", "kind": "a"})
    store.put(("p",), "cc", {"text": "cat cat dog", "kind": "b"})
    store.put(("p",), "d", {"text": "dog", "kind": "b"})
    assert [i.key for i in store.search(("p",), query="cat", filter={"kind": "b"})] == ["cc", "d"]


def test_the_whole_value_is_embedded_by_default_and_fields_may_be_dotted(make):
    whole = make(index={"embed": embed, "dims": 4})
    whole.put(("p",), "k", {"a": "dog", "b": {"c": "dog"}})
    assert whole.search(("p",), query="dog")[0].score == pytest.approx(_cos([0, 2, 0, 0.1], [0, 1, 0, 0.1]))
    deep = MemoryStore(index={"embed": embed, "dims": 4, "fields": ["meta.title", "tags.1"]})
    deep.put(("p",), "k", {"meta": {"title": "car"}, "tags": ["dog", "cat"]})
    deep.put(("p",), "j", {"meta": "not a dict", "tags": ["only one"]})
    found = deep.search(("p",), query="cat")
    assert found[0].key == "k"
    assert found[0].score == pytest.approx(1.0)
    assert found[1].score is None


def test_a_replaced_or_deleted_value_drops_its_old_embedding(make):
    store = make(index=INDEX)
    store.put(("p",), "k", {"text": "cat"})
    store.put(("p",), "k", {"text": "dog"})
    assert store.search(("p",), query="cat")[0].score == pytest.approx(_cos([0, 1, 0, 0.1], [1, 0, 0, 0.1]))
    store.put(("p",), "k", {"other": 1})
    assert store.search(("p",), query="cat")[0].score is None
    store.delete(("p",), "k")
    assert store.search(("p",), query="cat") == []


@pytest.mark.parametrize(
    ("bad", "match"),
    [
        (lambda texts: [[1.0, 2.0]] * len(texts), "dims is 4"),
        (lambda texts: [], "vectors for 1 texts"),
        (lambda texts: [[1.0, float("nan"), 0.0, 0.0]], "finite"),
        (lambda texts: [["a", "b", "c", "d"]], "not a list of numbers"),
    ],
)
def test_an_embedding_that_breaks_its_promise_is_refused_and_nothing_is_stored(make, bad, match):
    store = make(index={"embed": bad, "dims": 4})
    with pytest.raises(ConfigError, match=match):
        store.put(("p",), "k", {"text": "cat"})
    assert store.get(("p",), "k") is None


@pytest.mark.parametrize(
    "index",
    [
        {"embed": "not callable", "dims": 4},
        {"embed": embed, "dims": 0},
        {"embed": embed},
        {"embed": embed, "dims": 4, "fields": "text"},
        {"embed": embed, "dims": 4, "extra": 1},
        [embed, 4],
    ],
)
def test_a_malformed_index_is_refused_when_the_store_is_made(make, index):
    with pytest.raises(ConfigError, match="index"):
        make(index=index)


# -- hostile input ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "namespace",
    [(), "users", ["users"], ("",), ("a.b",), ("a", 1), ("a", None), ("a\x00",), ("x" * 1100,)],
)
def test_a_bad_namespace_is_refused_everywhere(make, namespace):
    store = make()
    for call in (
        lambda: store.put(namespace, "k", {}),
        lambda: store.get(namespace, "k"),
        lambda: store.delete(namespace, "k"),
    ):
        with pytest.raises(ConfigError, match="namespace"):
            call()


@pytest.mark.parametrize("key", ["", 7, None, "a\x00b", "k" * 1025])
def test_a_bad_key_is_refused(make, key):
    with pytest.raises(ConfigError, match="key"):
        make().put(("a",), key, {})


@pytest.mark.parametrize(
    "value", [{"s": {1, 2}}, {"o": object()}, {"b": b"bytes"}, {"x": float("nan")}, {"x": float("inf")}]
)
def test_a_value_that_is_not_json_is_refused_naming_the_key(make, value):
    store = make()
    with pytest.raises(ConfigError, match=r"'the-key'.*JSON"):
        store.put(("a",), "the-key", value)
    assert store.get(("a",), "the-key") is None


@pytest.mark.parametrize(
    ("value", "path"),
    [
        ({1: "one", "1": "uno"}, "[1]"),
        ({"v": {True: "yes"}}, "['v'][True]"),
        ({"v": [{"a": {None: 2}}]}, "['v'][0]['a'][None]"),
        ({"v": ({2.5: "x"},)}, "['v'][0][2.5]"),
        ({"ok": {"s": 1}, "deep": [[{"fine": 1}, {0: "zero"}]]}, "['deep'][0][1][0]"),
    ],
)
def test_a_key_that_is_not_a_string_is_refused_naming_its_path(make, value, path):
    store = make()
    with pytest.raises(ConfigError, match="string keys") as refused:
        store.put(("a",), "the-key", value)
    assert f"at {path}" in str(refused.value)
    assert "'the-key'" in str(refused.value)
    assert store.get(("a",), "the-key") is None


@pytest.mark.parametrize(
    ("call", "argument"),
    [
        (lambda store: store.put(("a",), "k", {"v": 1}, ttl=10**400), "ttl"),
        (lambda store: store.put(("a",), "k", {"v": 1}, ttl=-(10**400)), "ttl"),
        (lambda store: store.search(("a",), limit=2**63), "limit"),
        (lambda store: store.search(("a",), offset=2**63), "offset"),
        (lambda store: store.search(("a",), filter={"v": 1}, offset=2**63), "offset"),
        (lambda store: store.list_namespaces(limit=2**63), "limit"),
        (lambda store: store.list_namespaces(offset=2**64), "offset"),
    ],
)
def test_numbers_past_what_a_database_holds_are_refused_naming_the_argument(make, call, argument):
    store = make()
    store.put(("a",), "kept", {"v": 1})
    with pytest.raises(ConfigError, match=f"^{argument}="):
        call(store)
    assert store.get(("a",), "k") is None


def test_the_largest_limit_and_offset_a_database_holds_are_taken(make):
    store = make()
    store.put(("a",), "k", {"v": 1})
    most = 2**63 - 1
    assert [i.key for i in store.search(("a",), limit=most)] == ["k"]
    assert store.search(("a",), limit=most, offset=most) == []
    assert store.search(("a",), filter={"v": 1}, limit=most, offset=most) == []
    assert store.list_namespaces(limit=most, offset=most) == []


@pytest.mark.parametrize("value", [[1, 2], "text", 3, ("a", "b")])
def test_a_value_that_is_not_a_dict_is_refused(make, value):
    with pytest.raises(ConfigError, match="keeps dicts"):
        make().put(("a",), "k", value)


def test_a_deeply_nested_value_is_refused_not_crashed(make):
    value: dict = {}
    inner = value
    for _ in range(100_000):
        inner["x"] = {}
        inner = inner["x"]
    with pytest.raises(ConfigError, match="JSON"):
        make().put(("a",), "k", value)


def test_a_huge_value_round_trips(make):
    store = make()
    value = {"blob": "x" * 5_000_000, "items": list(range(100_000))}
    store.put(("a",), "big", value)
    assert store.get(("a",), "big").value == value


def test_quotes_wildcards_and_unicode_are_plain_data(make):
    store = make()
    odd = ("it's", "50%_off", "'; DROP TABLE actorgraph_store; --", "日本語", "a/b\\c")
    store.put(odd, "key'\"%_*", {"text": "\u0000 nul inside a string", "emoji": "🙂"})
    store.put(("50%_off",), "other", {})
    assert store.get(odd, "key'\"%_*").value == {"text": "\u0000 nul inside a string", "emoji": "🙂"}
    assert [i.namespace for i in store.search(odd[:2])] == [odd]
    assert store.search(("50%",)) == []
    assert store.list_namespaces(prefix=odd[:1]) == [odd]
