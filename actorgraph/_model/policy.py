"""`RetryPolicy`: how often, and after how long, a failed task is tried again (a record)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from actorgraph._model.errors import ConfigError

__all__ = ["RetryPolicy"]


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How often, and after how long, a failed task is tried again.

    Attributes:
        max_attempts: attempts in all, the first included.
        initial_interval: seconds before the second attempt.
        backoff_factor: each further wait is this many times longer.
        max_interval: the longest wait.
        jitter: add up to 25% random extra to each wait.
        retry_on: an exception class, a tuple of them, or a predicate; None means
            transient errors (connection errors, timeouts, errors carrying a 5xx
            status) and never programming errors.
    """

    max_attempts: int = 3
    initial_interval: float = 0.5
    backoff_factor: float = 2.0
    max_interval: float = 128.0
    jitter: bool = True
    retry_on: Any = None

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            msg = f"RetryPolicy(max_attempts={self.max_attempts}): use at least 1"
            raise ConfigError(msg)
        if self.initial_interval < 0 or self.max_interval < 0 or self.backoff_factor < 1:
            msg = (
                "RetryPolicy intervals must be >= 0 and backoff_factor >= 1, got "
                f"initial_interval={self.initial_interval}, max_interval={self.max_interval}, "
                f"backoff_factor={self.backoff_factor}"
            )
            raise ConfigError(msg)
