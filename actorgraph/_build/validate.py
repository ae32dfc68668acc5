"""Whole-graph checks at compile time, producing the frozen `GraphSpec`."""

from __future__ import annotations

import warnings
from typing import Any

from actorgraph._build.builder import GraphBuilder
from actorgraph._build.functions import check_handler, takes_ctx
from actorgraph._model.errors import GraphValidationError
from actorgraph._model.warnings import GraphValidationWarning
from actorgraph._model.records import END, START
from actorgraph._model.schema import Schema
from actorgraph._model.spec import ChildSpec, GraphSpec, JoinSpec, RouterSpec, VertexSpec
from actorgraph.merge import Merge, by_key, three_way

__all__ = ["build_spec", "check_child_checkpointers", "composed_merge"]


def build_spec(graph: GraphBuilder[Any], *, within: tuple[GraphBuilder[Any], ...] = ()) -> GraphSpec:
    """Check the whole graph, and its subgraphs, and freeze it.

    Args:
        graph: the graph.
        within: the graphs it is a subgraph of (outermost first), to refuse a
            graph that contains itself.

    Raises:
        GraphValidationError: naming the offending vertex or edge.
    """
    vertices = graph._vertices  # noqa: SLF001 - the builder and its validator are one concept
    if not vertices:
        msg = "the graph has no vertices; add_vertex at least one"
        raise GraphValidationError(msg)
    names = _Names(set(vertices))
    edges = _edges(graph, names)
    joins = _joins(graph, names)
    routers = _routers(graph, names)
    for v in vertices.values():
        for target in v.destinations or ():
            names.target(target, f"the destinations of {v.name!r}")
    if START not in edges and START not in routers:
        msg = "no edge leaves START; add_edge(START, 'first_vertex') to say where runs begin"
        raise GraphValidationError(msg)
    joins_from: dict[str, list[JoinSpec]] = {}
    for join in joins:
        for src in join.sources:
            joins_from.setdefault(src, []).append(join)
    _check_exits(vertices, edges, routers, joins_from)
    _check_reachable(vertices, edges, routers, joins)
    schema = Schema(graph.state) if graph.state is not None else None
    inputs, outputs = _boundary(graph, schema)
    return GraphSpec(
        name=graph.name,
        vertices={name: _vertex_spec(v, graph, (*within, graph)) for name, v in vertices.items()},
        edges={k: tuple(v) for k, v in edges.items()},
        routers={k: tuple(v) for k, v in routers.items()},
        joins=tuple(joins),
        joins_from={k: tuple(v) for k, v in joins_from.items()},
        merge=composed_merge(graph.merge, schema),
        schema=schema,
        deferred=frozenset(name for name, v in vertices.items() if v.defer),
        input_schema=inputs,
        output_schema=outputs,
        inline=graph.inline,
        face=graph.face,
    )


def _boundary(graph: GraphBuilder[Any], state: Schema | None) -> tuple[Schema | None, Schema | None]:
    """The graph's input and output schemas (None: the state's), checked against its state schema.

    Raises:
        GraphValidationError: a schema with keys the state does not have, or a
            state with required keys no input could give.
    """
    inputs = Schema(graph.input, role="input") if graph.input is not None else None
    outputs = Schema(graph.output, role="output") if graph.output is not None else None
    if state is None:
        return inputs, outputs
    for which, schema in (("input", inputs), ("output", outputs)):
        extra = sorted(set(schema.annotations) - set(state.annotations)) if schema is not None else []
        if schema is not None and extra:
            msg = (
                f"Graph(state={state.name}, {which}={schema.name}): {schema.name} has key(s) {extra} "
                f"that the state schema does not have; add them to {state.name}, or drop them"
            )
            raise GraphValidationError(msg)
    unfilled = sorted(state.required - set(inputs.annotations)) if inputs is not None else []
    if inputs is not None and unfilled:
        msg = (
            f"Graph(state={state.name}, input={inputs.name}): {state.name} requires key(s) {unfilled}, "
            f"which the input schema does not give, so no input could start a run; make them "
            f"optional in {state.name} (NotRequired[...], or a default), or add them to {inputs.name}"
        )
        raise GraphValidationError(msg)
    return inputs, outputs


