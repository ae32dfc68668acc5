"""The node cache's keys: equal inputs share one, different inputs never do (`digest`)."""

from __future__ import annotations

import dataclasses
import struct
import subprocess
import sys
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import actorgraph as ag
from actorgraph.checkpoint import MsgpackSerializer


@dataclasses.dataclass(frozen=True)
class Point:
    x: Any


@dataclasses.dataclass(frozen=True)
class Other:
    x: Any


CACHE = ag.MemoryCache(serializer=MsgpackSerializer(allowed=[Point, Other]))


def key(value: Any) -> str:
    return CACHE.digest((value, None))


# -- what is the same input: same types all the way down, dicts and sets in any order ----------------


def same(a: Any, b: Any) -> bool:
    """Whether a vertex could not tell `a` from `b`: same types everywhere, floats bit for bit."""
    if type(a) is not type(b):
        return False
    if type(a) is float:
        return struct.pack("!d", a) == struct.pack("!d", b)
    if type(a) in (list, tuple):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if type(a) is dict:
        return len(a) == len(b) and all(any(same(k, k2) and same(v, b[k2]) for k2 in b) for k, v in a.items())
    if type(a) in (set, frozenset):
        return len(a) == len(b) and all(any(same(x, y) for y in b) for x in a)
    if type(a) in (Point, Other):
        return same(a.x, b.x)
    return bool(a == b)


# Names a digest's own tags or an older encoding could use: the likeliest to imitate a container.
WORDS = st.sampled_from(["", "a", "d", "s", "l", "t", "v", "f", "dict", "set", "list", "tuple", "1"])
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-2, 2),
    st.sampled_from([2**63 - 1, 2**63, -(2**63), -(2**63) - 1, 10**30]),
    st.sampled_from([0.0, -0.0, 1.0, 2.0**64, float("inf")]),
    WORDS,
    st.sampled_from([b"", b"a", b"d", b"1"]),
    st.builds(Point, st.integers(0, 1)),
    st.builds(Other, st.integers(0, 1)),
)
HASHABLE = st.recursive(
    SCALARS, lambda inner: st.one_of(st.tuples(inner, inner), st.frozensets(inner, max_size=3)), max_leaves=4
)
VALUES = st.recursive(
    SCALARS | HASHABLE,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.lists(inner, max_size=3).map(tuple),
        st.dictionaries(HASHABLE, inner, max_size=3),
        st.sets(HASHABLE, max_size=3),
        st.frozensets(HASHABLE, max_size=3),
    ),
    max_leaves=8,
)


def imitation(value: Any) -> Any:
    """`value` written as plain lists and tuples the way a digest might tag containers."""
    if type(value) is dict:
        return ("dict", [[imitation(k), imitation(v)] for k, v in value.items()])
    if type(value) in (set, frozenset):
        return ("set", [imitation(v) for v in value])
    if type(value) in (list, tuple):
        return type(value)(imitation(v) for v in value)
    return value


EMPTY = ["", b"", 0, 0.0, False, None, [], (), {}, set(), frozenset(), Point(0)]


def test_the_empty_value_of_each_type_has_a_key_of_its_own() -> None:
    # a tag shared by two types gives their empty values one key: "" and set() did (found by the
    # property below in CI)
    keys = [key(value) for value in EMPTY]
    assert len(set(keys)) == len(EMPTY), [v for v, k in zip(EMPTY, keys, strict=True) if keys.count(k) > 1]


@pytest.mark.slow
@settings(deadline=None, max_examples=600)
@given(st.lists(VALUES, min_size=2, max_size=6))
@example(["", set()])
def test_two_inputs_share_a_key_exactly_when_they_are_the_same(values: list[Any]) -> None:
    for a in values:
        for b in values:
            assert (key(a) == key(b)) == same(a, b), (a, b)


@pytest.mark.slow
@settings(deadline=None, max_examples=400)
@given(VALUES)
def test_no_input_shares_a_key_with_its_containers_written_out(value: Any) -> None:
    imitated = imitation(value)
    assert (key(value) == key(imitated)) == same(value, imitated), (value, imitated)


@pytest.mark.parametrize(
    ("one", "other"),
    [
        ({"x": {"a": 1}}, {"x": ("dict", [["a", 1]])}),
        ({1, 2}, ("set", [1, 2])),
        (frozenset({1}), ("set", [1])),
        ({"a": 1}, ("d", [[("v", "a"), ("v", 1)]])),
        (1, 1.0),
        (1, True),
        (1.0, True),
        (0.0, -0.0),
        ("a", b"a"),
        ([1], (1,)),
        ({1}, frozenset({1})),
        ({1: "one"}, {"1": "one"}),
        ({True: 1}, {1: 1}),
        ([[1], [2]], [[1, 2]]),
        ([["a"]], ["a"]),
        ("ab", ["a", "b"]),
        (Point(1), Other(1)),
        (Point(1), {"x": 1}),
        (None, ()),
        ((), []),
    ],
)
def test_inputs_of_other_types_or_shapes_have_other_keys(one: Any, other: Any) -> None:
    assert key(one) != key(other)


def test_dict_and_set_order_do_not_change_a_key() -> None:
    assert key({"a": 1, "b": {2, 3}}) == key({"b": {3, 2}, "a": 1})
    assert key({frozenset({"x", "y"}): [1]}) == key({frozenset({"y", "x"}): [1]})
    assert key((1, "s", None)) == key((1, "s", None))


@pytest.mark.slow
def test_a_key_is_the_same_in_another_process_whatever_its_string_hashes() -> None:
    parts = ({"b": [1, {"z": 2, "y": 3}], "a": "x", "s": {"p", "q", "r", "t"}}, frozenset({"u", "w"}))
    program = f"import actorgraph as ag; print(ag.MemoryCache().digest({parts!r}))"
    for seed in ("1", "2"):
        done = subprocess.run(
            [sys.executable, "-c", program],
            capture_output=True,
            text=True,
            check=True,
            env={"PYTHONHASHSEED": seed, "PATH": ""},
        )
        assert done.stdout.strip() == ag.MemoryCache().digest(parts)


def test_a_value_the_serializer_refuses_names_where_it_is() -> None:
    with pytest.raises(ag.SerializationError, match=r"\['client'\]\[1\]"):
        ag.MemoryCache().digest(({"client": [1, object()]}, None))


def test_a_very_deep_input_is_refused_not_crashed() -> None:
    deep: Any = []
    for _ in range(5_000):
        deep = [deep]
    with pytest.raises(ag.SerializationError, match="deep"):
        ag.MemoryCache().digest((deep, None))


def test_huge_ints_and_lone_surrogates_make_keys() -> None:
    assert key(10**5000) != key(10**5000 + 1)
    assert key("\ud800") != key("\ud801")
