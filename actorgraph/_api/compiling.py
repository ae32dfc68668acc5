"""What `Graph.compile()` does: check its options, fix the graph's settings, make the `CompiledGraph`.

Kept apart from `graph.py` so that building a graph loads the builder only:
this module brings in the engine (the actors, the runs, the stores' records),
and `Graph.compile` imports it on the first compile.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from datetime import timedelta
from typing import Any

from actorgraph._actors.backend import Backend, choose_backend
from actorgraph._api.compiled import CompiledGraph
from actorgraph._api.request import (
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

__all__ = ["compile_graph"]


def compile_graph(  # noqa: PLR0913 - `Graph.compile`'s options, passed on as they came
    graph: GraphBuilder[Any],
    checkpointer: Checkpointer | bool | None,
    *,
    interrupt_before: Sequence[str] | str | None,
    interrupt_after: Sequence[str] | str | None,
    durability: str,
    clock: Clock | None,
    listeners: Sequence[Listener],
    context: Any,
    backend: Backend | None,
    actors: str | None,
    store: Any,
    cache: NodeCache | None,
    tracing: bool,
    live_interrupts: timedelta | float | None,
) -> CompiledGraph[Any]:
    """`graph` validated and compiled with `Graph.compile`'s options (its docstring says what each is).

    Raises:
        GraphValidationError: naming the offending vertex or edge.
        ConfigError: an option of the wrong kind (a checkpointer, store or cache that is none).
    """
    _check_stores(checkpointer, store)
    backend = choose_backend(backend, actors)
    backend.check(spec := build_spec(graph))
    pauses, durability = (
        _breakpoints(graph, spec, interrupt_before, interrupt_after),
        check_durability(durability),
    )
    settings = GraphSettings(spec, None, pauses, durability, tuple(listeners), context, backend)
    live, cache, tracing = live_seconds(live_interrupts), check_cache(spec, cache), check_tracing(tracing)
    settings = dataclasses.replace(settings, store=store, cache=cache, live=live, tracing=tracing)
    return CompiledGraph(_persisted(settings, checkpointer), clock=clock)


def _breakpoints(graph: GraphBuilder[Any], spec: GraphSpec, before: Any, after: Any) -> Breakpoints:
    """`compile()`'s breakpoints, checked (default: a graph file's)."""
    before = before if before is not None else list(graph.pause_before) or None
    after = after if after is not None else list(graph.pause_after) or None
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
