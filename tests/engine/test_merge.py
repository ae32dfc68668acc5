"""Merges and reducers: every branch's change survives, exactly once."""

from __future__ import annotations

import copy
import dataclasses
import operator
from typing import Any

import pytest
from exact_values import same
from hypothesis import given
from hypothesis import strategies as st
from twins import twins, values

from actorgraph import InvalidUpdateError, MergeConflictError
from actorgraph.merge import MISSING, add, append, by_key, merge_dicts, replace, three_way, union


def test_three_way_keeps_changes_to_different_keys() -> None:
    base = {"a": 1, "b": 1, "c": 1}
    merged = three_way(base, [{"a": 2, "b": 1, "c": 1}, {"a": 1, "b": 3, "c": 1}])
    assert merged == {"a": 2, "b": 3, "c": 1}


def test_three_way_accepts_the_same_change_twice() -> None:
    assert three_way({"a": 1}, [{"a": 5}, {"a": 5}]) == {"a": 5}


def test_three_way_refuses_different_changes_and_names_the_key() -> None:
    with pytest.raises(MergeConflictError) as info:
        three_way({"a": 1, "b": 0}, [{"a": 2, "b": 0}, {"a": 3, "b": 0}])
    assert info.value.key == "a"
    assert info.value.branches == (0, 1)
    assert "'a'" in str(info.value) and "by_key" in str(info.value)


def test_three_way_treats_adding_and_deleting_keys_as_changes() -> None:
    merged = three_way({"a": 1, "gone": 0}, [{"a": 1, "new": 2}, {"a": 1, "gone": 0}])
    assert merged == {"a": 1, "new": 2}


HIDDEN_BASE = {"xs": [1, 2], "keyed": {"a": 1, "b": 2}, "flags": [[1]], "zero": [0.0]}
HIDDEN_CHANGE = {"xs": [1.0, 2.0], "keyed": {"b": 2, "a": 1}, "flags": [[True]], "zero": [-0.0]}
"""A change `==` cannot see: every value equal to the base's, none of the same types, key order or sign."""


@pytest.mark.parametrize("merge", [three_way, by_key({}, default=replace), by_key({}, default=max)])
def test_a_change_that_eq_cannot_see_is_taken_type_for_type(merge: Any) -> None:
    unchanged = copy.deepcopy(HIDDEN_BASE)  # a branch that left everything as it was
    for branches in ([HIDDEN_CHANGE, unchanged], [unchanged, HIDDEN_CHANGE]):
        merged = merge(HIDDEN_BASE, branches)
        assert same(merged, HIDDEN_CHANGE), merged


def test_two_changes_that_eq_cannot_tell_apart_conflict() -> None:
    with pytest.raises(MergeConflictError, match="'xs'"):
        three_way({"xs": [1]}, [{"xs": [1.0]}, {"xs": [True]}])


def test_merge_dicts_and_append_see_a_change_that_eq_cannot() -> None:
    merged = merge_dicts.merge({"a": [1], "b": 2}, [{"a": [1.0], "b": 2}, {"a": [1], "b": 3}])
    assert same(merged, {"a": [1.0], "b": 3})
    assert same(append.merge([1], [[1, 2], [1.0]]), [1, 2, 1.0])  # [1.0] is not [1] with nothing appended


@pytest.mark.slow  # a property over many drawn values
@given(pair=twins(st.dictionaries(st.sampled_from("abcd"), values, min_size=1)), width=st.integers(1, 3))
def test_property_a_hidden_change_survives_a_merge_with_unchanged_branches(
    pair: tuple[dict[str, Any], dict[str, Any]], width: int
) -> None:
    """Each key's value, whatever `==` hides in it, is the changed branch's, type for type."""
    base, changed = pair
    for at in range(width + 1):
        branches = [copy.deepcopy(base) for _ in range(width)]
        branches.insert(at, changed)
        merged = three_way(base, branches)
        assert merged.keys() == changed.keys()  # in the base's order: a state's own key order is no change
        assert all(same(merged[k], changed[k]) for k in changed), (merged, changed)


def test_add_sums_increments_relative_to_the_base() -> None:
    merge = by_key({"n": add})
    assert merge({"n": 10}, [{"n": 15}, {"n": 13}]) == {"n": 18}


