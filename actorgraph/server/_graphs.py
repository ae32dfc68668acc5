"""The graphs a server serves, each compiled on the server's checkpointer and store, with its assistant.

A target may be an uncompiled `Graph` (compiled here), a `CompiledGraph`
compiled without a checkpointer (compiled again here, on the server's), an
`@entrypoint` (its one-vertex graph, compiled here), or a function taking no
arguments that returns one of them. Anything else is refused when the server
starts, naming the graph.

Each graph has one *system assistant*, as LangGraph's server gives it: its
`assistant_id` is a UUID made from the graph's name (the same UUID LangGraph's
server gives a graph of that name), and the name itself is accepted wherever an
`assistant_id` is.

Every graph is served with the live path of interrupts off
(`compile(live_interrupts=None)`): a paused run holds nothing in the server,
only its checkpoint, however many questions stay open and for however long,
and an answer runs the vertex that asked again from its first line, as
LangGraph's server does. (With the live path each open question held a thread
of the server for ten minutes: 100 unanswered pauses a second would have been
60,000 threads.)
"""

from __future__ import annotations

import dataclasses
import inspect
import time
import uuid
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Final

from actorgraph import CompiledGraph, ConfigError, Graph
from actorgraph._model.records import END, START
from actorgraph.func import Entrypoint
from actorgraph.func._entrypoint import release_task_graphs

__all__ = ["Graphs", "NotFoundError", "Served", "assistant_uuid", "served_graph"]

_NAMESPACE: Final = uuid.UUID(
    "6ba7b821-9dad-11d1-80b4-00c04fd430c8"
)  # what LangGraph's server derives ids with


class NotFoundError(LookupError):
    """An id the request names does not exist (answered 404 with this message)."""


def assistant_uuid(graph_name: str) -> str:
    """The system assistant's id of a graph: a UUID made from its name (stable across restarts)."""
    return str(uuid.uuid5(_NAMESPACE, graph_name))


@dataclass(frozen=True, slots=True)
class Served:
    """One served graph: its name, its assistant's id, the compiled graph, and whether it is an entrypoint."""

    name: str
    assistant_id: str
    app: CompiledGraph[Any]
    entrypoint: bool
    created_at: float

    def assistant(self) -> dict[str, Any]:
        """The system assistant as the API shows it."""
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime(self.created_at))
        return {
            "assistant_id": self.assistant_id,
            "graph_id": self.name,
            "config": {},
            "context": {},
            "metadata": {"created_by": "system"},
            "name": self.name,
            "description": None,
            "created_at": stamp,
            "updated_at": stamp,
            "version": 1,
        }

    def graph_json(self) -> dict[str, Any]:
        """The graph's vertices and edges, as `GET /assistants/{id}/graph` gives them."""
        spec = self.app.spec
        nodes = [{"id": START, "type": "runnable", "data": {"name": START}}]
        nodes += [{"id": v, "type": "runnable", "data": {"name": v}} for v in spec.vertices]
        nodes.append({"id": END, "type": "runnable", "data": {"name": END}})
        return {"nodes": nodes, "edges": list(_edges(spec))}

    def schemas(self) -> dict[str, Any]:
        """The JSON schemas of the state (and input, output), as `GET /assistants/{id}/schemas` gives them."""
        spec = self.app.spec
        state = _json_schema(spec.schema, f"{self.name}_state")
        return {
            "graph_id": self.name,
            "state_schema": state,
            "input_schema": _json_schema(spec.input_schema, f"{self.name}_input") or state,
            "output_schema": _json_schema(spec.output_schema, f"{self.name}_output") or state,
            "config_schema": {},
            "context_schema": None,
        }


