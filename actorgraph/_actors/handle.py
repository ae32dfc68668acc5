"""`RunHandle`: a run started with `start()`, to wait for, poll or cancel."""

from __future__ import annotations

import concurrent.futures
import contextlib
from collections.abc import Callable
from typing import Any, Generic, TypeVar

from actorgraph._model.errors import (
    ActorGraphError,
    RecordedError,
    RunCancelledError,
    RunTimeoutError,
    VertexActorDiedError,
    VertexError,
    VertexTimeoutError,
)
from actorgraph._model.records import VertexResult
from actorgraph._model.results import RunResult

__all__ = ["STOP_WAIT", "RunHandle", "raised_for", "settle"]

STOP_WAIT = 10.0
"""Seconds a cancel waits for the run's coordinator to let go of it (it only finishes its current message)."""

S = TypeVar("S")


def settle(
    future: concurrent.futures.Future[RunResult[S]],
    *,
    result: RunResult[S] | None = None,
    error: BaseException | None = None,
) -> bool:
    """Complete `future` unless it already is; return whether this call did."""
    try:
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(result)  # type: ignore[arg-type]
    except concurrent.futures.InvalidStateError:
        return False
    return True


class RunHandle(Generic[S]):
    """A running (or finished) run: `result(timeout)`, `done()`, `cancel()` (`acancel()` in async code).

    Attributes:
        run_id: the run's id (in logs and events).
        thread_id: the run's thread, or None.
    """

    def __init__(  # noqa: PLR0913, PLR0917 - the futures a handle watches, made by `start()`
        self,
        run_id: str,
        thread_id: str | None,
        future: concurrent.futures.Future[RunResult[S]],
        canceller: Callable[[bool], None],
        stopped: concurrent.futures.Future[None],
        started: concurrent.futures.Future[None] | None = None,
    ) -> None:
        self.run_id = run_id
        self.thread_id = thread_id
        self._future = future
        self._canceller = canceller
        self._stopped = stopped
        self._started: concurrent.futures.Future[Any] = started if started is not None else future

    def wait_started(self, timeout: float | None = None) -> None:
        """Wait until the run has read its thread and claimed its answers, before any vertex ran.

        A front end that starts a run in the background calls it to tell the
        person at once whether their answer was taken: what preparing the run
        raised (`AlreadyAnsweredError`, `ResumeError`, a thread that cannot be
        read) is raised here; after it returns, the run goes on by itself.

        Args:
            timeout: seconds to wait; None waits as long as it takes.

        Raises:
            RunTimeoutError: the run was not built in time (it still may be).
            ActorGraphError: preparing the run failed; nothing of it ran.
        """
        try:
            self._started.result(timeout)
        except concurrent.futures.TimeoutError:
            msg = f"run {self.run_id} was not started within {timeout} s; it may still start"
            raise RunTimeoutError(msg) from None

    def result(self, timeout: float | None = None) -> RunResult[S]:
        """Wait for the run and return its `RunResult`.

        Args:
            timeout: seconds to wait; None waits as long as it takes.

        A `KeyboardInterrupt` (Ctrl-C), or any other exception raised in the
        waiting thread, cancels the run before it propagates: nothing after the
        tasks in flight starts, and the thread stays resumable.

        Raises:
            RunTimeoutError: the run did not finish in time (it keeps running;
                call `cancel()` to stop it).
            RunCancelledError: the run was cancelled.
            VertexError: a task failed and its retries are spent.
        """
        try:
            return self._future.result(timeout)
        except concurrent.futures.TimeoutError:
            msg = (
                f"run {self.run_id} did not finish within {timeout} s; it is still running "
                "(call cancel() to stop it, or wait again)"
            )
            raise RunTimeoutError(msg) from None
        except BaseException:
            if not self._future.done():  # the wait itself was interrupted, not the run
                self.cancel()
            raise

    def done(self) -> bool:
        """True once the run has finished, paused, failed or been cancelled."""
        return self._future.done()

    def cancel(self) -> bool:
        """Stop the run; `result()` then raises `RunCancelledError`.

        Tasks already running finish (a thread cannot be killed) and their
        outcomes are dropped; nothing new starts; an `async def` vertex's
        coroutine is cancelled. Returns once the run's coordinator has let go of
        it, so with a checkpointer the thread can be resumed at once.

        Returns:
            True if the run was still going, False if it had already finished.
        """
        return self._cancel(wait=True)

    def _cancel(self, *, wait: bool) -> bool:
        cancelled = settle(self._future, error=RunCancelledError(f"run {self.run_id} was cancelled"))
        if cancelled or self._future.cancelled():  # asyncio may have cancelled the future itself
            self._canceller(wait)
        return cancelled

    async def acancel(self) -> bool:
        """`cancel()` for async code: awaits the coordinator letting go instead of blocking the loop."""
        import asyncio  # noqa: PLC0415 - asyncio pulls in ssl (4 MiB): only async paths import it

        cancelled = self._cancel(wait=False)
        with contextlib.suppress(TimeoutError, asyncio.CancelledError):
            async with asyncio.timeout(STOP_WAIT):
                await asyncio.wrap_future(self._stopped)
        return cancelled

    def give_up(self, timeout: float | None) -> RunTimeoutError:
        """Cancel the run because `timeout` passed; return the error the caller raises."""
        self.cancel()
        return RunTimeoutError(f"run {self.run_id} did not finish within {timeout} s and was cancelled")

    @property
    def future(self) -> concurrent.futures.Future[RunResult[S]]:
        """The underlying future (for `asyncio.wrap_future` and callbacks)."""
        return self._future

    @property
    def stopped(self) -> concurrent.futures.Future[None]:
        """Set once the run's coordinator has let go of it (its last checkpoint written)."""
        return self._stopped

    def __repr__(self) -> str:
        state = "done" if self.done() else "running"
        return f"RunHandle(run_id={self.run_id!r}, thread_id={self.thread_id!r}, {state})"


_PASSED_THROUGH: tuple[type[BaseException], ...] = (VertexTimeoutError, VertexActorDiedError, RecordedError)


def raised_for(result: VertexResult, step: int, others: int, *, resumable: bool) -> BaseException:
    """The exception `invoke` raises for a failed task.

    Its `__cause__` is what the task raised, or (a failure read back from a
    checkpoint, whose exception stayed in the process that ran it) a
    `RecordedError` standing in for it, with its type, message and traceback.
    """
    error = result.error
    cause = error.as_exception() if error is not None else None
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
