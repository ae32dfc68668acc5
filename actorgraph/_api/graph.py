"""`Graph`: the builder users write, with `compile()`."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from datetime import timedelta
from typing import Any, TypeVar

from actorgraph._actors.backend import Backend, choose_backend
from actorgraph._api.compiled import CompiledGraph
from actorgraph._api.request import (
    LIVE_DEFAULT,
    GraphSettings,
    check_cache,
    check_durability,
    check_store,
    check_tracing,
    described,
    has_methods,
    live_seconds,
    resolve_breakpoints,
)
from actorgraph._build.builder import GraphBuilder
from actorgraph._build.validate import build_spec, check_child_checkpointers
from actorgraph._engine.clock import Clock
from actorgraph._model.errors import ConfigError
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
        _check_stores(checkpointer, store)
        backend = choose_backend(backend, actors)
        backend.check(spec := build_spec(self))
        pauses, durability = (
            self._breakpoints(spec, interrupt_before, interrupt_after),
            check_durability(durability),
        )
        settings = GraphSettings(spec, None, pauses, durability, tuple(listeners), context, backend)
        live, cache, tracing = live_seconds(live_interrupts), check_cache(spec, cache), check_tracing(tracing)
        settings = dataclasses.replace(settings, store=store, cache=cache, live=live, tracing=tracing)
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


def _check_stores(checkpointer: Any, store: Any) -> None:
    """Refuse a `compile(checkpointer=)` that is no store, True, False or None (a path, a class, a number).

    A store is recognized by what the engine calls on every one; anything else
    taken would fail every later run as if its thread were damaged. Then
    `compile(store=)` is checked (`check_store`).

    Raises:
        ConfigError: naming what was passed and what is taken.
    """
    usable = checkpointer is None or isinstance(checkpointer, bool)
    if not (usable or has_methods(checkpointer, ("put", "get", "get_writes", "get_blobs", "history"))):
        msg = (
            "compile(checkpointer=...) takes a checkpointer (MemoryCheckpointer(), SqliteCheckpointer"
            "(path), PostgresCheckpointer(dsn)), True or False (a subgraph that keeps its state "
            f"between its parent's runs, or not) or None; got {described(checkpointer)}"
        )
        raise ConfigError(msg)
    check_store(store)
