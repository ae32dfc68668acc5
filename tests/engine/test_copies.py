"""Isolation's copier: a copy equals its original exactly and shares no mutable part with it."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from exact_values import Box, Frozen, Keyed, mutable_parts, same, vandalize
from hypothesis import given, settings
from hypothesis import strategies as st

from actorgraph._engine.copies import copy_state

SCALARS = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=True)
    | st.complex_numbers(allow_nan=False)
    | st.text(max_size=8)
    | st.binary(max_size=8)
)
HASHABLE = st.recursive(
    SCALARS | st.builds(Keyed, st.integers()), lambda inner: st.tuples(inner, inner), max_leaves=4
)


def _containers(leaf: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    keys = (
        st.text(max_size=4)
        | st.integers(-3, 3)
        | st.tuples(st.integers(0, 2), st.text(max_size=2))
        | HASHABLE
    )
    return (
        st.lists(leaf, max_size=5)
        | st.dictionaries(keys, leaf, max_size=5)
        | st.tuples(leaf, leaf)
        | st.sets(HASHABLE, max_size=4)
        | st.frozensets(HASHABLE, max_size=4)
        | st.builds(Box, st.lists(leaf, max_size=3))
        | st.builds(Frozen, st.lists(leaf, max_size=3))
    )


STATES = st.recursive(SCALARS, _containers, max_leaves=30)
ROWS = st.lists(st.dictionaries(st.text(max_size=3) | HASHABLE, SCALARS, max_size=4), max_size=20)
"""Lists of flat dicts: the copier's fast path, and its fallbacks when one value is not a scalar."""


@pytest.mark.slow  # a property test with many examples (seconds on a busy machine)
@settings(max_examples=300, deadline=None)
@given(STATES)
def test_a_copy_equals_its_original_exactly_and_shares_no_mutable_part(state: Any) -> None:
    copied = copy_state(state)
    assert same(copied, state)
    assert not mutable_parts(copied).keys() & mutable_parts(state).keys()


@pytest.mark.slow  # a property test with many examples (seconds on a busy machine)
@settings(max_examples=300, deadline=None)
@given(STATES | ROWS)
def test_changing_a_copy_anywhere_leaves_the_original_as_it_was(state: Any) -> None:
    before = copy.deepcopy(state)
    vandalize(copy_state(state))
    assert same(state, before)


@pytest.mark.slow  # a property test with many examples (seconds on a busy machine)
@settings(max_examples=200, deadline=None)
@given(ROWS, st.integers(0, 19), SCALARS | st.lists(SCALARS, max_size=2))
def test_rows_of_scalars_are_copied_row_by_row_even_when_one_row_holds_a_container(
    rows: list[dict[str, Any]], where: int, odd: Any
) -> None:
    if rows:
        rows[where % len(rows)]["odd"] = odd
    copied = copy_state(rows)
    assert same(copied, rows)
    assert not mutable_parts(copied).keys() & mutable_parts(rows).keys()


def test_immutable_values_are_shared_rather_than_copied() -> None:
    nested = (1, ("a", b"b"), frozenset({2, (3, "c")}), None, 2.5)
    state = {"t": nested, "s": "text", "r": range(3)}
    copied = copy_state(state)
    assert copied is not state
    assert all(copied[key] is state[key] for key in state)


def test_a_tuple_or_frozenset_holding_something_mutable_is_copied() -> None:
    inner = [1]
    state = {"t": (1, inner), "f": frozenset({Keyed(1)})}
    copied = copy_state(state)
    assert copied["t"] is not state["t"] and copied["t"][1] is not inner
    (original,), (other,) = state["f"], copied["f"]
    assert other is not original and other.n == original.n


def test_a_list_that_holds_itself_is_copied_with_its_cycle() -> None:
    loop: list[Any] = [{"a": 1}]
    loop.append(loop)
    copied = copy_state(loop)
    assert copied is not loop and copied[1] is copied and copied[0] == {"a": 1}
