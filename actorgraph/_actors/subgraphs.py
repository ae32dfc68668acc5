"""The runs of a subgraph vertex's tasks: each task's subgraph runs as a run of its own.

A subgraph task holds no thread while its subgraph runs. Its order launches
the subgraph's run on the parent's own coordinator, and the subgraph's
vertices run in their own pools; when that run ends (done, paused, failed or
handed off), its outcome comes back to the parent's run as the task's `Done`,
like any attempt's. The vertex's `concurrency` bounds how many of its
subgraph runs go at once (orders beyond wait here), its `timeout` cancels a
run that is late, and cancelling the parent cancels the runs of its subgraphs.
"""

from __future__ import annotations

import contextlib
import functools
import threading
from collections import deque
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any, Protocol

import pykka

from actorgraph._actors.attempt_spans import NO_SPAN, AttemptSpan, NoSpan, attempt_span
from actorgraph._actors.cancel import Cancellation
from actorgraph._actors.emitter import Emitter
from actorgraph._actors.messages import (
    CancelRun,
    ChildCall,
    Done,
    Launch,
    Order,
    RunOrder,
    StartRun,
    TimedOut,
    Workers,
    new_run_id,
)
from actorgraph._actors.recorder import Recorder
from actorgraph._actors.setup import RunSetup
from actorgraph._actors.timer import Timer
from actorgraph._engine.nesting import Nest
from actorgraph._engine.rewind import Past
from actorgraph._engine.subgraphs import (
    child_failed,
    child_finished,
    child_input,
    child_paused,
    run_name,
    stateful_clash,
)
from actorgraph._engine.task import Attempt, TaskEnv
from actorgraph._model.errors import ActorGraphError, RunCancelledError
from actorgraph._model.records import NS, Command, Task, VertexResult
from actorgraph._model.runs import RunRequest
from actorgraph._model.spec import GraphSpec, VertexSpec

__all__ = ["ChildRunner", "Parent", "child_call", "child_launch", "nest_for", "past_of"]


@dataclass(slots=True)
class _Running:
    launch: Launch | None
    timer_handle: object = None
    span: AttemptSpan | NoSpan = NO_SPAN  # the task attempt's span, parent of its subgraph run's


class ChildRunner:
    """The subgraph runs of one vertex, on behalf of its parent graph's runs."""

    def __init__(
        self,
        spec: GraphSpec,
        vertex: VertexSpec,
        workers: Workers,
        timer: Callable[[], Timer],
    ) -> None:
        self.spec = spec
        self.vertex = vertex
        self.workers = workers
        self.timer = timer
        self._lock = threading.Lock()
        self._running: dict[int, _Running] = {}  # token -> the run of that order
        self._queue: deque[Order] = deque()
        self._closed = False

    def start(self, order: Order) -> None:
        """Launch the subgraph's run for `order`, or queue it while the vertex is at its bound."""
        with self._lock:
            if self._closed:
                msg = f"the subgraph vertex {self.vertex.name!r} is closed"
                raise ActorGraphError(msg)
            if len(self._running) >= self.vertex.concurrency:
                self._queue.append(order)
                return
            self._running[order.token] = _Running(None)
        self._launch(order)

    def abandon(self, token: int) -> bool:
        """Give up on the run of `token` (it overran the vertex's timeout): cancel it."""
        with self._lock:
            running = self._running.get(token)
        if running is None or running.launch is None:
            return False
        _cancel(running.launch)
        return True

    def stop(self) -> None:
        """Start nothing more (the graph is closing; its coordinators stop the runs)."""
        with self._lock:
            self._closed = True
            self._queue.clear()

    def _launch(self, order: Order) -> None:
        if order.cancel.is_set():  # its parent's run was cancelled while the order waited
            self._next(order.token)
            return
        at = Attempt(order.task, order.attempt, order.env.now(), order.env)
        assert order.child is not None  # noqa: S101 - a subgraph task's order always says how
        try:
            given = child_input(self.spec, order.task, order.env, order.child.refused)
        except Exception as exc:  # noqa: BLE001 - a conflict or a failing input mapper is the task's error
            self._report(order, at.failed(exc, retryable=False))
            self._next(order.token)
            return
        launch = child_launch(order.child, given, self.workers)
        launch.coordinator = order.reply_to
        span = attempt_span(order, current=False)  # the subgraph's run span is its child
        launch.trace = span.runs()
        handle = None
        if self.vertex.timeout is not None:
            late = TimedOut(order.run_id, order.token)
            handle = self.timer().call_later(self.vertex.timeout, lambda: _tell(order, late))
        with self._lock:
            self._running[order.token] = _Running(launch, handle, span)
        forget = order.cancel.on_set(lambda: _cancel(launch))
        launch.future.add_done_callback(lambda future: self._ended(order, at, launch, forget, future))
        try:
            order.reply_to.tell(StartRun(launch))
        except pykka.ActorDeadError:  # the graph was closed meanwhile
            launch.future.cancel()

    def _ended(
        self,
        order: Order,
        at: Attempt,
        launch: Launch,
        forget: Callable[[], None],
        future: Future[Any],
    ) -> None:
        """The subgraph's run ended (on the coordinator's thread): report the task's outcome."""
        forget()
        with self._lock:
            running = self._running.get(order.token)
        if running is not None and running.timer_handle is not None:
            self.timer().cancel(running.timer_handle)
        result = None if order.cancel.is_set() else self._outcome(at, launch, future)
        span = running.span if running is not None else NO_SPAN
        if result is not None:
            span.outcome(result)
            self._report(order, result)
        span.close()
        self._next(order.token)

    def _outcome(self, at: Attempt, launch: Launch, future: Future[Any]) -> VertexResult | None:
        if future.cancelled():
            return None
        error = future.exception()
        if isinstance(error, RunCancelledError):
            return None  # abandoned after its timeout: the parent has recorded that already
        if error is not None:
            return child_failed(at, error)
        outcome = future.result()
        if outcome.status == "interrupted":
            return child_paused(at, outcome.interrupts)
        return child_finished(self.spec, at, outcome.state, launch.handoff)

    def _report(self, order: Order, result: VertexResult) -> None:
        _tell(order, Done(order.run_id, order.token, result))

    def _next(self, token: int) -> None:
        """A run of this vertex ended: launch the next queued one."""
        with self._lock:
            self._running.pop(token, None)
            while True:
                if not self._queue or self._closed:
                    return
                order = self._queue.popleft()
                if not order.cancel.is_set():  # a cancelled run's order is dropped
                    break
            self._running[order.token] = _Running(None)
        self._launch(order)


