"""One run's progress through its supersteps, driven by its coordinator.

A `Run` lives on its coordinator's thread and is only touched there. It plans
each superstep with the pure logic, hands the tasks to the vertex pools,
collects their outcomes (retrying by policy, timing out, running `on_error`
handlers), records them, and commits or pauses the superstep.

A resumed run starts with the pending superstep of its checkpoint: tasks that
ended `ok` are never run again, `error` tasks run again with a fresh retry
budget, and `interrupt` tasks run again only once answered (or, for an
`interrupt_before` breakpoint, once passed).
"""

from __future__ import annotations

import dataclasses
import itertools
import logging
import random
from collections.abc import Mapping
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pykka

from actorgraph._cancel import Cancellation
from actorgraph._context import interrupt_id
from actorgraph._errors import (
    ActorGraphError,
    MergeConflictError,
    RecursionLimitError,
    VertexActorDiedError,
    VertexError,
    VertexTimeoutError,
)
from actorgraph._events import (
    Custom,
    Event,
    Interrupted,
    JoinWaiting,
    Listener,
    RetryScheduled,
    RunFinished,
    RunStarted,
    SuperstepCommitted,
    SuperstepStarted,
    TaskFinished,
    TaskStarted,
    log_fields,
    log_level,
)
from actorgraph._handle import settle
from actorgraph._log import log, stdlib_logger
from actorgraph._messages import Done, Order, TimedOut
from actorgraph._retry import next_delay
from actorgraph._superstep import commit, current_state, final_state, plan, waiting_joins
from actorgraph._task import TaskEnv
from actorgraph._types import (
    ErrorInfo,
    Interrupt,
    Position,
    RunResult,
    RunStatus,
    SuperstepState,
    Task,
    VertexResult,
)

if TYPE_CHECKING:
    from actorgraph._recorder import Recorder
    from actorgraph._runtime import Runtime

__all__ = ["Breakpoints", "Run", "RunSetup"]

_tokens = itertools.count(1)


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


@dataclass(frozen=True, slots=True)
class RunSetup:
    """Everything a run is started with.

    Attributes:
        run_id: the invoke's id.
        thread_id: the thread, or None.
        position: where the run starts (after its input, or a checkpoint).
        env: the surroundings handed to every task.
        recursion_limit: the most supersteps this invoke may run.
        future: completed with the run's `RunResult` (or error).
        recorder: writes the run to its checkpointer, or None.
        pending: the results of the checkpoint's unfinished superstep, by task id.
        answers: resume values for interrupted tasks, by task id.
        passed: task ids whose `interrupt_before` breakpoint is passed.
        breakpoints: where the run pauses by itself.
        record_start: write the starting position as a checkpoint first.
        listeners: callables that receive the run's events.
    """

    run_id: str
    thread_id: str | None
    position: Position
    env: TaskEnv
    recursion_limit: int
    future: Future[RunResult[Any]]
    recorder: Recorder | None = None
    pending: Mapping[str, VertexResult] = field(default_factory=dict)
    answers: Mapping[str, Any] = field(default_factory=dict)
    passed: frozenset[str] = frozenset()
    breakpoints: Breakpoints = Breakpoints()
    record_start: bool = False
    listeners: tuple[Listener, ...] = ()


@dataclass(slots=True)
class _Attempt:
    task_id: str
    attempt: int
    failure: ErrorInfo | None  # set when running the vertex's on_error handler for it


