"""Building a graph costs the same per vertex and edge however many there are (issue 29, width).

A fan-out to 10,000 distinct vertices took 1.4 ms per vertex to build against
46 µs at 1,000: `add_edge` looked for the same edge in a list of every edge
added before it. These tests count the name comparisons that building makes:
a name type that counts its `==` calls stands in for `str`.
"""

from __future__ import annotations

import pytest

import actorgraph as ag

WIDTH = 2_000


class CountedName(str):
    """A vertex name that counts how often it is compared for equality."""

    __slots__ = ()
    compared = 0

    def __eq__(self, other: object) -> bool:
        CountedName.compared += 1
        return str.__eq__(self, other)

    __hash__ = str.__hash__


def _fan(width: int) -> ag.Graph:
    g: ag.Graph = ag.Graph()
    names = [CountedName(f"b{i}") for i in range(width)]
    for name in names:
        g.add_vertex(name, lambda s: s)
        g.add_edge(ag.START, name)
        g.add_edge(name, ag.END)
    return g


def test_adding_n_edges_compares_names_a_constant_number_of_times_each() -> None:
    CountedName.compared = 0
    _fan(WIDTH)
    assert CountedName.compared < 10 * WIDTH, f"{CountedName.compared} comparisons for {WIDTH} vertices"


def test_an_edge_added_twice_is_still_refused_and_the_graph_still_runs() -> None:
    g = _fan(3)
    with pytest.raises(ag.GraphValidationError, match="added twice"):
        g.add_edge(ag.START, "b1")
    with g.compile() as app:
        assert app.invoke({"n": 1}).state == {"n": 1}
