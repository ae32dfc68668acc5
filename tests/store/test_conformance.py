"""One conformance suite for every memory store (memory, SQLite, PostgreSQL)."""

from __future__ import annotations

import asyncio
import datetime as dt

import pytest
from store_kinds import KINDS, Clock, at_once, opener

from actorgraph._model.errors import ConfigError
from actorgraph.store import BaseStore, Item, SearchItem
from actorgraph.store._base import SWEEP_EVERY


@pytest.fixture(params=KINDS)
def make(request, tmp_path):
    yield from opener(request.param, request, tmp_path)


@pytest.fixture
def clock():
    return Clock()


@pytest.fixture
def store(make, clock) -> BaseStore:
    return make(clock=clock)


# -- put, get, delete ----------------------------------------------------------------------------


def test_put_then_get_returns_the_item(store, clock):
    store.put(("users", "alice"), "prefs", {"theme": "dark", "size": [1, 2.5], "on": True, "none": None})
    item = store.get(("users", "alice"), "prefs")
    assert type(item) is Item
    assert item.namespace == ("users", "alice")
    assert item.key == "prefs"
    assert item.value == {"theme": "dark", "size": [1, 2.5], "on": True, "none": None}
    assert item.created_at == item.updated_at == dt.datetime.fromtimestamp(clock.now, dt.UTC)
    assert item.created_at.tzinfo is not None


def test_a_second_put_replaces_the_value_and_keeps_created_at(store, clock):
    store.put(("n",), "k", {"v": 1})
    first = clock.now
    clock.advance(5)
    store.put(("n",), "k", {"w": 2})
    item = store.get(("n",), "k")
    assert item.value == {"w": 2}
    assert item.created_at.timestamp() == first
    assert item.updated_at.timestamp() == first + 5


def test_get_of_a_missing_key_or_namespace_is_none(store):
    store.put(("a",), "k", {"v": 1})
    assert store.get(("a",), "other") is None
    assert store.get(("b",), "k") is None
    assert store.get(("a", "k"), "k") is None


def test_delete_and_put_none_remove_the_value(store):
    store.put(("a",), "k1", {"v": 1})
    store.put(("a",), "k2", {"v": 2})
    store.delete(("a",), "k1")
    store.put(("a",), "k2", None)
    store.delete(("a",), "never-there")
    assert store.get(("a",), "k1") is None
    assert store.get(("a",), "k2") is None
    assert store.search(()) == []
    assert store.list_namespaces() == []


def test_values_are_copies(store):
    value = {"list": [1, 2]}
    store.put(("a",), "k", value)
    value["list"].append(3)
    got = store.get(("a",), "k")
    got.value["list"].append(4)
    assert store.get(("a",), "k").value == {"list": [1, 2]}


# -- ttl -------------------------------------------------------------------------------------------


def test_an_expired_value_is_never_returned(store, clock):
    store.put(("a",), "short", {"v": 1}, ttl=10)
    store.put(("a", "b"), "td", {"v": 2}, ttl=dt.timedelta(seconds=10))
    store.put(("a",), "long", {"v": 3}, ttl=100)
    clock.advance(9.9)
    assert store.get(("a",), "short") is not None
    assert len(store.search(("a",))) == 3
    clock.advance(0.1)
    assert store.get(("a",), "short") is None
    assert store.get(("a", "b"), "td") is None
    assert [i.key for i in store.search(("a",))] == ["long"]
    assert [i.key for i in store.search(("a",), filter={"v": {"$gte": 1}})] == ["long"]
    assert store.list_namespaces() == [("a",)]


def test_expired_values_are_swept_and_a_new_put_starts_afresh(store, clock):
    store.put(("a",), "k", {"v": 1}, ttl=1)
    store.put(("a",), "kept", {"v": 1})
    clock.advance(2)
    assert store.sweep() == 1
    assert store.sweep() == 0
    store.put(("a",), "k", {"v": 2})
    assert store.get(("a",), "k").created_at.timestamp() == clock.now
    store.put(("b",), "k", {"v": 1}, ttl=1)
    clock.advance(SWEEP_EVERY)
    store.put(("c",), "k", {"v": 1})  # a put a minute later sweeps by itself
    assert store.sweep() == 0
    assert store.get(("a",), "kept") is not None


def test_a_put_over_an_expired_value_gets_a_new_created_at(store, clock):
    store.put(("a",), "k", {"v": 1}, ttl=1)
    clock.advance(3)
    store.put(("a",), "k", {"v": 2})
    item = store.get(("a",), "k")
    assert item.created_at == item.updated_at


@pytest.mark.parametrize("ttl", [0, -1, "10", float("nan"), float("inf"), True, dt.timedelta(0)])
def test_a_bad_ttl_is_refused(store, ttl):
    with pytest.raises(ConfigError, match="ttl"):
        store.put(("a",), "k", {"v": 1}, ttl=ttl)
    assert store.get(("a",), "k") is None


