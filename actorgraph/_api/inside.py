"""The runs inside a superstep: its subgraph tasks' runs, and the runs of the graphs its tasks invoked.

A subgraph task's run is named by its task (`_engine/subgraphs.run_name`); a
graph invoked inside a vertex runs nested (`nesting.py`), named by the task
and the call's number (`outer@1~1a2b3c4d#0`), or, for a stateful graph, by the
vertex and the graph (`chat~memory`). Each is kept as the thread
`parent|name`. `History` reads them through these functions, each with the
graph that made it: a subgraph's from the vertex, a nested run's from the
graphs the vertex's function invokes (`invoked.py`).
"""

from __future__ import annotations

from collections.abc import Sequence

from actorgraph._api.invoked import invoked_spec
from actorgraph._api.nesting import STATEFUL, NestedRun, nested_of
from actorgraph._engine.subgraphs import namespace_of, run_name, vertex_of
from actorgraph._engine.superstep import plan
from actorgraph._model.errors import ConfigError
from actorgraph._model.records import NS
from actorgraph._model.spec import GraphSpec
from actorgraph.checkpoint._load import Loaded
from actorgraph.checkpoint._protocol import Checkpointer

__all__ = ["children", "inner_spec"]


def children(
    store: Checkpointer, spec: GraphSpec, thread: str, loaded: Loaded, *, nested: bool = False
) -> list[tuple[str, GraphSpec]]:
    """The runs of the superstep after `loaded` that have a checkpoint: (name, graph), in task order.

    Those of its subgraph tasks; with `nested`, those of the graphs its tasks
    invoked too (each task's calls, then the stateful graphs its vertex keeps),
    when the graph that made them is known in this process.
    """
    out: dict[str, GraphSpec] = {}
    kept = _stateful_runs(store, thread) if nested else ()
    for task in plan(loaded.position, spec.deferred):
        vertex = spec.vertices.get(task.vertex)
        if vertex is not None and vertex.child is not None:
            name, _ = run_name(spec, task, loaded.origin, recorded=True)
            if store.get(f"{thread}{NS}{name}") is not None:
                out.setdefault(name, vertex.child.spec)
        elif vertex is not None and nested:
            out.update(_nested_runs(store, spec, thread, namespace_of(task, loaded.origin), kept))
    return list(out.items())


def inner_spec(
    store: Checkpointer, spec: GraphSpec, thread: str, name: str, *, strict: bool = False
) -> GraphSpec | None:
    """The graph of the run `name` (kept as `thread`) inside a run of `spec`; None when it is none of its.

    Raises:
        ConfigError: with `strict`, the run is nested and its graph is not known in this process.
    """
    vertex = spec.vertices.get(vertex_of(name))
    if vertex is not None and vertex.child is not None:
        return vertex.child.spec
    made = nested_of(store, thread)
    if made is None or made.vertex not in spec.vertices:
        return None
    found = _nested_spec(spec, made)
    if found is None and strict:
        msg = (
            f"the nested run {name!r} was made by graph {made.label!r}, invoked in vertex "
            f"{made.vertex!r}, and this process does not know that graph: none of its runs has "
            "been seen here and the vertex's code names no graph of that name; run the thread "
            "once in this process, or keep the graph where the vertex's function names it "
            "(a module-level name, a closure or a default argument)"
        )
        raise ConfigError(msg)
    return found


def _nested_runs(
    store: Checkpointer, spec: GraphSpec, thread: str, base: str, kept: Sequence[str]
) -> dict[str, GraphSpec]:
    """The runs of the graphs that the task `base` invoked, known here: its calls, then the stateful ones."""
    vertex = vertex_of(base)
    calls: list[str] = []
    while store.get(f"{thread}{NS}{base}#{len(calls)}") is not None:
        calls.append(f"{base}#{len(calls)}")
    stateful = [n for n in kept if n.startswith(f"{vertex}~") and store.get(f"{thread}{NS}{n}")]
    out = {}
    for name in (*calls, *stateful):
        made = nested_of(store, f"{thread}{NS}{name}")
        found = _nested_spec(spec, made) if made is not None and made.vertex == vertex else None
        if found is not None:
            out[name] = found
    return out


def _stateful_runs(store: Checkpointer, thread: str) -> list[str]:
    """The names of the stateful graphs' runs that the vertices of `thread` keep (`nesting.STATEFUL`)."""
    return [key[len(STATEFUL) :] for key in store.get_metadata(thread) if key.startswith(STATEFUL)]


def _nested_spec(spec: GraphSpec, made: NestedRun) -> GraphSpec | None:
    """The graph that made a nested run inside a run of `spec`, if known in this process."""
    vertex = spec.vertices.get(made.vertex)
    return invoked_spec(vertex.fn, made.label, made.slot) if vertex is not None else None
