"""One run's progress through its supersteps, driven by its coordinator.

A `Run` lives on its coordinator's thread and is only touched there. It plans each
superstep with the pure logic, hands the tasks to the workers, collects their outcomes
(a retry or the `on_error` handler by `_retry.after_failure`, timeouts), records them,
and commits or pauses the superstep. A resumed run starts with its checkpoint's pending
superstep: `ok` tasks never run again, `error` tasks run again with a fresh retry budget,
`interrupt` tasks only once answered (an `interrupt_before` breakpoint: once passed).
"""

from __future__ import annotations

import dataclasses
import itertools
import random
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pykka

from actorgraph._actors.emitter import Emitter
from actorgraph._actors.handle import raised_for, settle
from actorgraph._actors.messages import Done, Launch, Order, TimedOut, Workers
from actorgraph._actors.reports import CheckpointReporter, schedule
from actorgraph._actors.setup import RunSetup
from actorgraph._actors.subgraphs import child_call, nest_for
from actorgraph._actors.tracing import run_trace
from actorgraph._engine.boundary import output_of
from actorgraph._engine.breakpoints import paused_before, pauses_after
from actorgraph._engine.recorded import Keep, Rerun, again
from actorgraph._engine.retry import after_failure
from actorgraph._engine.superstep import commit, current_state, final_state, plan, waiting_joins
from actorgraph._model.errors import (
    MergeConflictError,
    RecursionLimitError,
    RunCancelledError,
    VertexTimeoutError,
)
from actorgraph._model.records import (
    ErrorInfo,
    Interrupt,
    Position,
    RunStatus,
    SuperstepState,
    Task,
    VertexResult,
)
from actorgraph._model.results import RunResult
from actorgraph.events import (
    Interrupted,
    JoinWaiting,
    RetryScheduled,
    RunFinished,
    RunStarted,
    SuperstepCommitted,
    SuperstepStarted,
    TaskFinished,
)

__all__ = ["Run"]

_tokens = itertools.count(1)


@dataclass(slots=True)
class _Dispatched:
    """An attempt in flight: its task, its number, and the failure its handler is running for."""

    task_id: str
    attempt: int
    failure: ErrorInfo | None


