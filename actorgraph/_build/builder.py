"""Building a graph: vertices, plain edges, joins and conditional edges.

`GraphBuilder` collects the user's declarations and checks each one as it is
made (so the error points at the line that caused it); `_validate.py` checks
the whole graph when it is compiled and produces the frozen `GraphSpec`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Final, Generic, Literal, TypeAlias, TypeVar, Unpack

from actorgraph._build.functions import destinations_of, name_of
from actorgraph._build.options import (
    VertexOptions,
    cache_policy_of,
    check_endpoint,
    check_name,
    check_option_names,
    defer_of,
    policies_of,
    resources_of,
)
from actorgraph._engine.call import is_async
from actorgraph._model.dataflow import DataFlow, data_flow
from actorgraph._model.errors import GraphValidationError
from actorgraph._model.policy import CachePolicy, RetryPolicy
from actorgraph._model.records import END, START
from actorgraph._model.spec import Face
from actorgraph.merge import Merge

__all__ = ["RETURNS", "GraphBuilder", "Returns", "is_subgraph"]

S = TypeVar("S")

DEFAULT_CONCURRENCY = 32  # a blocking vertex: each running task holds a thread
ASYNC_CONCURRENCY = 1_000_000  # an async vertex: an awaiting task holds no thread, so no bound unless asked


Returns: TypeAlias = Literal["state", "update"]
RETURNS: Final = ("state", "update")


@dataclass(slots=True)
class _Vertex:
    name: str
    fn: Callable[..., Any]
    retry: tuple[RetryPolicy, ...] | None
    timeout: float | None
    destinations: tuple[str, ...] | None
    concurrency: int
    on_error: Callable[..., Any] | None
    returns: Returns | None
    input: Callable[[Any], Any] | None = None
    output: Callable[[Any], Any] | None = None
    resources: Mapping[str, float] | None = None
    flow: DataFlow | None = None
    cache: CachePolicy | None = None
    defer: bool = False

    @property
    def child(self) -> Any:
        """The subgraph this vertex runs (a `Graph` or a `CompiledGraph`), or None."""
        return self.fn if is_subgraph(self.fn) else None


@dataclass(slots=True)
class _Router:
    source: str
    fn: Callable[..., Any]
    path_map: dict[Any, str] | None


class GraphBuilder(Generic[S]):
    """The declarations of a graph, before it is compiled."""

    inline: bool = False  # its runs stream their custom data as the task running them's (`GraphSpec`)
    face: Face | None = None  # how callers see its state, a record of its own (`GraphSpec.face`)

    def __init__(  # noqa: PLR0913 - the graph's options, all keyword-only
        self,
        merge: Merge | None = None,
        *,
        name: str | None = None,
        retry: RetryPolicy | Sequence[RetryPolicy] | None = None,
        state: type[S] | None = None,
        input: type | None = None,  # noqa: A002 - LangGraph's input_schema, by our vertices' word
        output: type | None = None,
        returns: Returns | None = None,
        globals: Mapping[str, Any] | None = None,  # noqa: A002 - the graph file's `global` section
    ) -> None:
        """Start an empty graph.

        Args:
            merge: `merge(base, states)` for fan-ins; default: the reducers the
                schema declares (`Annotated[list, append]`), else three-way per key.
            name: the graph's name, used in logs and pictures.
            retry: the retry policy (or policies) of vertices that declare none.
            state: an optional schema (a TypedDict, dataclass or pydantic model):
                the input, every vertex's output and every update are checked
                against it, and states have its type.
            input: the schema a run's input must fit (default: `state`); keys of
                `state` it lacks are the vertices' own. A subgraph sees these keys only.
            output: the schema of a run's result (default: `state`): `RunResult.state`
                holds its keys only; a subgraph returns them to its parent as an update.
            returns: what vertices return by default: `"state"` (the whole new
                state) or `"update"` (only the keys they change, applied to
                their input through the reducers, as in LangGraph). Left out,
                vertices return whole states, and one that returns a mapping
                missing keys of its input is an `InvalidUpdateError` (so a
                LangGraph-style partial return never deletes the rest); say
                `"state"` to let whole-state vertices delete keys by leaving them out.
            globals: read-only constants that vertices' `inputs` name as `global.KEY`.
        """
        if merge is not None and not callable(merge):
            msg = f"Graph(merge=...) must be a function merge(base, states), got {merge!r}"
            raise GraphValidationError(msg)
        self.merge = merge
        self.name = name or "graph"
        self.retry = policies_of(retry, "Graph(retry=...)")
        self.state, self.input, self.output = state, input, output  # schemas (`_engine/boundary.py`)
        self.returns = _returns(returns, "Graph(returns=...)") if returns is not None else None
        self.globals: Mapping[str, Any] = MappingProxyType(dict(globals or {}))
        self.pause_before: tuple[str, ...] = ()  # compile()'s default breakpoints (a graph file's)
        self.pause_after: tuple[str, ...] = ()
        self._vertices: dict[str, _Vertex] = {}
        self._edges: dict[tuple[str, str], None] = {}  # in order; finds an edge added twice in O(1)
        self._joins: list[tuple[tuple[str, ...], str]] = []
        self._routers: list[_Router] = []

    def add_vertex(
        self, name: str | Any, fn: Callable[..., Any] | Any = None, **options: Unpack[VertexOptions]
    ) -> GraphBuilder[S]:
        """Add a vertex: `add_vertex("name", fn)`, or `add_vertex(fn)` named after `fn`.

        Args:
            name: a unique name (not START or END, no `:`, `|` or `/`); or the
                function itself, as LangGraph's `add_node(fn)`: a function is named by
                its `__name__`, a graph, a `ToolNode`, an entrypoint or a task by its
                `name`, an object by its class (a lambda must be named).
            fn: `fn(state)` or `fn(state, ctx)`; returns the new state, None
                (forward the input), or a `Command`. Or a subgraph: a `Graph` or
                a `CompiledGraph`, whose runs are nested in this graph's (see
                `input` and `output`); the graph's `retry` applies to it too
                (`retry=[]` for none). A return annotation `Command[Literal["a", "b"]]`
                declares `destinations=("a", "b")`.
            **options: the vertex's options (`VertexOptions`): `retry`, `timeout`,
                `destinations`, `concurrency`, `on_error`, `returns`, `input`,
                `output`, `inputs`, `outputs`, `resources`, `cache`, `defer`.

        Returns:
            The graph, for chaining.

        Raises:
            GraphValidationError: a bad name or option, naming the vertex.
        """
        if fn is None and not isinstance(name, str):
            name, fn = name_of(name, f"add_vertex({name!r:.60})"), name
        elif fn is None:
            msg = f"add_vertex({name!r:.60}) has no function: add_vertex({name!r:.60}, fn), or add_vertex(fn)"
            raise GraphValidationError(msg)
        self._new_name(name)
        check_option_names(name, options)
        given = dict(options)
        if given.get("destinations") is None and (declared := destinations_of(fn)) is not None:
            given["destinations"] = declared
        expand = getattr(type(fn), "__actorgraph_vertex__", None)
        if expand is not None:  # a prebuilt vertex (ToolNode) that runs as a subgraph of its own
            fn, given = expand(fn, self, name, given)
        self._vertices[name] = _checked_vertex(name, fn, given, self.globals)
        return self

    def add_sequence(self, vertices: Sequence[Any]) -> GraphBuilder[S]:
        """Add vertices that run one after the other, as LangGraph's `add_sequence`: `a -> b -> c`.

        Args:
            vertices: functions (each named as `add_vertex(fn)` names it) or
                `(name, fn)` pairs, in the order they run. Add the edge into the
                first (`add_edge(START, "a")`) and out of the last yourself.

        Returns:
            The graph, for chaining.

        Raises:
            GraphValidationError: an empty sequence, or a name that is taken (naming it).
        """
        if isinstance(vertices, (str, bytes)) or not isinstance(vertices, Sequence) or not vertices:
            msg = "add_sequence takes a non-empty list of functions or (name, fn) pairs"
            raise GraphValidationError(msg)
        previous: str | None = None
        for item in vertices:
            if isinstance(item, tuple) and len(item) == 2:  # noqa: PLR2004 - a (name, fn) pair
                name, fn = item
            else:
                name, fn = name_of(item, "add_sequence"), item
            if name in self._vertices:
                msg = (
                    f"add_sequence: vertex {name!r} exists already; name each step: "
                    f"add_sequence([({name!r}, fn), ('{name}_2', other), ...])"
                )
                raise GraphValidationError(msg)
            self.add_vertex(name, fn)
            if previous is not None:
                self.add_edge(previous, name)
            previous = name
        return self

    def _new_name(self, name: Any) -> None:
        check_name(name)
        if name in self._vertices:
            msg = f"vertex {name!r} was added twice; give each vertex a unique name"
            raise GraphValidationError(msg)

    def add_edge(self, src: str | Sequence[str], dst: str) -> GraphBuilder[S]:
        """Add an edge `src -> dst`, or a join `[a, b] -> dst`.

        A join's target runs once every listed source has delivered to it since
        its last run, with all their states merged.

        Returns:
            The graph, for chaining.

        Raises:
            GraphValidationError: an argument that is not a vertex name (or a list
                of them), an edge into START or out of END, or one added twice.
        """
        call = f"add_edge({src!r:.60}, {dst!r:.60})"
        check_endpoint(dst, "target", call)
        if not isinstance(src, (list, tuple)):
            check_endpoint(src, "source", call)
        if dst == START:
            msg = f"edge {src!r} -> START: nothing may lead into START"
            raise GraphValidationError(msg)
        if isinstance(src, str):
            if src == END:
                msg = f"edge END -> {dst!r}: nothing may leave END"
                raise GraphValidationError(msg)
            if (src, dst) in self._edges:
                msg = f"edge {src!r} -> {dst!r} was added twice"
                raise GraphValidationError(msg)
            self._edges[src, dst] = None
            return self
        return self._add_join(tuple(src), dst, call)

    def _add_join(self, sources: tuple[str, ...], dst: str, call: str) -> GraphBuilder[S]:
        if not sources:
            msg = f"{call}: a join needs a list of vertex names"
            raise GraphValidationError(msg)
        for source in sources:
            check_endpoint(source, "source", call)
        if len(set(sources)) != len(sources):
            msg = f"join {list(sources)} -> {dst!r} lists a source twice"
            raise GraphValidationError(msg)
        if START in sources or END in sources:
            msg = f"join {list(sources)} -> {dst!r}: START and END cannot be join sources"
            raise GraphValidationError(msg)
        if dst == END:
            msg = (
                f"join {list(sources)} -> END: join into a vertex; every state reaching END is merged anyway"
            )
            raise GraphValidationError(msg)
        self._joins.append((sources, dst))
        return self

    def add_conditional_edges(
        self,
        src: str,
        router: Callable[..., Any],
        path_map: Mapping[Any, str] | Sequence[str] | None = None,
    ) -> GraphBuilder[S]:
        """Route `src`'s new state with `router(state)` (or `router(state, ctx)`).

        The router returns a vertex name (or END), a key of `path_map`, a `Send`,
        or a list of those.

        Args:
            src: the vertex (or START) whose output is routed.
            router: the routing function.
            path_map: answer -> target; a list means the answers are the targets.

        Returns:
            The graph, for chaining.
        """
        check_endpoint(src, "source", f"add_conditional_edges({src!r:.60}, ...)")
        if src == END:
            msg = "add_conditional_edges(END, ...): nothing may leave END"
            raise GraphValidationError(msg)
        if not callable(router):
            msg = f"the router of {src!r} must be callable, got {type(router).__name__}"
            raise GraphValidationError(msg)
        mapping: dict[Any, str] | None
        if path_map is None:
            mapping = None
        elif isinstance(path_map, Mapping):
            mapping = dict(path_map)
        elif isinstance(path_map, (list, tuple)):
            mapping = {target: target for target in path_map}
        else:
            msg = f"the path_map of {src!r} must be a dict or a list, got {type(path_map).__name__}"
            raise GraphValidationError(msg)
        self._routers.append(_Router(src, router, mapping))
        return self


def _checked_vertex(name: str, fn: Any, options: dict[str, Any], constants: Mapping[str, Any]) -> _Vertex:
    get = options.get
    timeout, retry, returns, destinations = get("timeout"), get("retry"), get("returns"), get("destinations")
    _check_options(name, fn, timeout, get("concurrency"), get("on_error"))
    _check_mappers(name, fn, get("input"), get("output"))
    if is_subgraph(fn) and (get("inputs") is not None or get("outputs") is not None):
        msg = f"vertex {name!r} is a subgraph: map its state with input= and output=, not inputs=/outputs="
        raise GraphValidationError(msg)
    if isinstance(destinations, str):
        destinations = (destinations,)
    return _Vertex(
        name,
        fn,
        policies_of(retry, f"vertex {name!r}: retry") if retry is not None else None,
        float(timeout) if timeout is not None else None,
        tuple(destinations) if destinations is not None else None,
        get("concurrency") or (ASYNC_CONCURRENCY if is_async(fn) else DEFAULT_CONCURRENCY),
        get("on_error"),
        _returns(returns, f"vertex {name!r}: returns") if returns is not None else None,
        get("input"),
        get("output"),
        resources_of(name, get("resources")),
        data_flow(name, get("inputs"), get("outputs"), constants),
        cache_policy_of(name, get("cache"), subgraph=is_subgraph(fn)),
        defer_of(name, get("defer")),
    )


def is_subgraph(fn: Any) -> bool:
    """Whether `fn` is a graph to run as a subgraph: a `Graph` or a `CompiledGraph`."""
    if isinstance(fn, GraphBuilder):
        return True
    return all(hasattr(fn, name) for name in ("spec", "checkpointer", "invoke"))  # a CompiledGraph


def _check_mappers(name: str, fn: Any, input_: Any, output: Any) -> None:
    for what, mapper in (("input", input_), ("output", output)):
        if mapper is None:
            continue
        if not is_subgraph(fn):
            msg = f"vertex {name!r}: {what}= maps a subgraph's state; {name!r} is not a subgraph"
            raise GraphValidationError(msg)
        if not callable(mapper):
            msg = f"vertex {name!r}: {what}= must be a function of one state, got {type(mapper).__name__}"
            raise GraphValidationError(msg)


def _check_options(name: str, fn: Any, timeout: Any, concurrency: Any, on_error: Any) -> None:
    if is_subgraph(fn):
        fn = _subgraph_stand_in
    if not callable(fn):
        msg = f"vertex {name!r}: fn must be callable, got {type(fn).__name__}"
        raise GraphValidationError(msg)
    if timeout is not None and not (isinstance(timeout, (int, float)) and timeout > 0):
        msg = f"vertex {name!r}: timeout must be a positive number of seconds, got {timeout!r}"
        raise GraphValidationError(msg)
    if concurrency is not None and not (isinstance(concurrency, int) and concurrency >= 1):
        msg = f"vertex {name!r}: concurrency must be an int >= 1, got {concurrency!r}"
        raise GraphValidationError(msg)
    if on_error is not None and not callable(on_error):
        msg = f"vertex {name!r}: on_error must be callable handler(state, error)"
        raise GraphValidationError(msg)


def _subgraph_stand_in(state: Any) -> Any:  # a subgraph vertex's `fn` is never called
    return state


def _returns(value: Any, what: str) -> Returns:
    if value not in RETURNS:
        msg = f"{what} must be 'state' (the whole new state) or 'update' (the keys it changes), got {value!r}"
        raise GraphValidationError(msg)
    return value  # type: ignore[no-any-return]
