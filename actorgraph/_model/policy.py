"""Vertex policies (records): `RetryPolicy` (how often a failed task is tried again) and `CachePolicy`.

`NodeCache` is what the engine needs of a node cache (`actorgraph.cache` implements it).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from actorgraph._model.errors import ConfigError

__all__ = ["TTL_MOST", "CachePolicy", "CachedOutcome", "NodeCache", "RetryPolicy", "check_ttl"]

TTL_MOST = 1e9
"""The longest `CachePolicy.ttl` (seconds, about 31 years): past it, a ttl is a typo (None keeps outcomes)."""


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


@dataclass(frozen=True, slots=True)
class CachePolicy:
    """When a vertex may reuse an earlier outcome instead of being called (`add_vertex(cache=...)`).

    A task of the vertex whose input is equal, by `key`, to one the vertex
    handled within `ttl` seconds reuses that outcome (what the function returned,
    routing and `Send`s included, and its private value) without calling the
    function, in any thread and, with a `SqliteCache`, in any process. Only `ok`
    outcomes are kept; a task answering an interrupt, or running the vertex's
    `on_error` handler, neither reads nor fills the cache. The graph needs a
    cache: `compile(cache=MemoryCache())` or `SqliteCache(path)`.

    Attributes:
        ttl: seconds an outcome stays reusable (above 0, at most 1e9: about 31
            years); None keeps it until `clear_cache`.
        key: `key(state) -> str | bytes` of the state the vertex is given; None: a
            stable digest of the whole state (dict keys and set members in any
            order; values of other types, such as `1` and `1.0`, are other keys).
            The vertex's private value (`ctx.value`) is part of the key either way.

    Raises:
        ConfigError: `ttl` is not a number of seconds in range, or `key` is not callable.
    """

    ttl: float | None = None
    key: Callable[[Any], str | bytes] | None = None

    def __post_init__(self) -> None:
        check_ttl(self.ttl, "CachePolicy")
        if self.key is not None and not callable(self.key):
            msg = f"CachePolicy(key={self.key!r}): give a function of the state returning str or bytes"
            raise ConfigError(msg)


def check_ttl(ttl: object, where: str) -> None:
    """`ConfigError` unless `ttl` is None or a number of seconds above 0 and at most `TTL_MOST`.

    The bound is checked when the ttl is given, so a ttl no clock can add
    (`10**400`) never reaches a run, which would fail after its vertex ran.
    """
    if ttl is None:
        return
    if isinstance(ttl, bool) or not isinstance(ttl, (int, float)) or not 0 < ttl <= TTL_MOST:
        msg = (
            f"{where}(ttl={ttl!r}): give a number of seconds above 0 and at most {TTL_MOST:g} "
            "(about 31 years), or None to keep outcomes until clear_cache"
        )
        raise ConfigError(msg)


@dataclass(frozen=True, slots=True)
class CachedOutcome:
    """What a cache keeps of a vertex's `ok` outcome: what its function returned, and its private value."""

    returned: Any
    value: Any


class NodeCache(Protocol):
    """What the engine needs of a node cache (`actorgraph.cache.MemoryCache`, `SqliteCache`).

    `namespace` is `graph/vertex`; `key` a digest made by `digest`. Safe to call
    from many threads at once.
    """

    def digest(self, parts: Any) -> str:
        """A stable digest of `parts` (plain data and allowed classes): the same in every process."""
        ...

    def get(self, namespace: str, key: str) -> CachedOutcome | None:
        """The outcome kept under `key`, or None (never kept, expired, or cleared)."""
        ...

    def put(self, namespace: str, key: str, outcome: CachedOutcome, ttl: float | None) -> None:
        """Keep `outcome` under `key` for `ttl` seconds (None: until cleared)."""
        ...

    def clear(self, namespaces: Sequence[str] | None = None) -> None:
        """Forget the outcomes of these namespaces (None: every one)."""
        ...