class Run:
    """A run being executed by a coordinator."""

    def __init__(self, workers: Workers, setup: RunSetup, launch: Launch) -> None:
        self.workers = workers
        self.spec = workers.spec
        self.pos = setup.position
        # `self.pos` moves on; the setup keeps no second reference to the starting state
        self.setup = dataclasses.replace(setup, position=Position(setup.position.step))
        self.id = setup.run_id
        self.thread_id = setup.thread_id
        self.recorder = setup.recorder
        self.events = Emitter(self.id, self.thread_id, setup.listeners, self.spec.face)
        self.reporter = CheckpointReporter.of(self.events, self.spec, setup.recorder)  # None unless wanted
        hooks = self.events.task_hooks()  # the listeners that hear what vertices say, if any
        self.env = dataclasses.replace(setup.env, nest=nest_for(self, launch.cancel), **hooks)
        self.launch = launch
        self.trace = run_trace(launch.trace, self.spec.name, setup)
        self.cancel_event = launch.cancel  # read on every dispatch and settle
        self.coordinator: pykka.ActorRef[Any] | None = None
        self.closed = False
        self._outcome: RunResult[Any] | None = None
        self._error: BaseException | None = None
        self.supersteps = 0
        self.pending = dict(setup.pending)
        self.tasks: dict[str, Task] = {}
        self.results: dict[str, VertexResult] = {}
        self.in_flight: dict[int, _Dispatched] = {}
        self.handled: set[str] = set()

    # -- entry points (called by the coordinator) ---------------------------------

    def begin(self, coordinator: pykka.ActorRef[Any]) -> None:
        """Record the starting position if asked, then start the next superstep."""
        self.coordinator = coordinator
        self.events.emit(RunStarted(self.id, self.thread_id, self.pos.step))
        head = None
        if self.recorder is not None and self.setup.record_start:
            head = self.recorder.committed(self.pos)
            self.recorder.carry(self.pending.values())
        elif self.reporter is not None:  # a resumed run: the checkpoint it continues from comes first
            self.reporter.resumed(self.pos, self.pending)
        self._committed(head)
        self._next_superstep()

    def on_done(self, message: Done) -> None:
        """Take an attempt's outcome."""
        dispatched = self.in_flight.pop(message.token, None)
        if dispatched is None:
            return  # a late answer from an abandoned attempt
        self._settle(dispatched, message.result, message.blobs)

    def on_timeout(self, message: TimedOut) -> None:
        """An attempt overran its vertex's timeout: abandon its actor, record the error."""
        dispatched = self.in_flight.get(message.token)
        if dispatched is None:
            return
        task = self.tasks[dispatched.task_id]
        if not self.workers.abandon(task.vertex, message.token):
            return  # it finished meanwhile; its Done message is on the way
        del self.in_flight[message.token]
        timeout = self.spec.vertices[task.vertex].timeout
        error = VertexTimeoutError(
            f"vertex {task.vertex!r} (task {task.id!r}) ran longer than its timeout of "
            f"{timeout} s; its actor was abandoned"
        )
        failure = VertexResult.failure(task, dispatched.attempt, ErrorInfo.from_exception(error))
        self._settle(dispatched, failure, {})

    def cancel(self) -> None:
        """Stop: nothing new is dispatched, and outcomes still arriving are dropped."""
        if self.closed:
            return
        self.cancel_event.set()
        self._finished("cancelled")
        self._close(error=RunCancelledError(f"run {self.id} was cancelled"))

    def crash(self, exc: BaseException) -> None:
        """The coordinator caught `exc` while driving this run: fail the run with it."""
        self.cancel_event.set()
        self._finished("error", error=exc)
        self._close(error=exc)

    def deliver(self) -> None:
        """Complete the caller's future with the run's outcome (the coordinator's last act for it).

        Waking the caller is left to the very end, after the coordinator's own
        bookkeeping: a caller woken earlier would wait for this thread's GIL.
        """
        settle(self.launch.future, result=self._outcome, error=self._error)

    def _close(self, *, result: RunResult[Any] | None = None, error: BaseException | None = None) -> None:
        self.closed = True
        self._outcome = result
        self._error = error

    # -- supersteps ------------------------------------------------------------------

    def _next_superstep(self) -> None:
        if self.cancel_event.is_set():
            self.cancel()
            return
        if self.pos.done:
            self._finish()
            return
        if self.supersteps >= self.setup.recursion_limit:
            self._fail(self._over_limit())
            return
        self.supersteps += 1
        tasks = plan(self.pos, self.spec.deferred)
        self.trace.superstep(self.pos.step + 1, len(tasks))
        if self.events.wants(SuperstepStarted):
            started = SuperstepStarted(self.id, self.thread_id, self.pos.step + 1, tuple(t.id for t in tasks))
            self.events.emit(started, routine=True)
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
        if not self.in_flight:
            self._end_superstep()

    def _over_limit(self) -> RecursionLimitError:
        return RecursionLimitError(
            f"the run reached its recursion limit of {self.setup.recursion_limit} supersteps "
            f"without finishing (last committed superstep: {self.pos.step}); raise "
            "invoke(..., recursion_limit=...) if the loop is meant to be that long, "
            "or check the condition that should end it"
        )

    def _start_task(self, task: Task, old: VertexResult | None) -> None:
        """Dispatch a planned task, or keep its recorded outcome."""
        if old is None:
            if self.setup.breakpoints.stops_before(task.vertex):
                self.results[task.id] = paused_before(task, self.thread_id, self.env.line)
            else:
                self._dispatch(task, 1)
            return
        match again(self.spec, task, old, passed=self.setup.passed, answers=self.setup.answers):
            case Keep(result=result):
                self.results[task.id] = result
            case Rerun(task=rerun, attempt=attempt, failure=failure, answers=answers):
                if failure is not None:
                    self.handled.add(task.id)
                self._dispatch(rerun, attempt, failure=failure, answers=answers)

    def _dispatch(
        self,
        task: Task,
        attempt: int,
        *,
        delay: float = 0.0,
        failure: ErrorInfo | None = None,
        answers: Mapping[str, Any] | None = None,
    ) -> None:
        if self.events.schedules and attempt == 1 and failure is None:
            schedule(self.events, self.spec, task, self.env)
        token = next(_tokens)
        self.in_flight[token] = _Dispatched(task.id, attempt, failure)
        self.tasks[task.id] = task
        child = child_call(self, task, answers) if failure is None else None
        order = Order(
            self.id,
            self.coordinator,  # type: ignore[arg-type]
            task,
            attempt,
            token,
            self.env,
            self.cancel_event,
            failure,
            child,
            self.trace.tasks,
        )
        if delay > 0:  # a retry waiting out its backoff is a timer entry, not a busy actor
            self.workers.later(delay, lambda: self.workers.submit(order))
        else:
            self.workers.submit(order)

    def _settle(self, dispatched: _Dispatched, result: VertexResult, blobs: Mapping[str, bytes]) -> None:
        if self.cancel_event.is_set():
            return
        if dispatched.failure is not None:  # the on_error handler's outcome stands for the task
            result = dataclasses.replace(result, handler=True, error=result.error or dispatched.failure)
        elif result.status == "error" and self._try_again(dispatched, result):
            return
        if result.status != "ok":
            self.events.emit(TaskFinished(self.id, self.thread_id, self.pos.step + 1, result))
        elif self.events.wants(TaskFinished):
            self.events.finished(self.pos.step + 1, result)
        self.results[dispatched.task_id] = result
        last = len(self.results) == len(self.tasks) and not self.in_flight
        if self.recorder is not None:
            commits = last and all(r.status == "ok" for r in self.results.values())
            self.recorder.task_finished(result, blobs, commits=commits)
        if last:
            self._end_superstep()

    def _try_again(self, dispatched: _Dispatched, result: VertexResult) -> bool:
        """Dispatch a retry or the `on_error` handler; False when the failure is final."""
        task = self.tasks[dispatched.task_id]
        error = result.error
        if error is None:
            return False
        rand = random.random()  # noqa: S311 - jitter, not a secret
        then = after_failure(
            self.spec.vertices[task.vertex],
            error,
            dispatched.attempt,
            handled=task.id in self.handled,
            rand=rand,
        )
        if then.final:
            return False
        self.events.emit(TaskFinished(self.id, self.thread_id, task.step, result, final=False))
        if then.delay is not None:
            self.events.emit(
                RetryScheduled(
                    self.id,
                    self.thread_id,
                    task.step,
                    task.id,
                    task.vertex,
                    dispatched.attempt,
                    then.delay,
                    error,
                )
            )
            self._dispatch(task, dispatched.attempt + 1, delay=then.delay)
            return True
        self.handled.add(task.id)
        if self.recorder is not None:  # a crash from here on runs the handler, not the vertex
            self.recorder.task_finished(result, {}, now=True)
        self._dispatch(task, dispatched.attempt, failure=error)
        return True

    def _end_superstep(self) -> None:
        step = self.pos.step + 1
        superstep = SuperstepState(step, {tid: self.results[tid] for tid in self.tasks})
        self.trace.superstep_ended(superstep)
        if any(r.status != "ok" for r in superstep.results.values()):
            self._pause(superstep)
            return
        handoff = next((r.handoff for r in superstep.results.values() if r.handoff is not None), None)
        if handoff is not None:  # a subgraph's vertex leaves for the parent: this run ends here
            if self.recorder is not None:
                self.recorder.paused(self.pos, superstep, "done")
            self.launch.handoff = handoff
            self._resolve("done", current_state(self.pos, self.spec.merge), ())
            return
        self.pos = commit(self.spec, self.pos, superstep)
        stops = self.setup.breakpoints
        pauses = () if self.pos.done else pauses_after(superstep, stops, self.thread_id, self.env.line)
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
        if self.events.wants(SuperstepCommitted):
            self.events.committed(self.pos.step, current_state(self.pos, self.spec.merge), checkpoint_id)

    # -- endings ---------------------------------------------------------------------

    def _pause(self, superstep: SuperstepState) -> None:
        failed = superstep.failed
        status = "error" if failed else "interrupted"
        if self.recorder is not None:
            self.recorder.paused(self.pos, superstep, status)
        if failed:
            resumable = self.recorder is not None
            self._fail(raised_for(failed[0], superstep.step, len(failed) - 1, resumable=resumable))
            return
        self._resolve("interrupted", current_state(self.pos, self.spec.merge), superstep.questions)

    def _finish(self) -> None:
        for join, missing in waiting_joins(self.spec, self.pos):
            self.events.emit(
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
            output_of(self.spec, state), status, interrupts, self.pos.step, self.id, self.thread_id, head
        )
        if interrupts:
            self.events.emit(Interrupted(self.id, self.thread_id, self.pos.step, interrupts, state))
        self._finished(status, state)
        self._close(result=result)

    def _fail(self, exc: BaseException) -> None:
        self._finished("error", error=exc)
        self._close(error=exc)

    def _finished(self, status: str, state: Any = None, error: BaseException | None = None) -> None:
        info = ErrorInfo.from_exception(error) if error is not None else None
        self.trace.finished(status, self.pos.step, error)
        self.events.emit(RunFinished(self.id, self.thread_id, self.pos.step, status, state, info))
