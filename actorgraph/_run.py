"""One run's progress through its supersteps, driven by its coordinator.

A `Run` lives on its coordinator's thread and is only touched there. It plans
each superstep with the pure logic, hands the tasks to the vertex pools,
collects their outcomes (retrying by policy, timing out, running `on_error`
handlers), and commits or pauses the superstep.
"""

from __future__ import annotations

import itertools
import random
import threading
from concurrent.futures import Future
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pykka

from actorgraph._errors import (
    ActorGraphError,
    RecursionLimitError,
    VertexActorDiedError,
    VertexError,
    VertexTimeoutError,
)
from actorgraph._handle import settle
from actorgraph._log import log
from actorgraph._messages import Done, Order, TimedOut
from actorgraph._retry import next_delay
from actorgraph._superstep import Position, commit, current_state, final_state, plan, waiting_joins
from actorgraph._task import TaskEnv
from actorgraph._types import ErrorInfo, Interrupt, RunResult, SuperstepState, Task, VertexResult

if TYPE_CHECKING:
    from actorgraph._runtime import Runtime

__all__ = ["Run", "RunSetup"]

_tokens = itertools.count(1)


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
    """

    run_id: str
    thread_id: str | None
    position: Position
    env: TaskEnv
    recursion_limit: int
    future: Future[RunResult[Any]]


@dataclass(slots=True)
class _Attempt:
    task_id: str
    attempt: int
    handler: bool  # running the vertex's on_error handler


class Run:
    """A run being executed by a coordinator."""

    def __init__(self, runtime: Runtime, setup: RunSetup) -> None:
        self.runtime = runtime
        self.spec = runtime.spec
        self.id = setup.run_id
        self.thread_id = setup.thread_id
        self.pos = setup.position
        self.env = setup.env
        self.limit = setup.recursion_limit
        self.future = setup.future
        self.cancel_event = threading.Event()
        self.coordinator: pykka.ActorRef[Any] | None = None
        self.closed = False
        self.supersteps = 0
        self.tasks: dict[str, Task] = {}
        self.results: dict[str, VertexResult] = {}
        self.outstanding: dict[int, _Attempt] = {}
        self.handled: set[str] = set()
        self.rng = random.Random()  # noqa: S311 - jitter, not cryptography

    def _log(self, level: str, event: str, **fields: Any) -> None:
        log(level, event, run_id=self.id, thread_id=self.thread_id, **fields)

    # -- entry points (called by the coordinator) ---------------------------------

    def begin(self, coordinator: pykka.ActorRef[Any]) -> None:
        """Start the run's next superstep."""
        self.coordinator = coordinator
        self._log("debug", "run started", step=self.pos.step)
        self._next_superstep()

    def on_done(self, message: Done) -> None:
        """Take an attempt's outcome."""
        attempt = self.outstanding.pop(message.token, None)
        if attempt is None:
            return  # a late answer from an abandoned attempt
        self._settle_attempt(attempt, message.result)

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
        self._settle_attempt(attempt, _failure(task, attempt.attempt, error))

    def cancel(self) -> None:
        """Stop between supersteps: nothing new is dispatched."""
        self.cancel_event.set()
        self._log("info", "run cancelled", step=self.pos.step)
        self.closed = True

    def crash(self, exc: BaseException) -> None:
        """The coordinator caught `exc` while driving this run: fail the run with it."""
        self.cancel_event.set()
        self._log("error", "run failed inside the engine", exc_info=exc)
        settle(self.future, error=exc)
        self.closed = True

    # -- supersteps ------------------------------------------------------------------

    def _next_superstep(self) -> None:
        if self.cancel_event.is_set():
            self.closed = True
            return
        if self.pos.done:
            self._finish()
            return
        if self.supersteps >= self.limit:
            msg = (
                f"the run reached its recursion limit of {self.limit} supersteps without "
                f"finishing (last committed superstep: {self.pos.step}); raise "
                "invoke(..., recursion_limit=...) if the loop is meant to be that long, "
                "or check the condition that should end it"
            )
            self._fail(RecursionLimitError(msg))
            return
        self.supersteps += 1
        tasks = plan(self.pos)
        self.tasks = {t.id: t for t in tasks}
        self.results = {}
        self.handled = set()
        for task in tasks:
            self._dispatch(task, 1)

    def _dispatch(
        self, task: Task, attempt: int, delay: float = 0.0, failure: ErrorInfo | None = None
    ) -> None:
        token = next(_tokens)
        self.outstanding[token] = _Attempt(task.id, attempt, failure is not None)
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

    def _settle_attempt(self, attempt: _Attempt, result: VertexResult) -> None:
        if self.cancel_event.is_set():
            return
        if result.status == "error" and not self._try_again(attempt, result):
            self._log(
                "error",
                "task failed",
                step=self.pos.step + 1,
                vertex=result.vertex,
                task_id=result.task_id,
                attempt=result.attempts,
                error=result.error.type if result.error else None,
            )
            self.results[attempt.task_id] = result
        elif result.status != "error":
            self.results[attempt.task_id] = result
        if len(self.results) == len(self.tasks) and not self.outstanding:
            self._end_superstep()

    def _try_again(self, attempt: _Attempt, result: VertexResult) -> bool:
        """Dispatch a retry or the `on_error` handler; False when the failure is final."""
        task = self.tasks[attempt.task_id]
        vertex = self.spec.vertices[task.vertex]
        error = result.error
        if error is None or attempt.handler:
            return False
        delay = next_delay(vertex.retry, error, attempt.attempt, self.rng.random())
        if delay is not None:
            self._log(
                "info",
                "retry scheduled",
                vertex=task.vertex,
                task_id=task.id,
                attempt=attempt.attempt,
                delay=delay,
                error=error.type,
            )
            self._dispatch(task, attempt.attempt + 1, delay)
            return True
        if vertex.on_error is not None and error.retryable and task.id not in self.handled:
            self.handled.add(task.id)
            self._dispatch(task, attempt.attempt, 0.0, failure=error)
            return True
        return False

    def _end_superstep(self) -> None:
        step = self.pos.step + 1
        superstep = SuperstepState(step, {tid: self.results[tid] for tid in self.tasks})
        if all(r.status == "ok" for r in superstep.results.values()):
            self.pos = commit(self.spec, self.pos, superstep)
            self._next_superstep()
        else:
            self._pause(superstep)

    # -- endings ---------------------------------------------------------------------

    def _pause(self, superstep: SuperstepState) -> None:
        failed = superstep.failed
        if failed:
            self._fail(_raised(failed[0], superstep.step, len(failed) - 1))
            return
        interrupts = tuple(r.interrupt for r in superstep.interrupted if r.interrupt is not None)
        self._resolve("interrupted", current_state(self.pos, self.spec.merge), interrupts)

    def _finish(self) -> None:
        for join, missing in waiting_joins(self.spec, self.pos):
            self._log("warning", "join never fired", join=join.id, target=join.target, missing=missing)
        self._resolve("done", final_state(self.pos, self.spec.merge), ())

    def _resolve(self, status: Any, state: Any, interrupts: tuple[Interrupt, ...]) -> None:
        result: RunResult[Any] = RunResult(
            state, status, interrupts, self.pos.step, self.id, self.thread_id, None
        )
        self._log("debug", "run ended", status=status, step=self.pos.step)
        settle(self.future, result=result)
        self.closed = True

    def _fail(self, exc: BaseException) -> None:
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


def _raised(result: VertexResult, step: int, others: int) -> BaseException:
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
    )
    exc.__cause__ = cause
    return exc
