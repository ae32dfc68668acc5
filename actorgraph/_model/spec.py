"""The frozen, validated description of a graph that every run reads.

Built by `Graph.compile()` (see `_validate.py`); read by the pure superstep logic
and the actors. Records only: no behaviour beyond small lookups.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from actorgraph._model.dataflow import DataFlow
from actorgraph._model.policy import CachePolicy, RetryPolicy
from actorgraph._model.records import Merge
from actorgraph._model.schema import Schema

__all__ = ["FACE_KEY", "ChildSpec", "Face", "GraphSpec", "JoinSpec", "RouterSpec", "VertexSpec"]

FACE_KEY = "graph_face"
"""The thread label naming the face of the graph that made it (`Face.name`), for readers without it."""


@dataclass(frozen=True, slots=True)
class ChildSpec:
    """A subgraph vertex's graph, and how its state maps to the parent's.

    Attributes:
        spec: the subgraph.
        input: parent state -> the subgraph's input, or None (the task's input as it is).
        output: the subgraph's final state -> what the vertex returns, or None (as it is).
        checkpointer: the checkpointer the subgraph was compiled with, if any
            (it must be the parent's: a subgraph's runs are kept in the parent's threads).
        before: the vertices a compiled subgraph pauses before (its `interrupt_before`).
        after: the vertices a compiled subgraph pauses after (its `interrupt_after`).
        stateful: the subgraph was compiled with `checkpointer=True`: it keeps one
            state per thread of its parent, which each of its runs continues.
    """

    spec: GraphSpec
    input: Callable[[Any], Any] | None = None
    output: Callable[[Any], Any] | None = None
    checkpointer: Any = None
    before: frozenset[str] = frozenset()
    after: frozenset[str] = frozenset()
    stateful: bool = False


@dataclass(frozen=True, slots=True)
class VertexSpec:
    """One vertex: its function and its options.

    Attributes:
        name: the vertex name.
        fn: the user function, `fn(state)` or `fn(state, ctx)`.
        takes_ctx: whether `fn` receives the `Context` (decided once, at compile time).
        retry: the retry policies, first match decides; empty means one attempt.
        timeout: seconds a task may run before it is abandoned, or None.
        destinations: where `Command(goto=...)` may route, or None for anywhere.
        concurrency: the most actors this vertex runs at once.
        on_error: `handler(state, error)` run after the retries are spent, or None.
        returns: "state" (fn returns the whole new state) or "update" (the keys it changes).
        may_drop: a whole-state vertex may delete keys by leaving them out of the
            mapping it returns (`returns="state"` was said, for it or its graph);
            otherwise leaving keys out is an `InvalidUpdateError`.
        child: for a subgraph vertex, its graph (then `fn` is never called).
        resources: what a worker running it must hold (distributed backends), or None.
        flow: its declared inputs and outputs (`DataFlow`), or None.
        cache: when its tasks may reuse an earlier outcome (`CachePolicy`), or None.
        defer: it runs only when no other vertex has a message waiting.
    """

    name: str
    fn: Callable[..., Any]
    takes_ctx: bool
    retry: tuple[RetryPolicy, ...]
    timeout: float | None
    destinations: tuple[str, ...] | None
    concurrency: int
    on_error: Callable[..., Any] | None
    returns: str
    may_drop: bool = True
    child: ChildSpec | None = None
    resources: Mapping[str, float] | None = None
    flow: DataFlow | None = None
    cache: CachePolicy | None = None
    defer: bool = False


@dataclass(frozen=True, slots=True)
class RouterSpec:
    """A conditional edge: `router(state)` picks where the state goes next.

    Attributes:
        source: the vertex whose output is routed.
        fn: the router.
        path_map: router answer -> target, or None when answers are targets.
        takes_ctx: whether the router receives the `Context`.
    """

    source: str
    fn: Callable[..., Any]
    path_map: Mapping[Any, str] | None = None
    takes_ctx: bool = False


@dataclass(frozen=True, slots=True)
class JoinSpec:
    """A join edge: `target` runs once every source has delivered to it.

    Attributes:
        id: a stable name, `"a+b>c"`.
        sources: the vertices that must all deliver.
        target: the vertex that runs with all their states.
    """

    id: str
    sources: tuple[str, ...]
    target: str


@dataclass(frozen=True, slots=True)
class Face:
    """How callers and readers see a graph whose state is a record of its own (an entrypoint's, a task's).

    The record stays what runs and checkpoints hold; what the graph's callers
    give and are shown (`invoke`, `RunResult`, `get_state`, `update_state`, the
    streams) goes through these functions.

    Attributes:
        name: what a thread of such a graph records it has (`FACE_KEY`): "entrypoint", "task".
        given: a caller's input -> the run's input state.
        shown: a state -> what callers and readers see of it.
        asked: a run's input state -> what its caller gave (the `tasks` stream's `input`).
        written: a value given to `update_state` -> the update that makes the state show it.
        call: each run is one task of the run that made it (a `@task` call): a stream shows its
            result as that run's update (`{name: value}`) and nothing else of it.
    """

    name: str
    given: Callable[[Any], Any]
    shown: Callable[[Any], Any]
    asked: Callable[[Any], Any]
    written: Callable[[Any], Any]
    call: bool = False


@dataclass(frozen=True, slots=True)
class GraphSpec:
    """A validated graph.

    Attributes:
        name: the graph's name (logs, pictures).
        vertices: name -> `VertexSpec`, in the order they were added.
        edges: source (a vertex or START) -> targets of its plain edges.
        routers: source -> its conditional edges.
        joins: every join edge.
        joins_from: source -> the joins it delivers to.
        merge: the merge function.
        schema: the state schema, or None (nothing is checked).
        deferred: the vertices added with `defer=True` (their messages wait while others run).
        input_schema: what a run's input must fit (`Graph(input=...)`), or None: the state schema.
        output_schema: the keys a run's result holds (`Graph(output=...)`), or None: all of them.
        inline: its runs are part of the task that runs them (a `ToolNode`'s tool calls, a
            `@task` call): what their vertices write with `get_stream_writer()` streams as
            that task's, not a subgraph's.
        face: how callers and readers see its state, when it is a record of its own
            (an `@entrypoint`'s graph, a `@task`'s); None: as it is.
    """

    name: str
    vertices: Mapping[str, VertexSpec]
    edges: Mapping[str, tuple[str, ...]]
    routers: Mapping[str, tuple[RouterSpec, ...]]
    joins: tuple[JoinSpec, ...]
    joins_from: Mapping[str, tuple[JoinSpec, ...]]
    merge: Merge
    schema: Schema | None = None
    deferred: frozenset[str] = frozenset()
    input_schema: Schema | None = None
    output_schema: Schema | None = None
    inline: bool = False
    face: Face | None = None

    def checked(self, state: Any, who: str, *, base: Any = None) -> Any:
        """`state` checked against the schema (and given its type); unchanged without one.

        Args:
            state: the state to check.
            who: what made it, for messages.
            base: the checked state it was made from, if any: a pydantic schema
                validates only the values that changed since.

        Raises:
            InvalidUpdateError: the state does not fit the schema.
        """
        return state if self.schema is None else self.schema.check(state, who, base=base)
