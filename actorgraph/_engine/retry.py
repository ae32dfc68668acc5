"""Retry decisions: whether a failed attempt is tried again, and after how long.

Pure: the caller passes the random number used for jitter and does the waiting.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from actorgraph._model.errors import ActorGraphError, VertexActorDiedError, VertexError, VertexTimeoutError
from actorgraph._model.policy import RetryPolicy
from actorgraph._model.records import ErrorInfo
from actorgraph._model.spec import VertexSpec

__all__ = ["AfterFailure", "after_failure", "backoff", "choose", "is_transient", "next_delay"]

_PROGRAMMING_ERRORS = (
    TypeError,
    ValueError,
    KeyError,
    IndexError,
    AttributeError,
    NameError,
    AssertionError,
    NotImplementedError,
    ArithmeticError,
    ImportError,
    SyntaxError,
)


def _status(exc: BaseException) -> int | None:
    """The HTTP-like status an exception carries (`status_code`, `status`, or its `response`'s)."""
    for holder in (exc, getattr(exc, "response", None)):
        for name in ("status_code", "status"):
            value = getattr(holder, name, None)
            if isinstance(value, int) and not isinstance(value, bool):
                return value
    return None


def is_transient(exc: BaseException) -> bool:
    """The default `retry_on`: connection errors, timeouts and 5xx-like errors.

    Programming errors (TypeError, ValueError, KeyError, ...) are never transient.
    A subgraph's failure (a `VertexError` with its cause) is transient when its cause is.
    """
    if isinstance(exc, VertexError) and exc.__cause__ is not None:
        return is_transient(exc.__cause__)
    if isinstance(exc, (VertexTimeoutError, VertexActorDiedError)):
        return True
    if isinstance(exc, ActorGraphError):
        return False
    if isinstance(exc, (ConnectionError, TimeoutError)):
        return True
    status = _status(exc)
    if status is not None and not isinstance(exc, _PROGRAMMING_ERRORS):
        return 500 <= status < 600  # noqa: PLR2004 - the HTTP server-error range
    return False


def _matches(policy: RetryPolicy, exc: BaseException) -> bool:
    """Whether `policy` retries `exc`; a subgraph's failure is retried when its cause would be."""
    if _retries(policy, exc):
        return True
    cause = exc.__cause__
    return isinstance(exc, VertexError) and cause is not None and _retries(policy, cause)


def _retries(policy: RetryPolicy, exc: BaseException) -> bool:
    retry_on = policy.retry_on
    if retry_on is None:
        return is_transient(exc)
    if isinstance(retry_on, (type, tuple)):
        return isinstance(exc, retry_on)
    return bool(retry_on(exc))


def choose(policies: Sequence[RetryPolicy], exc: BaseException) -> RetryPolicy | None:
    """The first policy whose `retry_on` matches `exc`, or None."""
    for policy in policies:
        if _matches(policy, exc):
            return policy
    return None


def backoff(policy: RetryPolicy, attempt: int, rand: float) -> float:
    """Seconds to wait after failed attempt number `attempt` (1-based).

    Args:
        policy: the policy that matched.
        attempt: the attempt that just failed.
        rand: a number in [0, 1) for the jitter (ignored without jitter).
    """
    wait = min(policy.initial_interval * policy.backoff_factor ** (attempt - 1), policy.max_interval)
    if policy.jitter:
        wait += wait * 0.25 * rand
    return wait


def next_delay(policies: Sequence[RetryPolicy], error: ErrorInfo, attempt: int, rand: float) -> float | None:
    """Seconds to wait before trying again, or None to give up.

    Args:
        policies: the vertex's policies (first match decides).
        error: the failed attempt's error.
        attempt: the attempt that just failed (1-based, counted in this invoke).
        rand: a number in [0, 1) for the jitter.
    """
    if not error.retryable or error.exception is None:
        return None
    policy = choose(policies, error.exception)
    if policy is None or attempt >= policy.max_attempts:
        return None
    return backoff(policy, attempt, rand)


class AfterFailure(NamedTuple):
    """What follows a failed attempt: a retry after `delay` seconds, the vertex's handler, or nothing."""

    delay: float | None = None
    handle: bool = False

    @property
    def final(self) -> bool:
        """True when the failure is the task's outcome."""
        return self.delay is None and not self.handle


def after_failure(
    vertex: VertexSpec, error: ErrorInfo, attempt: int, *, handled: bool, rand: float
) -> AfterFailure:
    """What follows a failed attempt: the retry policy first, then the `on_error` handler.

    The handler runs once per task, never for errors the engine never retries;
    when neither applies, the failure stands.

    Args:
        vertex: the failed task's vertex.
        error: the attempt's error.
        attempt: the attempt that failed (1-based, counted in this invoke).
        handled: whether the task's handler already ran (or is running).
        rand: a number in [0, 1) for the jitter.
    """
    delay = next_delay(vertex.retry, error, attempt, rand)
    if delay is not None:
        return AfterFailure(delay=delay)
    return AfterFailure(handle=vertex.on_error is not None and error.retryable and not handled)
