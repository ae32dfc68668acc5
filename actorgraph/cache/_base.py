"""What every node cache shares: keys, entries as plain data, TTLs, and damaged entries as misses.

A subclass keeps bytes under (namespace, key) and implements four steps: load
one entry (unexpired), save one, forget namespaces, sweep the expired ones.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable, Sequence
from typing import Any

from actorgraph._model.errors import ActorGraphError
from actorgraph._model.policy import CachedOutcome, check_ttl
from actorgraph._model.warnings import CacheWarning
from actorgraph.cache._entries import Damaged, outcome_of, plain_entry
from actorgraph.cache._keys import encode

__all__ = ["SWEEP_EVERY", "Cache", "Damaged"]

SWEEP_EVERY = 256
"""Puts between removals of expired entries."""


class Cache:
    """What both caches share: digests, entries as plain data, and TTLs; a subclass keeps the bytes."""

    def __init__(self, serializer: Any, clock: Callable[[], float] | None) -> None:
        if serializer is None:
            from actorgraph.checkpoint.serde import MsgpackSerializer  # noqa: PLC0415 - on first use

            serializer = MsgpackSerializer()
        if not (
            callable(getattr(serializer, "dumps", None)) and callable(getattr(serializer, "loads", None))
        ):
            msg = (
                f"a node cache's serializer= must have dumps() and loads() (a checkpoint serializer "
                f"such as MsgpackSerializer(allowed=...)), got {type(serializer).__name__}"
            )
            raise ActorGraphError(msg)
        self.serializer = serializer
        self._clock: Callable[[], float] = clock or time.time
        self._puts = 0

    def digest(self, parts: Any) -> str:
        """A stable digest of `parts`: the same in every process, and never the same for different inputs.

        Dicts and sets in any order give one digest; values of other types or
        shapes give others (`1`, `1.0` and `True`; `str` and `bytes`; `list` and
        `tuple`; a dict and a tuple spelling it out). Values beyond plain data
        (datetimes, allowed dataclasses, pydantic models, enums) are digested
        from the serializer's bytes of them.

        Raises:
            SerializationError: `parts` holds a value the serializer cannot store
                (give the vertex's `CachePolicy` a `key=` function, or allow the class).
        """
        address = getattr(self.serializer, "address", None)
        inner = getattr(self.serializer, "inner", None)
        encrypting = callable(address) and inner is not None
        plain: Callable[[Any], bytes] = inner.dumps if encrypting else self.serializer.dumps  # type: ignore[union-attr]
        data = encode(parts, plain)
        if encrypting:  # a keyed digest: without the key, it tells nothing about the state
            return str(address(data))  # type: ignore[misc]
        import hashlib  # noqa: PLC0415 - it loads OpenSSL: only when a cache is used

        return hashlib.blake2b(data, digest_size=20).hexdigest()

    def get(self, namespace: str, key: str) -> CachedOutcome | None:
        """The outcome kept under `key` in `namespace`, or None (never kept, expired or cleared).

        An entry this cache cannot use (damaged, or written with another
        serializer or key) is None too, with a `CacheWarning` naming the cache,
        the vertex and what is wrong: the vertex runs, and its outcome replaces the entry.
        """
        try:
            data = self._load(namespace, key, self._clock())
            if data is None:
                return None
            try:
                entry = self.serializer.loads(data, aad=_aad(namespace, key))
            except Exception as exc:  # noqa: BLE001 - any serializer's refusal of stored bytes
                raise Damaged(f"its bytes cannot be loaded: {_fact(exc)}") from None
            return outcome_of(entry)
        except Damaged as damaged:
            self._warn(namespace, str(damaged))
            return None

    def put(self, namespace: str, key: str, outcome: CachedOutcome, ttl: float | None) -> None:
        """Keep `outcome` under `key` in `namespace` for `ttl` seconds (None: until cleared).

        Raises:
            SerializationError: the outcome holds a value the serializer cannot store.
            ConfigError: `ttl` is neither None nor a number of seconds above 0 and at most 1e9.
        """
        check_ttl(ttl, f"{type(self).__name__}.put")
        data = self.serializer.dumps(plain_entry(outcome), aad=_aad(namespace, key))
        now = self._clock()
        self._save(namespace, key, data, None if ttl is None else now + ttl)
        self._puts += 1
        if self._puts % SWEEP_EVERY == 0:
            self._sweep(now)

    def clear(self, namespaces: Sequence[str] | None = None) -> None:
        """Forget every outcome of these namespaces (`graph/vertex`), or all of them with None."""
        self._forget(None if namespaces is None else list(namespaces))

    def _warn(self, namespace: str, wrong: str) -> None:
        graph, _, vertex = namespace.rpartition("/")
        message = (
            f"{self._describe()}: the entry of vertex {vertex!r} (graph {graph!r}) is not usable: "
            f"{wrong}. It counts as a miss: the vertex runs and its outcome replaces the entry. If "
            "every process sharing this cache gives it the same serializer (and key), the entry was "
            "changed outside actorgraph; clear_cache() forgets the vertex's entries"
        )
        warnings.warn(message, CacheWarning, stacklevel=3)

    # -- what a cache implements ---------------------------------------------------------

    def _describe(self) -> str:
        """The cache, as a warning names it."""
        return type(self).__name__

    def _load(self, namespace: str, key: str, now: float) -> bytes | None:
        """The bytes of the unexpired entry, or None; `Damaged` when the stored row is not an entry's."""
        raise NotImplementedError

    def _save(self, namespace: str, key: str, data: bytes, expires: float | None) -> None:
        raise NotImplementedError

    def _forget(self, namespaces: list[str] | None) -> None:
        raise NotImplementedError

    def _sweep(self, now: float) -> None:
        raise NotImplementedError


def _aad(namespace: str, key: str) -> bytes:
    """Binds an entry's bytes to its place (an encrypting serializer refuses them elsewhere)."""
    return f"cache|{namespace}|{key}".encode()


def _fact(exc: Exception) -> str:
    """The first clause of an error's message: what was wrong, without advice meant for a checkpointer."""
    text, depth = str(exc) or type(exc).__name__, 0
    for at, char in enumerate(text):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if depth == 0 and text[at : at + 2] in ("; ", ". ", ": "):
            return text[:at]
    return text.rstrip(".")