def test_a_real_short_ttl_expires(make):
    import time

    store = make()
    store.put(("a",), "k", {"v": 1}, ttl=0.05)
    time.sleep(0.2)
    assert store.get(("a",), "k") is None


# -- search: order, prefix, paging, filters ---------------------------------------------------------


def _fill(store, clock) -> None:
    for i in range(7):
        clock.advance(1)
        ns = ("docs", "even" if i % 2 == 0 else "odd")
        store.put(ns, f"d{i}", {"n": i, "kind": "note" if i < 4 else "task", "tag": ns[1]})


def test_search_is_newest_first_and_pages(store, clock):
    _fill(store, clock)
    found = store.search(("docs",))
    assert all(type(i) is SearchItem and i.score is None for i in found)
    assert [i.key for i in found] == [f"d{i}" for i in range(6, -1, -1)]
    assert [i.key for i in store.search(("docs",), limit=3)] == ["d6", "d5", "d4"]
    assert [i.key for i in store.search(("docs",), limit=3, offset=3)] == ["d3", "d2", "d1"]
    assert [i.key for i in store.search(("docs",), limit=3, offset=6)] == ["d0"]
    assert store.search(("docs",), offset=7) == []


def test_same_time_ties_are_ordered_by_namespace_and_key(store):
    for key in ["b", "a", "c"]:
        store.put(("x", "2"), key, {})
        store.put(("x", "1"), key, {})
    keys = [(i.namespace[1], i.key) for i in store.search(("x",))]
    assert keys == [("1", "a"), ("1", "b"), ("1", "c"), ("2", "a"), ("2", "b"), ("2", "c")]


def test_a_prefix_matches_whole_labels(store):
    store.put(("ab",), "k", {})
    store.put(("a",), "k", {})
    store.put(("a", "b"), "k", {})
    store.put(("a-b",), "k", {})
    store.put(("a/",), "k", {})
    assert sorted(i.namespace for i in store.search(("a",))) == [("a",), ("a", "b")]
    assert [i.namespace for i in store.search(("a", "b"))] == [("a", "b")]
    assert len(store.search(())) == 5


def test_filters_on_top_level_fields(store, clock):
    _fill(store, clock)

    def keys(**options):
        return sorted(i.key for i in store.search(("docs",), **options))

    assert keys(filter={"kind": "note"}) == ["d0", "d1", "d2", "d3"]
    assert keys(filter={"kind": "note", "tag": "odd"}) == ["d1", "d3"]
    assert keys(filter={"n": {"$gt": 4}}) == ["d5", "d6"]
    assert keys(filter={"n": {"$gte": 2, "$lt": 4}}) == ["d2", "d3"]
    assert keys(filter={"n": {"$lte": 1}}) == ["d0", "d1"]
    assert keys(filter={"n": {"$ne": 3}, "kind": {"$eq": "note"}}) == ["d0", "d1", "d2"]
    assert keys(filter={"n": {"$gt": "a string"}}) == []  # no order between numbers and strings
    assert keys(filter={"missing": {"$ne": 1}}) == [f"d{i}" for i in range(7)]
    assert keys(filter={"missing": None}) == []
    assert [i.key for i in store.search(("docs",), filter={"kind": "task"}, limit=2, offset=1)] == [
        "d5",
        "d4",
    ]


def test_string_filters_narrowed_in_the_database_still_match_exactly(store):
    store.put(("a",), "nul", {"s": "x\u0000y", "t": "x"})
    store.put(("a",), "num", {"s": 1, "t": "1"})
    store.put(("a",), "str", {"s": "1", 'we"ird\\': "q", "t": "x"})
    store.put(("a",), "list", {"s": ["1"], "t": "x"})

    def keys(conditions):
        return sorted(i.key for i in store.search(("a",), filter=conditions))

    assert keys({"s": "1"}) == ["str"]
    assert keys({"s": {"$eq": "1"}}) == ["str"]
    assert keys({"s": "x\u0000y"}) == ["nul"]
    assert keys({"t": "x"}) == ["list", "nul", "str"]
    assert keys({"t": "x", "s": {"$ne": "1"}}) == ["list", "nul"]
    assert keys({'we"ird\\': "q"}) == ["str"]
    assert keys({"s": 1}) == ["num"]
    store.put(("a",), "true", {"s": True, "f": 1.0, "big": 2**70})
    assert keys({"s": 1.0}) == ["num", "true"]  # Python's ==: True == 1 == 1.0
    assert keys({"s": True}) == ["num", "true"]
    assert keys({"f": 1}) == ["true"]
    assert keys({"big": 2**70}) == ["true"]
    assert keys({"s": {"$eq": 1}, "t": "1"}) == ["num"]


ODD_NAMES = [
    "a\tb",
    "a\nb",
    "a\x01b",
    "\x1f",
    "a\\u0041",
    "a\\tb",
    "\\",
    'q"q',
    "",
    "a.b",
    "é",
    "\x7f",
    "\u2028",
]


