"""`unchanged`: a value counts as unchanged only when no reader could tell it from the old one."""

from __future__ import annotations

import copy
import dataclasses
import datetime as dt
import decimal
from typing import Any

import pydantic
import pytest
from exact_values import same
from hypothesis import given
from twins import twins, values

from actorgraph._engine.copies import copy_state
from actorgraph._model.sameness import unchanged


@dataclasses.dataclass
class Box:
    items: list[Any]
    note: str = dataclasses.field(default="", compare=False)


class Model(pydantic.BaseModel):
    items: list[Any]


class Elementwise:
    """Like an array: == answers item by item, never with a bool."""

    def __init__(self, cells: list[int]) -> None:
        self.cells = cells

    def __eq__(self, other: object) -> Any:
        return [a == b for a, b in zip(self.cells, getattr(other, "cells", []), strict=False)]

    __hash__ = None  # type: ignore[assignment]


class Raising:
    def __eq__(self, other: object) -> bool:
        raise RuntimeError("no comparing")

    __hash__ = object.__hash__


UTC, CET = dt.UTC, dt.timezone(dt.timedelta(hours=1))

CHANGED = {
    "ints to floats": ([1, 2], [1.0, 2.0]),
    "a bool for an int": ([1, [True]], [1, [1]]),
    "keys reordered": ({"a": 1, "b": 2}, {"b": 2, "a": 1}),
    "nested keys reordered": ([{"a": {"x": 1, "y": 2}}], [{"a": {"y": 2, "x": 1}}]),
    "a key of another type": ({1: "a"}, {True: "a"}),
    "a negative zero": ([0.0], [-0.0]),
    "set items of another type": ({1, 2}, {1.0, 2}),
    "a tuple's item": ((1, [2]), (1, [2.0])),
    "a dataclass field": (Box([1]), Box([1.0])),
    "a pydantic field": (Model(items=[1]), Model(items=[1.0])),
    "a decimal's exponent": (decimal.Decimal("1.0"), decimal.Decimal("1.00")),
    "the same instant in another zone": (
        dt.datetime(2030, 1, 1, 12, tzinfo=UTC),
        dt.datetime(2030, 1, 1, 13, tzinfo=CET),
    ),
    "an element-wise ==": (Elementwise([1, 2]), Elementwise([1, 2])),
    "an == that raises": (Raising(), Raising()),
    "a NaN not the same object": (float("nan"), float("nan")),
    "another type at the top": (1, 1.0),
}


@pytest.mark.parametrize(("old", "new"), CHANGED.values(), ids=CHANGED.keys())
def test_values_equal_by_eq_that_a_reader_can_tell_apart_are_changed(old: Any, new: Any) -> None:
    assert not unchanged(old, new)


NAN = float("nan")
UNCHANGED = {
    "the same object": (NAN, NAN),
    "a list of the same NaN": ([NAN], [NAN]),
    "equal rows": ([{"a": 1, "b": [2.5]}], [{"a": 1, "b": [2.5]}]),
    "a dataclass, its field compare=False aside": (Box([1], note="x"), Box([1], note="y")),
    "a pydantic model": (Model(items=[1, {"k": 2.0}]), Model(items=[1, {"k": 2.0}])),
    "a decimal": (decimal.Decimal("1.50"), decimal.Decimal("1.50")),
    "an instant": (dt.datetime(2030, 1, 1, 12, tzinfo=UTC), dt.datetime(2030, 1, 1, 12, tzinfo=UTC)),
    "sets": ({1, "a", (2, 3.5)}, {(2, 3.5), "a", 1}),
}


@pytest.mark.parametrize(("old", "new"), UNCHANGED.values(), ids=UNCHANGED.keys())
def test_values_no_reader_can_tell_apart_are_unchanged(old: Any, new: Any) -> None:
    assert unchanged(old, new)


# -- properties ---------------------------------------------------------------------------------------


@pytest.mark.slow  # a property over many drawn values
@given(value=values)
def test_a_copy_is_unchanged(value: Any) -> None:
    """So a branch that left a value as it was never takes part in a merge, nor is stored again."""
    assert unchanged(value, copy_state(value))
    assert unchanged(value, copy.deepcopy(value))


@pytest.mark.slow  # a property over many drawn values
@given(pair=twins())
def test_unchanged_is_exactly_equal_type_for_type(pair: tuple[Any, Any]) -> None:
    old, new = pair
    if old == new:
        assert unchanged(old, new) == same(old, new)
    else:
        assert not unchanged(old, new)
