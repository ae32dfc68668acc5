"""Isolation on random states: a vertex that changes its input anywhere, in place, changes nothing else.

DESIGN.md, Semantics 7. The vandal changes every mutable part of its input
(adds a key to each dict, an item to each list and set), waits until its
sibling holds its own input, then fails; its retry, its sibling, the run's
final state and the stored checkpoints must all still see the input as given.
"""

from __future__ import annotations

import pickle
from typing import Any

import pytest
from exact_values import same, vandalize
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from shared import SharedBarrier, SharedList

import actorgraph as ag
from actorgraph.checkpoint import MemoryCheckpointer
from actorgraph.testing import FakeClock

pytestmark = pytest.mark.slow  # a compiled graph and a run with a retry per example

SCALARS = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False)
    | st.text(max_size=6)
    | st.binary(max_size=4)
)
HASHABLE = st.recursive(SCALARS, lambda inner: st.tuples(inner, inner), max_leaves=3)
VALUES = st.recursive(
    SCALARS,
    lambda leaf: (
        st.lists(leaf, max_size=4)
        | st.dictionaries(st.text(max_size=3), leaf, max_size=4)
        | st.tuples(leaf, leaf)
        | st.sets(HASHABLE, max_size=3)
        | st.frozensets(HASHABLE, max_size=3)
    ),
    max_leaves=20,
)
ROWS = st.lists(st.dictionaries(st.text(max_size=3), SCALARS, min_size=1, max_size=3), max_size=30)
"""Records: the copier's fast path, where one odd row sends it the slow way."""
STATES = st.dictionaries(st.text(min_size=1, max_size=3), VALUES | ROWS, min_size=1, max_size=4)


def _graph(seen: SharedList, barrier: SharedBarrier) -> ag.Graph:
    def vandal(state: dict[str, Any], ctx: ag.Context[Any]) -> dict[str, Any]:
        if ctx.attempt > 1:
            seen.append(("retry", state))
            return {}
        vandalize(state)
        barrier.wait(timeout=10)
        raise ConnectionError("again, please")

    def sibling(state: dict[str, Any]) -> dict[str, Any]:
        barrier.wait(timeout=10)  # the vandal has changed its copy by now
        seen.append(("sibling", state))
        return {}

    g: ag.Graph = ag.Graph(returns="update")
    g.add_vertex("vandal", vandal, retry=ag.RetryPolicy(max_attempts=2, jitter=False))
    g.add_vertex("sibling", sibling)
    for name in ("vandal", "sibling"):
        g.add_edge(ag.START, name)
        g.add_edge(name, ag.END)
    return g


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(STATES)
def test_a_vertex_that_changes_its_input_in_place_changes_nothing_anyone_else_sees(
    given_state: dict[str, Any],
) -> None:
    original = _rebuilt(given_state)
    seen = SharedList()
    store = MemoryCheckpointer()
    with _graph(seen, SharedBarrier(2)).compile(store, clock=FakeClock()) as app:
        final = app.invoke(given_state, thread_id="t").state
        stored = [snapshot.state for snapshot in app.get_history("t")]
    assert same(given_state, original), "the caller's input"
    assert same(final, original), "the run's final state"
    assert sorted(who for who, _ in seen) == ["retry", "sibling"]
    for who, state in seen:
        assert same(state, original), who
    assert stored and all(same(state, original) for state in stored), "the checkpoints"


def _rebuilt(value: Any) -> Any:
    """A copy made without the copier under test."""
    return pickle.loads(pickle.dumps(value))  # noqa: S301 - a value this test made
