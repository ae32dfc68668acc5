"""What travels to and from Ray partitions: the standard pickler where it means what cloudpickle means."""

from __future__ import annotations

import pickle
import sys
from typing import Any

import cloudpickle
import pytest
from hypothesis import given
from hypothesis import strategies as st

from actorgraph.ray._wire import dumps

PLAIN = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text() | st.binary(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4),
    max_leaves=20,
)


@pytest.mark.slow  # a hundred examples
@given(PLAIN)
def test_plain_data_goes_by_the_standard_pickler_and_comes_back_equal(value: Any) -> None:
    blob = dumps(value)
    assert pickle.loads(blob) == value  # noqa: S301 - our own bytes
    if b"__main__" not in blob:  # a string holding it goes to cloudpickle: no harm
        assert blob == pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)


def test_what_the_standard_pickler_refuses_goes_by_cloudpickle() -> None:
    def local(x: int) -> int:
        return x + 1

    blob = dumps({"fn": local, "add": lambda x: x * 2})
    back = pickle.loads(blob)  # noqa: S301 - our own bytes
    assert back["fn"](1) == 2
    assert back["add"](3) == 6


def test_a_class_of_main_goes_by_value_as_cloudpickle_sends_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """The standard pickler would name `__main__.Point`: another process has another `__main__`."""

    class Point:
        def __init__(self, x: int) -> None:
            self.x = x

    Point.__module__, Point.__qualname__ = "__main__", "Point"
    monkeypatch.setattr(sys.modules["__main__"], "Point", Point, raising=False)
    value = Point(3)
    assert b"__main__" in pickle.dumps(value)  # by name: what a partition could not load
    assert dumps(value) == cloudpickle.dumps(value)  # by value


def test_what_nothing_can_pickle_raises_cloudpickles_error() -> None:
    import threading

    with pytest.raises(TypeError, match="lock"):
        dumps({"lock": threading.Lock()})
