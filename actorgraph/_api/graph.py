"""`Graph`: the builder users write, with `compile()`.

Importing it loads the builder only: the engine (actors, runs, streams) loads
with the first `compile()`, so `import actorgraph` stays light for a program
that builds graphs, or never runs one (`_api/compiling.py`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeVar

from actorgraph._build.builder import GraphBuilder
from actorgraph._engine.live import LIVE_DEFAULT

if TYPE_CHECKING:
    from collections.abc import Sequence
    from datetime import timedelta

    from actorgraph._actors.backend import Backend
    from actorgraph._api.compiled import CompiledGraph
    from actorgraph._engine.clock import Clock
    from actorgraph._model.policy import NodeCache
    from actorgraph.checkpoint._protocol import Checkpointer
    from actorgraph.events import Listener

__all__ = ["Graph"]

S = TypeVar("S")


class Graph(GraphBuilder[S]):
    """A graph of vertices: build it with `add_vertex` / `add_edge`, then `compile()`.

    Example:
        ```python
        from actorgraph import END, START, Graph

        g = Graph()
        g.add_vertex("inc", lambda s: {"n": s["n"] + 1})
        g.add_edge(START, "inc")
        g.add_edge("inc", END)
        with g.compile() as app:
            assert app.invoke({"n": 1}).state == {"n": 2}
        ```
    """

    def compile(  # noqa: PLR0913 - LangGraph's compile options, all keyword-only
        self,
        checkpointer: Checkpointer | bool | None = None,
        *,
        interrupt_before: Sequence[str] | str | None = None,
        interrupt_after: Sequence[str] | str | None = None,
        durability: str = "sync",
        clock: Clock | None = None,
        listeners: Sequence[Listener] = (),
        context: Any = None,
        backend: Backend | None = None,
        actors: str | None = None,
        store: Any = None,
        cache: NodeCache | None = None,
        tracing: bool = True,
        live_interrupts: timedelta | float | None = LIVE_DEFAULT,
    ) -> CompiledGraph[S]:
        """Validate the graph and return a `CompiledGraph` that can run it.

        Args:
            checkpointer: where runs are recorded (runs then need a `thread_id`); for a graph used
                as a subgraph, True keeps its state between the parent's runs, None or False not.
            interrupt_before: pause before these vertices run ("*" for all; default: a graph file's).
            interrupt_after: pause after the supersteps these vertices ran in ("*" for all).
            durability: "sync" (each result stored as it finishes), "step" (per superstep) or "exit".
            clock: where retry backoff sleeps (`actorgraph.testing.FakeClock` in tests).
            listeners: callables that receive every run's events (from several threads).
            context: the default `context=` of every run (a run's own overrides it).
            backend: where vertex work runs (None: this process; `actorgraph.ray.RayBackend(...)`).
            actors: "pooled" (default: actors share scheduler threads) or "threads" (one each).
            store: a memory store (`actorgraph.store`): every vertex's `ctx.store`, subgraphs' too.
            cache: a node cache (`MemoryCache()`, `SqliteCache(path)`) for vertices with a `CachePolicy`.
            tracing: False: no OpenTelemetry spans (with an SDK set up, each run is a trace).
            live_interrupts: how long `interrupt()` waits in its actor to go on live (10 min; None: never).

        Raises:
            GraphValidationError: naming the offending vertex or edge.
            ConfigError: an option of the wrong kind (a checkpointer, store or cache that is none).
        """
        from actorgraph._api.compiling import compile_graph  # noqa: PLC0415 - the engine loads here, not on import

        return compile_graph(
            self, checkpointer, interrupt_before=interrupt_before, interrupt_after=interrupt_after,
            durability=durability, clock=clock, listeners=listeners, context=context, backend=backend,
            actors=actors, store=store, cache=cache, tracing=tracing, live_interrupts=live_interrupts,
        )  # fmt: skip