@pytest.mark.parametrize("name", ODD_NAMES)
def test_a_filter_finds_a_field_whatever_its_name_holds(store, name):
    store.put(("a",), "x", {name: "x", "n": 1})
    store.put(("a",), "y", {name: "y"})
    store.put(("a",), "one", {name: 1})
    store.put(("a",), "other", {"other": "x"})

    def keys(conditions):
        return sorted(i.key for i in store.search(("a",), filter=conditions))

    assert keys({name: "x"}) == ["x"]
    assert keys({name: {"$eq": "y"}}) == ["y"]
    assert keys({name: 1}) == ["one"]
    assert keys({name: "x", "n": 1}) == ["x"]


def test_a_filter_compares_nested_values_whole(store):
    store.put(("a",), "k", {"meta": {"x": [1, 2]}})
    assert len(store.search(("a",), filter={"meta": {"x": [1, 2]}})) == 1
    assert store.search(("a",), filter={"meta": {"x": [1]}}) == []


@pytest.mark.parametrize(
    ("options", "match"),
    [
        ({"filter": {"n": {"$regex": "x"}}}, r"\$regex"),
        ({"filter": ["n"]}, "filter must be a dict"),
        ({"limit": 0}, "limit"),
        ({"limit": "3"}, "limit"),
        ({"offset": -1}, "offset"),
        ({"query": "cat"}, "index="),
    ],
)
def test_bad_search_options_are_refused(store, options, match):
    with pytest.raises(ConfigError, match=match):
        store.search(("a",), **options)


# -- namespaces ------------------------------------------------------------------------------------


def test_list_namespaces_with_prefix_suffix_depth_and_paging(store):
    for ns in [
        ("users", "alice", "memories"),
        ("users", "bob", "memories"),
        ("users", "bob", "prefs"),
        ("docs",),
    ]:
        store.put(ns, "k", {})
    assert store.list_namespaces() == [
        ("docs",),
        ("users", "alice", "memories"),
        ("users", "bob", "memories"),
        ("users", "bob", "prefs"),
    ]
    assert store.list_namespaces(max_depth=1) == [("docs",), ("users",)]
    assert store.list_namespaces(max_depth=2) == [("docs",), ("users", "alice"), ("users", "bob")]
    assert store.list_namespaces(prefix=("users", "bob")) == [
        ("users", "bob", "memories"),
        ("users", "bob", "prefs"),
    ]
    assert store.list_namespaces(suffix=("memories",)) == [
        ("users", "alice", "memories"),
        ("users", "bob", "memories"),
    ]
    assert store.list_namespaces(prefix=("users", "*", "prefs")) == [("users", "bob", "prefs")]
    assert store.list_namespaces(prefix=("users",), suffix=("*", "prefs"), max_depth=2) == [("users", "bob")]
    assert store.list_namespaces(limit=2, offset=1) == [
        ("users", "alice", "memories"),
        ("users", "bob", "memories"),
    ]
    assert store.list_namespaces(prefix=("nobody",)) == []


@pytest.mark.parametrize(
    "options", [{"max_depth": 0}, {"max_depth": "2"}, {"prefix": "users"}, {"limit": -5}]
)
def test_bad_list_namespaces_options_are_refused(store, options):
    with pytest.raises(ConfigError):
        store.list_namespaces(**options)


# -- async twins -----------------------------------------------------------------------------------


def test_the_async_twins_do_what_the_methods_do(store):
    async def main() -> tuple:
        await store.aput(("a", "b"), "k", {"v": 1})
        await store.aput(("a", "c"), "k", {"v": 2}, ttl=60)
        got = await store.aget(("a", "b"), "k")
        found = await store.asearch(("a",), filter={"v": 2}, limit=5)
        spaces = await store.alist_namespaces(max_depth=1)
        await store.adelete(("a", "b"), "k")
        return got, found, spaces, await store.aget(("a", "b"), "k")

    got, found, spaces, gone = asyncio.run(main())
    assert got.value == {"v": 1}
    assert [i.namespace for i in found] == [("a", "c")]
    assert spaces == [("a",)]
    assert gone is None


# -- many threads ----------------------------------------------------------------------------------


def test_many_threads_writing_at_once_lose_nothing(make):
    store = make()

    def writer(t: int) -> None:
        for i in range(40):
            store.put(("threads", f"t{t}"), f"k{i}", {"t": t, "i": i})
            store.put(("threads", "shared"), "last", {"t": t, "i": i})
            assert store.get(("threads", f"t{t}"), f"k{i}").value == {"t": t, "i": i}

    assert at_once(writer, 8) == []
    assert len(store.search(("threads",), limit=1000)) == 8 * 40 + 1
    assert store.get(("threads", "shared"), "last").value["i"] == 39
    assert len(store.list_namespaces()) == 9
