"""The records actors exchange: orders, outcomes, launches of runs, and what a run needs of the actors.

Small immutable records matched by type (`Order`, `Done`, `TimedOut`,
`StartRun`, `CancelRun`), and the `Launch` of a run: the facade's (or a parent
run's) request, on its way to a coordinator, with the futures its handle keeps.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any, Protocol

import pykka

from actorgraph._actors.cancel import Cancellation
from actorgraph._actors.tracing import Parent
from actorgraph._engine.rewind import Past
from actorgraph._engine.task import TaskEnv
from actorgraph._model.policy import NodeCache
from actorgraph._model.records import UNSET, ErrorInfo, Handoff, Task, VertexResult
from actorgraph._model.results import RunResult
from actorgraph._model.runs import Breakpoints, Durability, RunRequest
from actorgraph._model.spec import GraphSpec
from actorgraph.checkpoint._protocol import Checkpointer
from actorgraph.events import Listener

__all__ = [
    "CancelRun",
    "ChildCall",
    "Done",
    "Flush",
    "Launch",
    "Order",
    "RunOrder",
    "StartRun",
    "TimedOut",
    "Workers",
    "new_run_id",
]


@dataclass(frozen=True, slots=True)
class ChildCall:
    """What a subgraph task's run starts with, besides its input: made by the parent's run.

    Attributes:
        namespace: the run's namespace (`research@2~1a2b3c4d`, nested ones joined by `|`).
        thread_id: the subgraph run's thread (`parent|namespace`), or None when
            the parent keeps no checkpoints.
        store: the parent's checkpointer, or None.
        durability: the parent's durability.
        context: the parent run's `context`.
        recursion_limit: the parent run's recursion limit.
        breakpoints: the breakpoints inside the subgraph (`research/fetch` -> `fetch`).
        listeners: the parent's listeners, tagging events with `namespace`.
        answers: interrupt id -> answer, for the subgraph's pending interrupts.
        memory: the parent's `compile(store=...)` object (the subgraph's `ctx.store`).
        cache: the parent's node cache.
        live: the parent's live-interrupt wait in seconds, or None.
        owner: for a stateful subgraph's run, the parent's task it serves (see `RunOrder.owner`).
        refused: why the task may not run its subgraph (a stateful one given two tasks at once).
        past: for a stateful subgraph's run, where the parent's task stands in its history.
        enclosing: the graphs the parent's run is nested in (`RunRequest.enclosing`).
    """

    namespace: str
    thread_id: str | None
    store: Checkpointer | None
    durability: Durability
    context: Any
    recursion_limit: int
    breakpoints: Breakpoints
    listeners: tuple[Listener, ...]
    answers: Mapping[str, Any] | None = None
    memory: Any = None
    cache: NodeCache | None = None
    live: float | None = None
    owner: str | None = None
    refused: Exception | None = None
    past: Past | None = None
    enclosing: tuple[Any, ...] = ()


@dataclass(frozen=True, slots=True)
class Order:
    """Coordinator -> vertex actor: run one attempt of a task.

    Attributes:
        run_id: the run the task belongs to.
        reply_to: the coordinator to tell the outcome.
        task: the task with its recorded inputs.
        attempt: 1-based attempt number.
        token: identifies this dispatch; late answers to old tokens are discarded.
        env: the run's surroundings.
        cancel: set when the run is cancelled (the order is then dropped, an async vertex cancelled).
        failure: run the vertex's `on_error` handler for this error instead.
        child: for a subgraph task, how its subgraph's run starts.
        trace: the parent of the attempt's span (its superstep's), or None when the run is not traced.
    """

    run_id: str
    reply_to: pykka.ActorRef[Any]
    task: Task
    attempt: int
    token: int
    env: TaskEnv
    cancel: Cancellation
    failure: ErrorInfo | None = None
    child: ChildCall | None = None
    trace: Parent | None = None


@dataclass(frozen=True, slots=True)
class Done:
    """Vertex actor -> coordinator: an attempt's outcome."""

    run_id: str
    token: int
    result: VertexResult
    blobs: Mapping[str, bytes] = field(default_factory=dict)