class Run:
    """A run being executed by a coordinator."""

    def __init__(self, runtime: Runtime, setup: RunSetup) -> None:
        self.runtime = runtime
        self.spec = runtime.spec
        self.setup = setup
        self.id = setup.run_id
        self.thread_id = setup.thread_id
        self.pos = setup.position
        self.recorder = setup.recorder
        self.listeners = [(fn, getattr(fn, "kinds", None)) for fn in setup.listeners]
        self.watch_all = any(kinds is None for _, kinds in self.listeners)
        self.kinds: frozenset[type[Event]] = frozenset().union(*(k for _, k in self.listeners if k))
        self.debug = stdlib_logger.isEnabledFor(logging.DEBUG)
        self.env = setup.env
        if self._wants(TaskStarted) or self._wants(Custom):
            self.env = dataclasses.replace(setup.env, listen=self._emit, emit=self._custom)
        self.future = setup.future
        self.cancel_event = Cancellation()
        self.stopped: Future[None] = Future()  # set once the coordinator has dropped the run
        self.coordinator: pykka.ActorRef[Any] | None = None
        self.closed = False
        self.supersteps = 0
        self.pending = dict(setup.pending)
        self.tasks: dict[str, Task] = {}
        self.results: dict[str, VertexResult] = {}
        self.outstanding: dict[int, _Attempt] = {}
        self.handled: set[str] = set()

    # -- events ------------------------------------------------------------------------

    def _wants(self, kind: type[Event]) -> bool:
        """Whether anyone listens to `kind` (frequent events are built only then)."""
        return self.watch_all or self.debug or kind in self.kinds

    def _emit(self, event: Event, *, routine: bool = False) -> None:
        """Log an event and hand it to the listeners that want it (from any thread).

        `routine` events are logged at debug level only: no level lookup unless
        debug logging was on when the run started.
        """
        if (self.debug or not routine) and stdlib_logger.isEnabledFor(log_level(event)):
            level, name, fields = log_fields(event)
            log(level, name, **fields)
        for listener, kinds in self.listeners:
            if kinds is None or type(event) in kinds:
                try:
                    listener(event)
                except Exception:  # noqa: BLE001 - a broken listener must not break the run
                    log("warning", "listener failed", run_id=self.id, listener=repr(listener), exc_info=True)

    def _custom(self, task: Any, payload: Any) -> None:
        self._emit(Custom(self.id, self.thread_id, task.step, task.id, task.vertex, payload))

    def _finished(self, status: str, state: Any = None, error: BaseException | None = None) -> None:
        info = ErrorInfo.from_exception(error) if error is not None else None
        self._emit(RunFinished(self.id, self.thread_id, self.pos.step, status, state, info))

    # -- entry points (called by the coordinator) ---------------------------------

    def begin(self, coordinator: pykka.ActorRef[Any]) -> None:
        """Record the starting position if asked, then start the next superstep."""
        self.coordinator = coordinator
        self._emit(RunStarted(self.id, self.thread_id, self.pos.step))
        head = None
        if self.recorder is not None and self.setup.record_start:
            head = self.recorder.committed(self.pos)
            self.recorder.carry(self.pending.values())
        self._committed(head)
        self._next_superstep()

    def on_done(self, message: Done) -> None:
        """Take an attempt's outcome."""
        attempt = self.outstanding.pop(message.token, None)
        if attempt is None:
            return  # a late answer from an abandoned attempt
        self._settle_attempt(attempt, message.result, message.blobs)

    def on_timeout(self, message: TimedOut) -> None:
        """An attempt overran its vertex's timeout: abandon its actor, record the error."""
        attempt = self.outstanding.get(message.token)
        if attempt is None:
            return
        task = self.tasks[attempt.task_id]
        if not self.runtime.pools[task.vertex].abandon(message.token):
            return  # it finished meanwhile; its Done message is on the way
        del self.outstanding[message.token]
        timeout = self.spec.vertices[task.vertex].timeout
        error = VertexTimeoutError(
            f"vertex {task.vertex!r} (task {task.id!r}) ran longer than its timeout of "
            f"{timeout} s; its actor was abandoned"
        )
        self._settle_attempt(attempt, _failure(task, attempt.attempt, error), {})

    def cancel(self) -> None:
        """Stop: nothing new is dispatched, and outcomes still arriving are dropped."""
        if self.closed:
            return
        self.cancel_event.set()
        self._finished("cancelled")
        self.closed = True

    def crash(self, exc: BaseException) -> None:
        """The coordinator caught `exc` while driving this run: fail the run with it."""
        self.cancel_event.set()
        self._finished("error", error=exc)
        settle(self.future, error=exc)
        self.closed = True

    # -- supersteps ------------------------------------------------------------------

    def _next_superstep(self) -> None:
        if self.cancel_event.is_set():
            self.cancel()
            return
        if self.pos.done:
            self._finish()
            return
        if self.supersteps >= self.setup.recursion_limit:
            msg = (
                f"the run reached its recursion limit of {self.setup.recursion_limit} supersteps "
                f"without finishing (last committed superstep: {self.pos.step}); raise "
                "invoke(..., recursion_limit=...) if the loop is meant to be that long, "
                "or check the condition that should end it"
            )
            self._fail(RecursionLimitError(msg))
            return
        self.supersteps += 1
        tasks = plan(self.pos)
        if self._wants(SuperstepStarted):
            started = SuperstepStarted(self.id, self.thread_id, self.pos.step + 1, tuple(t.id for t in tasks))
            self._emit(started, routine=True)
        self.tasks = {t.id: t for t in tasks}
        self.results = {}
        self.handled = set()
        if not self.pending and not self.setup.breakpoints.before:
            for task in tasks:  # the common case: nothing recorded, no breakpoints
                self._dispatch(task, 1)
        else:
            pending, self.pending = self.pending, {}
            for task in tasks:
                self._start_task(task, pending.get(task.id))
        if not self.outstanding:
            self._end_superstep()

    def _start_task(self, task: Task, old: VertexResult | None) -> None:
        """Dispatch a planned task, or keep its recorded outcome."""
        if old is None:
            if self.setup.breakpoints.stops_before(task.vertex):
                self.results[task.id] = self._breakpoint(task)
            else:
                self._dispatch(task, 1)
            return
        match old.status:
            case "ok":
                self.results[task.id] = old
            case "error" if not old.handler and old.error and self.spec.vertices[task.vertex].on_error:
                # the vertex's failure was final and its handler never finished: run the handler
                self.handled.add(task.id)
                self._dispatch(task, old.attempts, 0.0, failure=old.error)
            case "error":
                self._dispatch(dataclasses.replace(task, resumes=old.resumes), 1)
            case "interrupt" if old.interrupt is not None and old.interrupt.kind == "before":
                if task.id in self.setup.passed:
                    self._dispatch(task, 1)
                else:
                    self.results[task.id] = old
            case _:
                if task.id in self.setup.answers:
                    resumes = (*old.resumes, self.setup.answers[task.id])
                    self._dispatch(dataclasses.replace(task, resumes=resumes), 1)
                else:
                    self.results[task.id] = old

    def _breakpoint(self, task: Task) -> VertexResult:
        pending = Interrupt(
            interrupt_id(self.thread_id, task.step, task.id, -1), task.vertex, None, task.id, "before"
        )
        return VertexResult(
            task.id, task.vertex, "interrupt", interrupt=pending, attempts=0, inputs=task.inputs
        )

    def _dispatch(
        self, task: Task, attempt: int, delay: float = 0.0, failure: ErrorInfo | None = None
    ) -> None:
        token = next(_tokens)
        self.outstanding[token] = _Attempt(task.id, attempt, failure)
        self.tasks[task.id] = task
        order = Order(
            self.id,
            self.coordinator,  # type: ignore[arg-type]
            task,
            attempt,
            token,
            self.env,
            self.cancel_event,
            delay,
            failure,
        )
        self.runtime.pools[task.vertex].submit(order)

    def _settle_attempt(self, attempt: _Attempt, result: VertexResult, blobs: Mapping[str, bytes]) -> None:
        if self.cancel_event.is_set():
            return
        if attempt.failure is not None:  # the on_error handler's outcome stands for the task
            result = dataclasses.replace(result, handler=True, error=result.error or attempt.failure)
        elif result.status == "error" and self._try_again(attempt, result):
            return
        if result.status != "ok":
            self._emit(TaskFinished(self.id, self.thread_id, self.pos.step + 1, result))
        elif self._wants(TaskFinished):
            self._emit(TaskFinished(self.id, self.thread_id, self.pos.step + 1, result), routine=True)
        self.results[attempt.task_id] = result
        if self.recorder is not None:
            self.recorder.task_finished(result, blobs)
        if len(self.results) == len(self.tasks) and not self.outstanding:
            self._end_superstep()

    def _try_again(self, attempt: _Attempt, result: VertexResult) -> bool:
        """Dispatch a retry or the `on_error` handler; False when the failure is final."""
        task = self.tasks[attempt.task_id]
        vertex = self.spec.vertices[task.vertex]
        error = result.error
        if error is None:
            return False
        delay = next_delay(vertex.retry, error, attempt.attempt, random.random())  # noqa: S311 - jitter
        handling = vertex.on_error is not None and error.retryable and task.id not in self.handled
        if delay is not None or handling:
            self._emit(TaskFinished(self.id, self.thread_id, task.step, result, final=False))
        if delay is not None:
            self._emit(
                RetryScheduled(
                    self.id, self.thread_id, task.step, task.id, task.vertex, attempt.attempt, delay, error
                )
            )
            self._dispatch(task, attempt.attempt + 1, delay)
            return True
        if handling:
            self.handled.add(task.id)
            if self.recorder is not None:  # a crash from here on runs the handler, not the vertex
                self.recorder.task_finished(result, {})
            self._dispatch(task, attempt.attempt, 0.0, failure=error)
            return True
        return False

    def _end_superstep(self) -> None:
        step = self.pos.step + 1
        superstep = SuperstepState(step, {tid: self.results[tid] for tid in self.tasks})
        if any(r.status != "ok" for r in superstep.results.values()):
            self._pause(superstep)
            return
        self.pos = commit(self.spec, self.pos, superstep)
        pauses = () if self.pos.done else self._pauses_after(superstep)
        head = None
        if self.recorder is not None:
            if pauses:
                head = self.recorder.checkpoint(self.pos, pauses=pauses)
            else:
                head = self.recorder.committed(self.pos)
        self._committed(head)
        if pauses:
            self._resolve("interrupted", current_state(self.pos, self.spec.merge), pauses)
        else:
            self._next_superstep()

    def _committed(self, checkpoint_id: str | None) -> None:
        if self._wants(SuperstepCommitted):
            state = current_state(self.pos, self.spec.merge)
            self._emit(
                SuperstepCommitted(self.id, self.thread_id, self.pos.step, state, checkpoint_id), routine=True
            )

    def _pauses_after(self, superstep: SuperstepState) -> tuple[Interrupt, ...]:
        stops = self.setup.breakpoints
        if not stops.after:
            return ()
        vertices = sorted({r.vertex for r in superstep.results.values() if stops.stops_after(r.vertex)})
        return tuple(
            Interrupt(interrupt_id(self.thread_id, superstep.step, f"after:{v}", 0), v, None, v, "after")
            for v in vertices
        )

    # -- endings ---------------------------------------------------------------------

    def _pause(self, superstep: SuperstepState) -> None:
        failed = superstep.failed
        status = "error" if failed else "interrupted"
        if self.recorder is not None:
            self.recorder.paused(self.pos, superstep, status)
        if failed:
            self._fail(
                _raised(failed[0], superstep.step, len(failed) - 1, resumable=self.recorder is not None)
            )
            return
        interrupts = tuple(r.interrupt for r in superstep.interrupted if r.interrupt is not None)
        self._resolve("interrupted", current_state(self.pos, self.spec.merge), interrupts)

    def _finish(self) -> None:
        for join, missing in waiting_joins(self.spec, self.pos):
            self._emit(
                JoinWaiting(self.id, self.thread_id, self.pos.step, join.id, join.target, tuple(missing))
            )
        if self.recorder is not None:
            self.recorder.finished(self.pos)
        try:
            state = final_state(self.pos, self.spec.merge)
        except MergeConflictError:
            if self.recorder is not None:
                self.recorder.mark("error")
            raise
        self._resolve("done", state, ())

    def _resolve(self, status: RunStatus, state: Any, interrupts: tuple[Interrupt, ...]) -> None:
        head = self.recorder.head if self.recorder is not None else None
        result: RunResult[Any] = RunResult(
            state, status, interrupts, self.pos.step, self.id, self.thread_id, head
        )
        if interrupts:
            self._emit(Interrupted(self.id, self.thread_id, self.pos.step, interrupts))
        self._finished(status, state)
        settle(self.future, result=result)
        self.closed = True

    def _fail(self, exc: BaseException) -> None:
        self._finished("error", error=exc)
        settle(self.future, error=exc)
        self.closed = True


def _failure(task: Task, attempt: int, exc: BaseException) -> VertexResult:
    return VertexResult(
        task.id,
        task.vertex,
        "error",
        error=ErrorInfo.from_exception(exc),
        attempts=attempt,
        inputs=task.inputs,
        value=task.value,
        resumes=task.resumes,
    )


_PASSED_THROUGH: tuple[type[BaseException], ...] = (VertexTimeoutError, VertexActorDiedError)


def _raised(result: VertexResult, step: int, others: int, *, resumable: bool) -> BaseException:
    """The exception `invoke` raises for a failed task."""
    error = result.error
    cause = error.exception if error is not None else None
    if isinstance(cause, ActorGraphError) and not isinstance(cause, _PASSED_THROUGH):
        return cause  # merge conflicts, routing and update errors speak for themselves
    exc = VertexError(
        result.vertex,
        task_id=result.task_id,
        step=step,
        attempts=result.attempts,
        error_type=error.type if error else "unknown",
        message=error.message if error else "",
        others=others,
        resumable=resumable,
    )
    exc.__cause__ = cause
    return exc