def test_operator_add_is_read_as_add_so_the_base_is_not_duplicated() -> None:
    merge = by_key({"log": operator.add})
    merged = merge({"log": ["start"]}, [{"log": ["start", "a"]}, {"log": ["start", "b"]}])
    assert merged == {"log": ["start", "a", "b"]}


def test_append_keeps_each_item_once_even_when_the_base_is_not_a_prefix() -> None:
    merged = append.merge([1, 2], [[2, 1, 3], [1, 2, 4]])
    assert sorted(merged) == [1, 2, 3, 4]


def test_append_keeps_tuples_as_tuples() -> None:
    assert append.merge((1,), [(1, 2), (1, 3)]) == (1, 2, 3)


def test_replace_takes_the_last_change_in_task_order() -> None:
    merge = by_key({"x": replace})
    assert merge({"x": 0}, [{"x": 1}, {"x": 0}, {"x": 2}]) == {"x": 2}


def test_union_applies_additions_and_removals() -> None:
    assert union.merge({1, 2, 3}, [{1, 2, 3, 4}, {2, 3}]) == {2, 3, 4}
    assert union.merge([1, 2], [[1, 2, 3], [2]]) == [2, 3]


def test_merge_dicts_applies_sub_key_changes() -> None:
    base = {"a": 1, "b": 2}
    assert merge_dicts.merge(base, [{"a": 1, "b": 2, "c": 3}, {"a": 9}]) == {"a": 9, "c": 3}


def test_a_plain_binary_function_is_folded_over_changed_values() -> None:
    merge = by_key({"best": max})
    assert merge({"best": 5}, [{"best": 7}, {"best": 5}, {"best": 6}]) == {"best": 7}


def test_by_key_default_reducer_applies_to_other_keys() -> None:
    merge = by_key({"n": add}, default=replace)
    assert merge({"n": 1, "x": 0}, [{"n": 2, "x": 1}, {"n": 3, "x": 2}]) == {"n": 4, "x": 2}


def test_reducers_reject_the_wrong_kind_of_value() -> None:
    with pytest.raises(InvalidUpdateError, match="append"):
        append.merge([], [5])
    with pytest.raises(TypeError, match="not callable"):
        by_key({"x": 3})


def test_a_deletion_under_a_reducer_contributes_nothing() -> None:
    assert append.merge([1], [MISSING, [1, 2]]) == [1, 2]
    assert add.merge(1, [MISSING]) is MISSING


@dataclasses.dataclass(frozen=True)
class Point:
    x: int
    y: int


def test_dataclass_states_merge_per_field() -> None:
    merged = three_way(Point(0, 0), [Point(1, 0), Point(0, 2)])
    assert merged == Point(1, 2)


def test_states_without_keys_merge_as_a_whole() -> None:
    assert three_way(1, [1, 5]) == 5
    with pytest.raises(MergeConflictError, match="<state>"):
        three_way(1, [2, 3])


def test_a_single_state_is_returned_unchanged() -> None:
    state = {"a": 1}
    assert three_way({}, [state]) is state


@given(
    base=st.lists(st.integers(), max_size=5),
    additions=st.lists(st.lists(st.integers(), max_size=3), min_size=1, max_size=20),
)
def test_append_property_every_addition_exactly_once(base: list[int], additions: list[list[int]]) -> None:
    branches = [{"log": base + extra} for extra in additions]
    merged = by_key({"log": append})({"log": base}, branches)
    assert merged["log"] == base + [x for extra in additions for x in extra]


@given(base=st.integers(-1000, 1000), deltas=st.lists(st.integers(-50, 50), min_size=1, max_size=30))
def test_add_property_sums_every_delta(base: int, deltas: list[int]) -> None:
    branches = [{"n": base + d} for d in deltas]
    assert by_key({"n": add})({"n": base}, branches) == {"n": base + sum(deltas)}


@given(st.dictionaries(st.sampled_from("abcdef"), st.integers(), min_size=1))
def test_three_way_property_disjoint_changes_never_conflict(changes: dict[str, int]) -> None:
    base = dict.fromkeys("abcdef", 0)
    branches = [{**base, key: value + 1000} for key, value in changes.items()]
    merged = three_way(base, branches)
    assert merged == {**base, **{k: v + 1000 for k, v in changes.items()}}
