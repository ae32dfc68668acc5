"""The graph the tests of deferred vertices share: branches of uneven length feeding one aggregator."""

from __future__ import annotations

from typing import Any

import actorgraph as ag
from actorgraph.merge import append, by_key


def logs(name: str) -> Any:
    """A vertex function that appends its name to the `log` key (an update)."""
    return lambda state: {"log": [name]}


def uneven(agg: Any, *, defer: bool = True, b3: Any = None) -> ag.Graph:
    """START -> a -> agg and START -> b1 -> b2 -> b3 -> agg: branches of 1 and 3 supersteps.

    Args:
        agg: the aggregator's function.
        defer: add the aggregator with `defer=True`.
        b3: the last vertex of the long branch (default: it logs its name).
    """
    g: ag.Graph = ag.Graph(merge=by_key({"log": append}), returns="update")
    for name in ("a", "b1", "b2"):
        g.add_vertex(name, logs(name))
    g.add_vertex("b3", b3 or logs("b3"))
    g.add_vertex("agg", agg, defer=defer)
    for src, dst in (("a", "agg"), ("b1", "b2"), ("b2", "b3"), ("b3", "agg"), ("agg", ag.END)):
        g.add_edge(src, dst)
    g.add_edge(ag.START, "a")
    g.add_edge(ag.START, "b1")
    return g
