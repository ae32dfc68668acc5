"""`Graph`: the builder users write, with `compile()`."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any, TypeVar

from actorgraph._actors.backend import Backend, choose_backend
from actorgraph._api.compiled import CompiledGraph
from actorgraph._api.request import GraphSettings, check_cache, check_durability, resolve_breakpoints
from actorgraph._build.builder import GraphBuilder
from actorgraph._build.validate import build_spec, check_child_checkpointers
from actorgraph._engine.clock import Clock
from actorgraph._model.policy import NodeCache
from actorgraph._model.runs import Breakpoints
from actorgraph._model.spec import GraphSpec
from actorgraph.checkpoint._protocol import Checkpointer
from actorgraph.events import Listener

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
    ) -> CompiledGraph[S]:
        """Validate the graph and return a `CompiledGraph` that can run it.

        Args:
            checkpointer: where runs are recorded (`MemoryCheckpointer`, `SqliteCheckpointer`,
                `PostgresCheckpointer`; runs then need a `thread_id`); for a graph used as a
                subgraph, True keeps its state between the parent's runs, None or False does not.
            interrupt_before: pause before these vertices run ("*" for all; default: a graph file's).
            interrupt_after: pause after the supersteps these vertices ran in ("*" for all).
            durability: "sync" (each task's result is stored as it finishes),
                "step" (once per superstep) or "exit" (when the run pauses or ends).
            clock: where retry backoff sleeps (`actorgraph.testing.FakeClock` in tests).
            listeners: callables that receive every run's events (from several
                threads; see `actorgraph.events`).
            context: the default `context=` of every run (clients, settings),
                so a resume needs no `context=`; a run's own `context=` overrides it.
            backend: where vertex work runs: None for threads of this process,
                `actorgraph.ray.RayBackend(...)` for Ray worker processes.
            actors: "pooled" (the default: vertex actors share the process's scheduler
                threads) or "threads" (each owns a thread): the "Actors and threads" page.
            store: a memory store (`actorgraph.store`): every vertex's `ctx.store`, subgraphs' too.
            cache: a node cache (`MemoryCache()`, `SqliteCache(path)`) for vertices with a `CachePolicy`.

        Raises:
            GraphValidationError: naming the offending vertex or edge.
            ConfigError: `cache` is not a node cache.
        """
        backend = choose_backend(backend, actors)
        spec = build_spec(self)
        backend.check(spec)
        breakpoints = self._breakpoints(spec, interrupt_before, interrupt_after)
        settings = GraphSettings(
            spec, None, breakpoints, check_durability(durability), tuple(listeners), context, backend
        )
        settings = dataclasses.replace(settings, store=store, cache=check_cache(spec, cache))
        return CompiledGraph(_persisted(settings, checkpointer), clock=clock)

    def _breakpoints(self, spec: GraphSpec, before: Any, after: Any) -> Breakpoints:
        """`compile()`'s breakpoints, checked (default: a graph file's)."""
        before = before if before is not None else list(self.pause_before) or None
        after = after if after is not None else list(self.pause_after) or None
        return resolve_breakpoints(before, after, spec)


def _persisted(settings: GraphSettings, checkpointer: Checkpointer | bool | None) -> GraphSettings:
    """`settings` with `compile(checkpointer=...)`: a store, or True / False for a graph used as a subgraph.

    Raises:
        GraphValidationError: a subgraph compiled with a checkpointer that is not this one.
    """
    saver = None if isinstance(checkpointer, bool) else checkpointer
    check_child_checkpointers(settings.spec, saver)
    return dataclasses.replace(settings, checkpointer=saver, stateful=checkpointer is True)
