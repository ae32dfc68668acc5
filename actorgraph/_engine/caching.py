"""The node cache, seen from a task: whether it may reuse an outcome, under which key, and keeping one.

Pure: the cache itself (`NodeCache`, memory or SQLite) is passed in with the
run's surroundings, like the clock. A task reads the cache only when its
vertex has a `CachePolicy`, the run has a cache, and the task neither answers
an interrupt (its outcome depends on the answers) nor runs the vertex's
`on_error` handler. What is kept is what the function returned (a state, None
or a `Command`, `Send`s included) and its private value, so a hit goes through
the engine's normal path (`task.finish`): the outbox is routed again, by the
graph as it is now.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from actorgraph._engine.call import Called
from actorgraph._model.errors import ConfigError, SerializationError
from actorgraph._model.policy import CachedOutcome, CachePolicy, NodeCache
from actorgraph._model.records import Task
from actorgraph._model.spec import GraphSpec

__all__ = ["Lookup", "lookup_for", "namespace_of"]


def namespace_of(graph: str, vertex: str) -> str:
    """The cache namespace of a vertex of a graph: `graph/vertex`."""
    return f"{graph}/{vertex}"


@dataclass(frozen=True, slots=True)
class Lookup:
    """One task's place in the node cache: where its outcome is kept, and for how long.

    Attributes:
        cache: the run's node cache.
        namespace: `graph/vertex`.
        key: the digest of the task's input (by the policy's key) and private value.
        ttl: seconds a kept outcome stays reusable, or None.
    """

    cache: NodeCache
    namespace: str
    key: str
    ttl: float | None

    def hit(self) -> Called | None:
        """What the vertex did for an equal input within the TTL, as if it had just done it; or None."""
        kept = self.cache.get(self.namespace, self.key)
        if kept is None:
            return None
        return Called(kept.returned, value=kept.value)

    def keep(self, called: Called) -> None:
        """Keep what the vertex did (its outcome was `ok`).

        Raises:
            SerializationError: naming the vertex, when the cache cannot store the outcome.
        """
        try:
            self.cache.put(self.namespace, self.key, CachedOutcome(called.returned, called.value), self.ttl)
        except SerializationError as exc:
            vertex = self.namespace.rpartition("/")[2]
            msg = (
                f"vertex {vertex!r}: the node cache cannot keep what it returned ({exc}); make the "
                "state fit the cache's serializer, or remove its CachePolicy"
            )
            raise SerializationError(msg) from exc


def lookup_for(
    spec: GraphSpec, task: Task, cache: NodeCache | None, state: Any, *, handler: bool
) -> Lookup | None:
    """The task's place in the cache, or None when it must call its vertex and keep nothing.

    Args:
        spec: the graph.
        task: the task (its private value and answers are read).
        cache: the run's node cache, or None.
        state: the state the vertex is given (read, never changed).
        handler: the attempt runs the vertex's `on_error` handler.

    Raises:
        ConfigError: the policy's key function returned neither str nor bytes.
        SerializationError: the default key could not serialize the state.
    """
    if cache is None or handler or task.resumes:
        return None
    policy = spec.vertices[task.vertex].cache
    if policy is None:
        return None
    try:
        key = cache.digest((_key_part(policy, task, state), task.value))
    except SerializationError as exc:
        msg = (
            f"vertex {task.vertex!r}: the node cache cannot make a key of its input ({exc}); give its "
            "CachePolicy a key= function of the state, or make the state fit the cache's serializer"
        )
        raise SerializationError(msg) from exc
    return Lookup(cache, namespace_of(spec.name, task.vertex), key, policy.ttl)


def _key_part(policy: CachePolicy, task: Task, state: Any) -> Any:
    if policy.key is None:
        return state
    part = policy.key(state)
    if not isinstance(part, (str, bytes)):
        msg = (
            f"vertex {task.vertex!r}: CachePolicy(key=...) returned {type(part).__name__}; "
            "the key function must return a str or bytes"
        )
        raise ConfigError(msg)
    return part