class Workers(Protocol):
    """What a run needs of the actors of its compiled graph (the `Runtime` provides it)."""

    spec: GraphSpec

    def submit(self, order: Order) -> None:
        """Hand an attempt to an actor of its vertex."""
        ...

    def abandon(self, vertex: str, token: int) -> bool:
        """Give up on the actor running `token` (it overran its timeout); False if it already finished."""
        ...

    def later(self, seconds: float, fn: Callable[[], None]) -> None:
        """Call `fn()` after `seconds` (retry backoff): a timer entry, never a waiting thread."""
        ...


@dataclass(frozen=True, slots=True)
class RunOrder:
    """What a run is asked to do: its store, its options and its input.

    Attributes:
        store: the checkpointer of its graph (its parent's, for a subgraph's run), or None.
        request: the run's options, checked.
        input: the input, checked and copied once on the caller's thread: a state,
            None (continue the thread) or a `Command`.
        fresh: a subgraph's input: the run starts with it when its thread has no
            checkpoint yet, and continues the thread (with `input`) when it has.
        owner: a stateful subgraph's run: the parent's task it serves. A thread whose
            line another task began starts a new line with `fresh`, applied to its state.
        past: with `owner`, where the parent's task stands in its history: a new
            call starts from the subgraph's state as of then (`_engine/rewind.py`).
    """

    store: Checkpointer | None
    request: RunRequest
    input: Any
    fresh: Any = UNSET
    owner: str | None = None
    past: Past | None = None


@dataclass(slots=True)
class Launch:
    """A run on its way to a coordinator: what it is asked, and what its handle keeps.

    Attributes:
        run_id: the invoke's id.
        order: what the run is asked to do; the coordinator builds the run from it.
        workers: the actors of the run's graph.
        future: completed with the run's `RunResult` (or error).
        cancel: set when the run is cancelled.
        stopped: set once the coordinator has let go of the run.
        started: set once the run is built (its thread read, its answers claimed),
            or with the error that building it raised.
        coordinator: the coordinator it was given to.
        nested: a subgraph's run, launched by its parent's run on the parent's coordinator.
        handoff: set when a subgraph's run ends by handing off to its parent.
        trace: the parent of the run's span (the caller's current span), or None when not traced.
    """

    run_id: str
    order: RunOrder
    workers: Workers
    future: Future[RunResult[Any]] = field(default_factory=Future)
    cancel: Cancellation = field(default_factory=Cancellation)
    stopped: Future[None] = field(default_factory=Future)
    started: Future[None] = field(default_factory=Future)
    coordinator: pykka.ActorRef[Any] | None = None
    nested: bool = False
    handoff: Handoff | None = None
    trace: Parent | None = None


@dataclass(frozen=True, slots=True)
class StartRun:
    """Facade (or a parent run) -> coordinator: build a run from its launch and start it."""

    launch: Launch


@dataclass(frozen=True, slots=True)
class CancelRun:
    """Facade -> coordinator: stop a run between supersteps."""

    run_id: str


@dataclass(frozen=True, slots=True)
class Flush:
    """Coordinator -> itself: store the task results that finished since the last write.

    Sent behind the outcomes already waiting in the coordinator's inbox, so
    the results that finished while the store was busy go in one transaction.
    """

    run_id: str


@dataclass(frozen=True, slots=True)
class TimedOut:
    """Timer -> coordinator: the attempt with `token` overran its vertex's timeout."""

    run_id: str
    token: int


_PROCESS = os.urandom(6).hex()
_runs = itertools.count()


def new_run_id() -> str:
    """A run id, unique across processes: a random tag of this process and a counter."""
    return f"{_PROCESS}{next(_runs):x}"
