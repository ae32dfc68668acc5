"""Graphs invoked from inside a vertex function: what a run offers them, so that they nest.

A compiled graph (or a functional-API `@task`) invoked inside a running vertex
of a run on threads runs as a run nested in the invoking task: checkpointed in
the run's thread under the task's namespace (`vertex@step~line#k`, `k` counting
the task's invocations in call order), streaming into the run's listeners
tagged with that namespace, and pausing the invoking task when it pauses: its
questions are the task's (`VertexResult.nested`), answered through the run's
thread, and the task runs again with them. Records only; the actors build a
run's `Nest`, the task runner makes each attempt's `NestFrame` current, and the
facade (`_api/nesting.py`) launches the nested runs.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from actorgraph._engine.context import NestedPause
from actorgraph._engine.rewind import Past
from actorgraph._model.records import NS, Interrupt, Task
from actorgraph._model.spec import GraphSpec

__all__ = ["Nest", "NestFrame", "NoNest", "first_slot"]

_COUNTING = threading.Lock()  # a vertex may invoke graphs from several threads of its own


@dataclass(frozen=True, slots=True)
class NoNest:
    """The frame of a task attempt whose invocations cannot nest: a vertex run in a Ray worker.

    The worker is another process than the run's coordinator and checkpointer,
    so a graph invoked there could only run unrecorded: an invocation that would
    nest is refused instead (`_api/nesting.nested_order`). The Ray backend
    refuses at compile the vertices whose code names a graph or a task.

    Attributes:
        vertex: the vertex that runs.
    """

    vertex: str


def first_slot(label: str) -> str:
    """The name of the first graph a vertex invokes under `label` (`NestFrame.slot`)."""
    return label.replace(NS, "_")  # the namespace's separator would split the name


@dataclass(frozen=True, slots=True)
class Nest:
    """What a run offers the graphs its vertices invoke.

    Attributes:
        checkpointer: the run's checkpointer, or None.
        durability: the run's durability.
        thread_id: the run's thread, or None.
        namespace: the run's namespace ("" for a top-level run).
        origin: the line of the thread's history the run continues (names nested runs).
        listeners: namespace -> the run's listeners, tagging events with it.
        context: the run's `context=` object.
        recursion_limit: the run's recursion limit.
        cancelled: registers a callback for when the run is cancelled (returns its remover).
        store: the run's `ctx.store` object.
        cache: the run's node cache.
        spec: the run's graph (whose vertices invoke the graphs: `History` reads their runs by it).
        past: (superstep, task name) -> where the task stands in the run's history (a recorded
            run's; see `_engine/rewind.py`: a stateful graph's new call starts from its state then).
        live: seconds a vertex that asks waits in its actor (the run's `live_interrupts`), or None.
        enclosing: the run's graph (its runtime) and those the run is nested in: the
            graphs a nested run's vertices wait live inside (`RunRequest.enclosing`).
    """

    checkpointer: Any
    durability: Any
    thread_id: str | None
    namespace: str
    origin: str
    listeners: Callable[..., tuple[Any, ...]]
    context: Any
    recursion_limit: int
    cancelled: Callable[[Callable[[], None]], Callable[[], None]]
    store: Any = None
    cache: Any = None
    spec: GraphSpec | None = None
    past: Callable[[int, str], Past] | None = None
    live: float | None = None
    enclosing: tuple[Any, ...] = ()


class NestFrame:
    """One task attempt's invocations: numbered in call order, each one's handle kept.

    Made for every task attempt on threads, so it is small until a graph is invoked.

    Attributes:
        nest: the run's offer.
        task: the invoking task (its `answers` go to the nested runs).
        calls: how many graphs the attempt has invoked so far.
        started: the handles of the runs it started, in call order.
    """

    __slots__ = ("_slots", "calls", "nest", "started", "task")

    def __init__(self, nest: Nest, task: Task) -> None:
        """A frame for an attempt of `task` in the run that offers `nest`."""
        self.nest = nest
        self.task = task
        self.calls = 0
        self.started: list[Any] = []
        self._slots: dict[int, tuple[object, str]] | None = None  # id(graph) -> (graph, its slot)

    def slot(self, graph: object, label: str) -> str:
        """The name of `graph` among the distinct graphs the attempt invokes: its label, made unique.

        The first graph invoked under a label is named by it; another graph under
        the same label (two graphs both left unnamed) gets `label~1`, `label~2`,
        in the order the attempt first invokes them, the same in every attempt
        that invokes them in the same order. So two stateful graphs invoked in
        one vertex keep two states, and each nested run names the graph that made it.
        """
        base = first_slot(label)
        with _COUNTING:
            if self._slots is None:
                self._slots = {}
            held = self._slots.get(id(graph))
            if held is not None and held[0] is graph:
                return held[1]
            taken = {name for _, name in self._slots.values()}
            name, n = base, 0
            while name in taken:
                n += 1
                name = f"{base}~{n}"
            self._slots[id(graph)] = (graph, name)
            return name

    def next_call(self) -> int:
        """The number of the next invocation (0 first)."""
        with _COUNTING:
            number = self.calls
            self.calls += 1
            return number

    def settle(self) -> None:
        """Wait until every run the attempt started has stopped (done, paused, failed or cancelled).

        A vertex may return, fail or pause while a graph it invoked still runs (a
        `@task` future it never read): that run's checkpoints are the attempt's,
        so the attempt is not reported until they are all written; else the next
        attempt would race them for the nested thread's head.
        """
        if self.started:
            import concurrent.futures  # noqa: PLC0415 - only attempts that invoked graphs wait here

            concurrent.futures.wait([h.stopped for h in self.started])

    async def settled(self) -> None:
        """`settle` for an async attempt: awaits the runs, holding no thread."""
        if not self.started:
            return
        import asyncio  # noqa: PLC0415 - only async vertices that invoke graphs get here

        await asyncio.gather(
            *(asyncio.wrap_future(h.stopped) for h in list(self.started)), return_exceptions=True
        )

    def pause(self, interrupts: tuple[Interrupt, ...]) -> NestedPause:
        """The signal that pauses the task: the invoked runs' questions, named by path (`vertex/inner`)."""
        task = self.task
        seen: dict[str, Interrupt] = {}
        for i in interrupts:
            seen.setdefault(i.id, Interrupt(i.id, f"{task.vertex}/{i.vertex}", i.value, task.id, i.kind))
        return NestedPause(tuple(seen.values()))
