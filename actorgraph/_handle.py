"""`RunHandle`: a run started with `start()`, to wait for, poll or cancel."""

from __future__ import annotations

import concurrent.futures
from collections.abc import Callable
from typing import Generic, TypeVar

from actorgraph._errors import RunCancelledError, RunTimeoutError
from actorgraph._types import RunResult

__all__ = ["RunHandle", "settle"]

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
    """A running (or finished) run: `result(timeout)`, `done()`, `cancel()`.

    Attributes:
        run_id: the run's id (in logs and events).
        thread_id: the run's thread, or None.
    """

    def __init__(
        self,
        run_id: str,
        thread_id: str | None,
        future: concurrent.futures.Future[RunResult[S]],
        canceller: Callable[[], None],
    ) -> None:
        self.run_id = run_id
        self.thread_id = thread_id
        self._future = future
        self._canceller = canceller

    def result(self, timeout: float | None = None) -> RunResult[S]:
        """Wait for the run and return its `RunResult`.

        Args:
            timeout: seconds to wait; None waits as long as it takes.

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

    def done(self) -> bool:
        """True once the run has finished, paused, failed or been cancelled."""
        return self._future.done()

    def cancel(self) -> bool:
        """Stop the run between supersteps; `result()` then raises `RunCancelledError`.

        Tasks already running finish (a thread cannot be killed), but nothing
        new starts. With a checkpointer, the run stays resumable.

        Returns:
            True if the run was still going, False if it had already finished.
        """
        cancelled = settle(self._future, error=RunCancelledError(f"run {self.run_id} was cancelled"))
        if cancelled or self._future.cancelled():  # asyncio may have cancelled the future itself
            self._canceller()
        return cancelled

    def give_up(self, timeout: float | None) -> RunTimeoutError:
        """Cancel the run because `timeout` passed; return the error the caller raises."""
        self.cancel()
        return RunTimeoutError(f"run {self.run_id} did not finish within {timeout} s and was cancelled")

    @property
    def future(self) -> concurrent.futures.Future[RunResult[S]]:
        """The underlying future (for `asyncio.wrap_future` and callbacks)."""
        return self._future

    def __repr__(self) -> str:
        state = "done" if self.done() else "running"
        return f"RunHandle(run_id={self.run_id!r}, thread_id={self.thread_id!r}, {state})"