class Parent(Protocol):
    """What a subgraph task's run takes from its parent's run (a `Run`)."""

    spec: GraphSpec
    workers: Workers
    setup: RunSetup
    recorder: Recorder | None
    env: TaskEnv
    events: Emitter
    tasks: dict[str, Task]


def child_call(parent: Parent, task: Task, answers: Mapping[str, Any] | None) -> ChildCall | None:
    """How the run of a subgraph task's subgraph starts: named, stored and watched under its parent's.

    None when `task` is not a subgraph task.
    """
    child = parent.spec.vertices[task.vertex].child
    if child is None:
        return None
    setup, recorder = parent.setup, parent.recorder
    recorded = recorder is not None and setup.thread_id is not None
    origin = recorder.origin if recorder is not None else ""
    name, owner = run_name(parent.spec, task, origin, recorded=recorded)
    namespace = f"{setup.namespace}{NS}{name}" if setup.namespace else name
    past = past_of(recorder, task.step) if owner is not None and recorder is not None else None
    return ChildCall(
        namespace=namespace,
        thread_id=f"{setup.thread_id}{NS}{name}" if recorded else None,
        store=recorder.checkpointer if recorder is not None else None,
        durability=recorder.durability if recorder is not None else "sync",
        context=parent.env.context,
        recursion_limit=setup.recursion_limit,
        breakpoints=setup.breakpoints.inside(task.vertex, child),
        listeners=parent.events.nested(namespace, inline=child.spec.inline),
        answers=answers,
        memory=parent.env.store,
        cache=parent.env.cache,
        live=parent.env.live,
        owner=owner,
        refused=stateful_clash(parent.spec, task, parent.tasks.values()) if owner is not None else None,
        past=past,
        enclosing=parent.env.enclosing,
    )


def past_of(recorder: Recorder, step: int, task: str = "") -> Past:
    """Where a task of superstep `step` (named `task`) stands in the history its run's `recorder` writes."""
    return Past(recorder.thread_id, recorder.origin, step, recorder.parent, task)


def nest_for(parent: Parent, cancel: Cancellation) -> Nest:
    """What a run offers the graphs its vertices invoke: they nest in its thread (`_engine/nesting.py`)."""
    recorder, setup = parent.recorder, parent.setup
    env = setup.env  # the run's own, before its listeners are added
    return Nest(
        checkpointer=recorder.checkpointer if recorder is not None else None,
        durability=recorder.durability if recorder is not None else "sync",
        thread_id=setup.thread_id,
        namespace=setup.namespace,
        origin=recorder.origin if recorder is not None else "",
        listeners=parent.events.nested,
        context=env.context,
        recursion_limit=setup.recursion_limit,
        cancelled=cancel.on_set,
        store=env.store,
        cache=env.cache,
        spec=parent.spec,
        past=functools.partial(past_of, recorder) if recorder is not None else None,
        live=env.live,
        enclosing=(parent.workers, *env.enclosing),  # closing any of them frees what waits live in them
    )


def child_launch(call: ChildCall, given: Any, workers: Workers) -> Launch:
    """The launch of a subgraph's run: it continues its thread if it has one, else starts with `given`.

    A subgraph's run whose thread has a checkpoint is answered when its parent was
    (`call.answers`), and otherwise continued; it runs on its parent's coordinator.
    A stateful subgraph's thread is continued only by the task that began its
    line (`call.owner`); another task's call applies `given` to its state.
    """
    request = RunRequest(
        thread_id=call.thread_id,
        context=call.context,
        recursion_limit=call.recursion_limit,
        checkpoint_id=None,
        durability=call.durability,
        breakpoints=call.breakpoints,
        discard_pending=call.owner is not None,  # a stateful subgraph's new call ends what another left
        listeners=call.listeners,
        namespace=call.namespace,
        store=call.memory,
        cache=call.cache,
        live=call.live,
        enclosing=call.enclosing,
    )
    answered = Command(resume=call.answers) if call.answers else None
    order = RunOrder(call.store, request, answered, fresh=given, owner=call.owner, past=call.past)
    return Launch(new_run_id(), order, workers, nested=True)


def _tell(order: Order, message: object) -> None:
    with contextlib.suppress(pykka.ActorDeadError):  # the graph was closed meanwhile
        order.reply_to.tell(message)


def _cancel(launch: Launch) -> None:
    """Cancel a subgraph's run: nothing new starts in it, and its coordinator lets go of it."""
    launch.cancel.set()
    if launch.coordinator is not None:
        with contextlib.suppress(pykka.ActorDeadError):
            launch.coordinator.tell(CancelRun(launch.run_id))