def _edges(spec: Any) -> Iterator[dict[str, Any]]:  # noqa: C901 - one loop per kind of edge
    seen: set[tuple[str, str]] = set()

    def edge(source: str, target: str, *, conditional: bool) -> Iterator[dict[str, Any]]:
        if (source, target) not in seen:
            seen.add((source, target))
            yield {"source": source, "target": target, "conditional": conditional}

    for source, targets in spec.edges.items():
        for target in targets:
            yield from edge(source, target, conditional=False)
    for join in spec.joins:
        for source in join.sources:
            yield from edge(source, join.target, conditional=False)
    for source, routers in spec.routers.items():
        for router in routers:
            targets = router.path_map.values() if router.path_map else (*spec.vertices, END)
            for target in targets:
                yield from edge(source, target, conditional=True)
    for name, vertex in spec.vertices.items():
        for target in vertex.destinations or ():
            yield from edge(name, target, conditional=True)


def _json_schema(schema: Any, title: str) -> dict[str, Any] | None:
    if schema is None:
        return None
    try:
        from pydantic import TypeAdapter  # noqa: PLC0415 - the server extra has it; read once per graph

        found: dict[str, Any] = TypeAdapter(schema.cls).json_schema()
    except Exception:  # noqa: BLE001 - a schema pydantic cannot describe is described by its keys
        found = {"type": "object", "properties": {k: {} for k in schema.annotations}}
    return {**found, "title": title}


def served_graph(name: str, value: Any, *, checkpointer: Any, store: Any) -> Served:
    """`value` made a served graph, compiled on the server's checkpointer and store.

    Raises:
        ConfigError: naming the graph, when `value` is none of the kinds served.
    """
    if inspect.isfunction(value):
        try:
            value = value()
        except Exception as exc:
            raise ConfigError(
                f"graph {name!r}: calling its function failed: {type(exc).__name__}: {exc}"
            ) from exc
    entrypoint = isinstance(value, Entrypoint)
    if entrypoint:
        value = value.builder
    if isinstance(value, Graph):
        app = value.compile(checkpointer, store=store, live_interrupts=None)
    elif isinstance(value, CompiledGraph):
        app = _recompiled(name, value, checkpointer, store)
    else:
        msg = (
            f"graph {name!r} is a {type(value).__name__}; serve a Graph, a CompiledGraph compiled without a "
            "checkpointer, an @entrypoint, or a function that returns one"
        )
        raise ConfigError(msg)
    return Served(name, assistant_uuid(name), app, entrypoint, time.time())


def _recompiled(name: str, app: CompiledGraph[Any], checkpointer: Any, store: Any) -> CompiledGraph[Any]:
    """A compiled graph again, on the server's checkpointer and store (its own options kept)."""
    if app.checkpointer is not None:
        msg = (
            f"graph {name!r} is a CompiledGraph with its own checkpointer; compile it without one (the "
            "server keeps every graph's threads in its --db or --dsn store), or serve the Graph itself"
        )
        raise ConfigError(msg)
    # The facade has no "same graph, another checkpointer" yet: its settings are copied with the server's.
    settings = dataclasses.replace(  # the live path off, as for every served graph (see above)
        app._settings,  # noqa: SLF001
        checkpointer=checkpointer,
        store=store,
        live=None,
    )
    return CompiledGraph(settings)


class Graphs:
    """The served graphs, by name and by assistant id."""

    def __init__(self, served: Mapping[str, Served]) -> None:
        """Keep the served graphs (the server compiled each, and closes them)."""
        self._by_name = dict(served)
        self._by_id = {s.assistant_id: s for s in served.values()}

    def __iter__(self) -> Iterator[Served]:
        return iter(self._by_name.values())

    def get(self, assistant_id: str) -> Served:
        """The graph of an assistant id or a graph name.

        Raises:
            NotFoundError: no served graph has it.
        """
        found = self._by_id.get(assistant_id) or self._by_name.get(assistant_id)
        if found is None:
            names = ", ".join(self._by_name) or "none"
            msg = f"assistant {assistant_id!r:.100} not found: give a graph's name ({names}) or its id"
            raise NotFoundError(msg)
        return found

    def close(self) -> None:
        """Stop the actors of the served graphs (and of the tasks entrypoints call, unless one is open)."""
        for served in self._by_name.values():
            served.app.close()
        if any(served.entrypoint for served in self._by_name.values()):
            release_task_graphs()
