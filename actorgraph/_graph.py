"""`Graph`: the builder users write, with `compile()`."""

from __future__ import annotations

from typing import TypeVar

from actorgraph._builder import GraphBuilder
from actorgraph._clock import Clock
from actorgraph._compiled import CompiledGraph
from actorgraph._validate import build_spec

__all__ = ["Graph"]

S = TypeVar("S")


class Graph(GraphBuilder[S]):
    """A graph of vertices: build it with `add_vertex` / `add_edge`, then `compile()`.

    Example:
        ```python
        g = Graph()
        g.add_vertex("inc", lambda s: {"n": s["n"] + 1})
        g.add_edge(START, "inc")
        g.add_edge("inc", END)
        with g.compile() as app:
            assert app.invoke({"n": 1}).state == {"n": 2}
        ```
    """

    def compile(self, *, clock: Clock | None = None) -> CompiledGraph[S]:
        """Validate the graph and return a `CompiledGraph` that can run it.

        Args:
            clock: where retry backoff sleeps (`actorgraph.testing.FakeClock` in tests).

        Raises:
            GraphValidationError: naming the offending vertex or edge.
        """
        return CompiledGraph(build_spec(self), clock=clock)
