"""What a run starts with (`Launch`, `RunSetup`), and what it needs of the actors (`Workers`).

A run is launched in two halves. The caller's thread checks and copies the
input, and hands a `Launch` to a coordinator; the coordinator reads the thread's
checkpoint, prepares the `RunSetup` and runs it. So `start()` never waits for a
store, and the caller's thread is free as soon as the launch is sent.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any, Protocol

from actorgraph._actors.cancel import Cancellation
from actorgraph._actors.messages import Order
from actorgraph._actors.recorder import Recorder
from actorgraph._engine.task import TaskEnv
from actorgraph._model.records import Position, VertexResult
from actorgraph._model.results import RunResult
from actorgraph._model.spec import ChildSpec, GraphSpec
from actorgraph.events import Listener

__all__ = ["Breakpoints", "ChildCall", "Launch", "RunSetup", "Workers"]


@dataclass(frozen=True, slots=True)
class Breakpoints:
    """Where a run pauses by itself: before or after some vertices ("*" for all)."""

    before: frozenset[str] = frozenset()
    after: frozenset[str] = frozenset()

    def stops_before(self, vertex: str) -> bool:
        """True when the run pauses before `vertex` runs."""
        return vertex in self.before or "*" in self.before

    def stops_after(self, vertex: str) -> bool:
        """True when the run pauses after the superstep in which `vertex` ran."""
        return vertex in self.after or "*" in self.after

    def inside(self, vertex: str, child: ChildSpec | None = None) -> Breakpoints:
        """The breakpoints of the subgraph of `vertex` (`research/fetch` -> `fetch`).

        A compiled subgraph's own `interrupt_before/after` (in `child`) hold too.
        """
        prefix = f"{vertex}/"

        def within(names: frozenset[str], own: frozenset[str]) -> frozenset[str]:
            return own | {name.removeprefix(prefix) for name in names if name.startswith(prefix)}

        if child is None:
            return Breakpoints(within(self.before, frozenset()), within(self.after, frozenset()))
        return Breakpoints(within(self.before, child.before), within(self.after, child.after))


@dataclass(slots=True)
class Launch:
    """A run on its way to a coordinator: what its handle keeps, and how the coordinator builds it.

    Attributes:
        run_id: the invoke's id.
        build: makes the `Run` (on the coordinator's thread: it may read the store);
            what it raises is the run's error.
        future: completed with the run's `RunResult` (or error).
        cancel: set when the run is cancelled.
        stopped: set once the coordinator has let go of the run.
        started: set once the run is built (its thread read, its answers claimed),
            or with the error that building it raised.
        coordinator: the coordinator it was given to.
        nested: a subgraph's run, launched by its parent's run on the parent's coordinator.
        run: the run, once built.
    """

    run_id: str
    build: Callable[[Launch], Any]
    future: Future[RunResult[Any]] = field(default_factory=Future)
    cancel: Cancellation = field(default_factory=Cancellation)
    stopped: Future[None] = field(default_factory=Future)
    started: Future[None] = field(default_factory=Future)
    coordinator: Any = None
    nested: bool = False
    run: Any = None


@dataclass(frozen=True, slots=True)
class RunSetup:
    """Everything a run is started with.

    Attributes:
        run_id: the invoke's id.
        thread_id: the thread, or None.
        position: where the run starts (after its input, or a checkpoint).
        env: the surroundings handed to every task.
        recursion_limit: the most supersteps this invoke may run.
        breakpoints: where the run pauses by itself.
        listeners: callables that receive the run's events.
        recorder: writes the run to its checkpointer, or None.
        pending: the results of the checkpoint's unfinished superstep, by task id.
        answers: resume values for interrupted tasks, by task id.
        passed: task ids whose `interrupt_before` breakpoint is passed.
        record_start: write the starting position as a checkpoint first.
        nested: a subgraph's run (it may hand off to its parent with `Command(graph=PARENT)`).
        namespace: a subgraph's run's namespace ("" for a top-level run).
    """

    run_id: str
    thread_id: str | None
    position: Position
    env: TaskEnv
    recursion_limit: int
    breakpoints: Breakpoints = Breakpoints()
    listeners: tuple[Listener, ...] = ()
    recorder: Recorder | None = None
    pending: Mapping[str, VertexResult] = field(default_factory=dict)
    answers: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    passed: frozenset[str] = frozenset()
    record_start: bool = False
    nested: bool = False
    namespace: str = ""


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
    """

    namespace: str
    thread_id: str | None
    store: Any
    durability: Any
    context: Any
    recursion_limit: int
    breakpoints: Breakpoints
    listeners: tuple[Listener, ...]
    answers: Mapping[str, Any] | None = None


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
