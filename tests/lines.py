"""Graphs whose vertices run in a line, START -> first -> ... -> last -> END, for tests."""

from __future__ import annotations

from typing import Any

import actorgraph as ag


def in_a_line(*vertices: tuple[str, Any], **graph: Any) -> ag.Graph:
    """A graph of `(name, fn)` vertices in a line; `graph` are `Graph(...)`'s keywords."""
    g: ag.Graph = ag.Graph(**graph)
    previous = ag.START
    for name, fn in vertices:
        g.add_vertex(name, fn)
        g.add_edge(previous, name)
        previous = name
    g.add_edge(previous, ag.END)
    return g
