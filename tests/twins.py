"""Values that `==` calls equal but a reader can tell apart, for the exactness properties (hypothesis).

`values` draws plain states (scalars, lists, tuples, dicts with keys of several
types); `twins` draws a value and another built alike, where each scalar may be
swapped for one `==` calls equal (1, 1.0, True; 0, 0.0, -0.0, False) and each
dict's keys may come in another order.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

__all__ = ["twins", "values"]

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.sampled_from([0.0, -0.0, 1.0, 2.0, 1.5]),
    st.sampled_from(["", "a", "b"]),
)
keys = st.one_of(
    st.sampled_from(["a", "b", "c"]), st.integers(0, 2), st.booleans(), st.sampled_from([0.0, 1.0])
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.lists(inner, max_size=3).map(tuple),
        st.dictionaries(keys, inner, max_size=4),
    ),
    max_leaves=12,
)


@st.composite
def twins(draw: st.DrawFn, of: st.SearchStrategy[Any] = values) -> tuple[Any, Any]:
    """A value of `of`, and its twin: equal by `==`, maybe of other types or key order."""
    old = draw(of)

    def twin(v: Any) -> Any:
        if isinstance(v, bool) or (v in (0, 1) and type(v) in (int, float, bool)):
            choices = [x for x in (0, 0.0, -0.0, False) if x == v] or [x for x in (1, 1.0, True) if x == v]
            return draw(st.sampled_from(choices))
        if isinstance(v, list):
            return [twin(x) for x in v]
        if isinstance(v, tuple):
            return tuple(twin(x) for x in v)
        if isinstance(v, dict):
            items = [(k, twin(x)) for k, x in v.items()]
            return dict(draw(st.permutations(items)))
        return v

    return old, twin(old)