def composed_merge(merge: Merge | None, schema: Schema | None) -> Merge:
    """The graph's merge: its `merge=` and its schema's reducers, combined, never one dropping the other.

    - no `merge=`: the schema's `Annotated[type, reducer]` reducers (`by_key`), or `three_way`;
    - `merge=by_key(...)`: its reducers and the schema's, key by key (a key named
      by both must have the same reducer), with `by_key`'s `default` for the rest;
    - a custom `merge=` function: allowed only when the schema declares no
      reducers (it could not honour them).

    Raises:
        GraphValidationError: one key with two different reducers, or a custom
            merge function beside schema reducers.
    """
    declared: dict[str, Any] = by_key(schema.reducers).reducers if schema is not None else {}  # type: ignore[attr-defined]
    if merge is None:
        return by_key(declared) if declared else three_way
    if not declared or merge is three_way:
        if merge is three_way and declared:
            return by_key(declared)
        return merge
    explicit = getattr(merge, "reducers", None)
    if explicit is None:
        msg = (
            f"Graph(state={schema.name if schema else '...'}, merge={getattr(merge, '__name__', merge)!r}): "
            f"the schema declares reducers for {sorted(declared)}, which a custom merge function "
            "would ignore; give per-key reducers with merge=by_key({...}) (they combine with the "
            "schema's), or take the reducers out of the schema"
        )
        raise GraphValidationError(msg)
    for key, reducer in explicit.items():
        if key in declared and declared[key] is not reducer:
            msg = (
                f"key {key!r} has two different reducers: {_name(declared[key])} in the state schema and "
                f"{_name(reducer)} in merge=by_key(...); keep one of them (a key has one reducer)"
            )
            raise GraphValidationError(msg)
    return by_key({**declared, **explicit}, default=getattr(merge, "default", None))


def _name(reducer: Any) -> str:
    return str(getattr(reducer, "__name__", None) or repr(reducer))


class _Names:
    """Checks that edges name vertices that exist."""

    def __init__(self, known: set[str]) -> None:
        self.known = known

    def _listing(self) -> str:
        return ", ".join(sorted(self.known))

    def target(self, target: str, where: str) -> None:
        if target != END and target not in self.known:
            msg = (
                f"{where} leads to unknown vertex {target!r} (vertices: {self._listing()}); "
                "add_vertex it first"
            )
            raise GraphValidationError(msg)

    def source(self, source: str, where: str) -> None:
        if source != START and source not in self.known:
            msg = f"{where} starts at unknown vertex {source!r} (vertices: {self._listing()})"
            raise GraphValidationError(msg)


def _edges(graph: GraphBuilder[Any], names: _Names) -> dict[str, list[str]]:
    edges: dict[str, list[str]] = {}
    for src, dst in graph._edges:  # noqa: SLF001
        names.source(src, f"edge {src!r} -> {dst!r}")
        names.target(dst, f"edge {src!r} -> {dst!r}")
        edges.setdefault(src, []).append(dst)
    return edges


def _joins(graph: GraphBuilder[Any], names: _Names) -> list[JoinSpec]:
    joins = []
    for sources, dst in graph._joins:  # noqa: SLF001
        where = f"join {list(sources)} -> {dst!r}"
        for src in sources:
            names.source(src, where)
        names.target(dst, where)
        joins.append(JoinSpec("+".join(sources) + ">" + dst, sources, dst))
    return joins


def _routers(graph: GraphBuilder[Any], names: _Names) -> dict[str, list[RouterSpec]]:
    routers: dict[str, list[RouterSpec]] = {}
    for r in graph._routers:  # noqa: SLF001
        names.source(r.source, f"the conditional edges of {r.source!r}")
        for answer, target in (r.path_map or {}).items():
            names.target(target, f"the path_map entry {answer!r} of {r.source!r}")
        takes = takes_ctx(r.fn, f"the router of {r.source!r}")
        routers.setdefault(r.source, []).append(RouterSpec(r.source, r.fn, r.path_map, takes))
    return routers


def _vertex_spec(v: Any, graph: GraphBuilder[Any], within: tuple[GraphBuilder[Any], ...]) -> VertexSpec:
    if v.on_error is not None:
        check_handler(v.on_error, f"the on_error handler of vertex {v.name!r}")
    child = _child_spec(v, within) if v.child is not None else None
    return VertexSpec(
        name=v.name,
        fn=_never_called if child is not None else v.fn,
        takes_ctx=child is None and takes_ctx(v.fn, f"vertex {v.name!r}"),
        retry=v.retry if v.retry is not None else graph.retry,
        timeout=v.timeout,
        destinations=v.destinations,
        concurrency=v.concurrency,
        on_error=v.on_error,
        returns=v.returns or _subgraph_returns(v) or graph.returns or "state",
        may_drop=(v.returns or _subgraph_returns(v) or graph.returns) == "state",
        child=child,
        resources=v.resources,
        flow=v.flow,
        cache=v.cache,
        defer=v.defer,
    )


def _subgraph_returns(v: Any) -> str | None:
    """What a subgraph vertex returns: an update when its result holds some keys only, else a state.

    Its result holds some keys only when `output` maps the final state, or the
    subgraph has an output schema.
    """
    if v.child is None:
        return None
    return "update" if v.output is not None or _has_output_schema(v.child) else "state"


def _has_output_schema(child: Any) -> bool:
    """Whether a subgraph (a `Graph`, or a compiled one) returns its output schema's keys only."""
    if isinstance(child, GraphBuilder):
        return child.output is not None
    return child.spec.output_schema is not None


def _child_spec(v: Any, within: tuple[GraphBuilder[Any], ...]) -> ChildSpec:
    """The subgraph of vertex `v`, checked (a `Graph` is compiled here; a `CompiledGraph` already was)."""
    child = v.child
    if isinstance(child, GraphBuilder):
        if any(child is outer for outer in within):
            path = " -> ".join(g.name for g in (*within, child))
            msg = (
                f"vertex {v.name!r} runs graph {child.name!r}, which contains it ({path}): "
                "a graph cannot contain itself; give the inner run a graph of its own"
            )
            raise GraphValidationError(msg)
        return ChildSpec(build_spec(child, within=within), v.input, v.output, None)
    pauses = child._settings.breakpoints  # noqa: SLF001 - a compiled subgraph's own breakpoints
    stateful = child._settings.stateful  # noqa: SLF001 - compiled with checkpointer=True
    return ChildSpec(child.spec, v.input, v.output, child.checkpointer, pauses.before, pauses.after, stateful)


def check_child_checkpointers(spec: GraphSpec, checkpointer: Any, path: str = "") -> None:
    """Refuse a compiled subgraph whose checkpointer is not its parent's.

    A subgraph's runs are kept in its parent's threads, under the parent's
    checkpointer; a subgraph compiled without one shares its parent's.

    Raises:
        GraphValidationError: naming the subgraph vertex.
    """
    for vertex in spec.vertices.values():
        child = vertex.child
        if child is None:
            continue
        where = f"{path}/{vertex.name}" if path else vertex.name
        if child.checkpointer is not None and child.checkpointer is not checkpointer:
            msg = (
                f"subgraph vertex {where!r} was compiled with a checkpointer of its own "
                f"({type(child.checkpointer).__name__}), not its parent's "
                f"({type(checkpointer).__name__ if checkpointer is not None else 'none'}): a subgraph's "
                "runs are kept in its parent's threads; compile the subgraph without a checkpointer"
            )
            raise GraphValidationError(msg)
        check_child_checkpointers(child.spec, checkpointer, where)


def _never_called(state: Any) -> Any:  # noqa: ARG001 - a subgraph vertex's task runs its subgraph instead
    msg = "a subgraph vertex's function is never called"
    raise GraphValidationError(msg)


def _check_exits(
    vertices: dict[str, Any],
    edges: dict[str, list[str]],
    routers: dict[str, list[RouterSpec]],
    joins_from: dict[str, list[JoinSpec]],
) -> None:
    for name, v in vertices.items():
        if name not in edges and name not in routers and name not in joins_from and not v.destinations:
            msg = (
                f"vertex {name!r} has no way out: no edge, router or destinations leave it; "
                f"add an edge to END (add_edge({name!r}, END)) if it ends the run"
            )
            raise GraphValidationError(msg)


def _check_reachable(
    vertices: dict[str, Any],
    edges: dict[str, list[str]],
    routers: dict[str, list[RouterSpec]],
    joins: list[JoinSpec],
) -> None:
    reached: set[str] = set()
    for targets in edges.values():
        reached.update(targets)
    for join in joins:
        reached.add(join.target)
    open_routers = [r.source for rs in routers.values() for r in rs if r.path_map is None]
    for rs in routers.values():
        for r in rs:
            reached.update((r.path_map or {}).values())
    for v in vertices.values():
        reached.update(v.destinations or ())
    for name in vertices:
        if name in reached:
            continue
        if open_routers:
            warnings.warn(
                f"vertex {name!r} is reached by no edge, path_map or destinations; only the "
                f"router(s) of {', '.join(map(repr, open_routers))} (no path_map) could reach it",
                GraphValidationWarning,
                stacklevel=4,
            )
            continue
        msg = (
            f"vertex {name!r} is unreachable: no edge, path_map value or destinations entry "
            f"leads to it; add an edge into it, or remove it"
        )
        raise GraphValidationError(msg)
