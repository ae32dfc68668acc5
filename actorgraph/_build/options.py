"""Checks of the options a graph and its vertices are given, each where it is given."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal, TypedDict

from actorgraph._model.errors import GraphValidationError
from actorgraph._model.policy import CachePolicy, RetryPolicy
from actorgraph._model.records import END, START

__all__ = [
    "VertexOptions",
    "cache_policy_of",
    "check_name",
    "check_option_names",
    "defer_of",
    "policies_of",
    "resources_of",
]


class VertexOptions(TypedDict, total=False):
    """The options of `Graph.add_vertex(name, fn, **options)`, all optional.

    Attributes:
        retry: a `RetryPolicy` or several (the first that matches decides).
        timeout: seconds a task may run before it is abandoned and retried.
        destinations: where `Command(goto=...)` may route.
        concurrency: the most tasks of this vertex running at once (default 32 for a
            function, each running task holding a thread; no bound for an `async def`
            function, whose tasks wait on an event loop without a thread).
        on_error: `handler(state, error)` run after the retries are spent; it returns
            what the vertex would have (a state, or a `Command`). In a new process,
            `error` is a `RecordedError`.
        returns: `"state"` or `"update"`, for this vertex (default: the graph's;
            for a subgraph, `"update"` with `output`, else `"state"`).
        input: for a subgraph, `input(state)` makes its input (default: the state).
        output: for a subgraph, `output(final)` makes an update of this graph's
            state from the subgraph's final state, applied through its reducers
            (default: the final state is the vertex's new state, as it is).
        inputs: explicit data flow: the vertex is given only these, as a mapping
            of its own names: a list of state keys, or `{name: "KEY" | "flow.KEY" |
            "global.KEY"}` (`global.` reads the graph's `globals=`). Keys the state
            lacks are left out.
        outputs: explicit data flow: the keys the vertex may write, a list, or
            `{returned_key: "KEY"}` to rename; writing another key is an
            `InvalidUpdateError`. With `inputs` or `outputs` the vertex returns an update.
        resources: what a worker must hold to run it on a distributed backend, in Ray's
            names: `{"num_cpus": 2, "num_gpus": 1, "my_resource": 1}`; threads ignore it.
        cache: a `CachePolicy(ttl=None, key=None)`: a task whose input equals (by `key`)
            one the vertex handled within `ttl` seconds reuses that outcome without
            calling the function; the graph needs `compile(cache=MemoryCache())` or
            `SqliteCache(path)`. Not for a subgraph vertex.
        defer: True: the vertex runs only when no other vertex has a message waiting;
            its messages wait in its inbox until then (an aggregator after branches of
            uneven length runs once, at the end).
    """

    retry: RetryPolicy | Sequence[RetryPolicy] | None
    timeout: float | None
    destinations: Sequence[str] | None
    concurrency: int | None
    on_error: Callable[[Any, BaseException], Any] | None
    returns: Literal["state", "update"] | None
    input: Callable[[Any], Any] | None
    output: Callable[[Any], Any] | None
    inputs: Sequence[str] | Mapping[str, str] | None
    outputs: Sequence[str] | Mapping[str, str] | None
    resources: Mapping[str, float] | None
    cache: CachePolicy | None
    defer: bool


OPTION_NAMES = frozenset(VertexOptions.__annotations__)


def check_option_names(name: str, given: Mapping[str, Any]) -> None:
    """Refuse an option `add_vertex` does not have, suggesting the one meant."""
    for option in given:
        if option not in OPTION_NAMES:
            import difflib  # noqa: PLC0415 - only a misspelt option needs it

            close = difflib.get_close_matches(option, OPTION_NAMES, n=1)
            hint = (
                f" (did you mean {close[0]!r}?)"
                if close
                else f" (options: {', '.join(sorted(OPTION_NAMES))})"
            )
            msg = f"vertex {name!r}: add_vertex has no option {option!r}{hint}"
            raise GraphValidationError(msg)


def check_name(name: Any) -> None:
    """Refuse a vertex name that is empty, reserved, or holds a character the engine uses."""
    if not isinstance(name, str) or not name:
        kind = type(name).__name__
        msg = f"add_vertex({name!r:.60}, ...): a vertex name must be a non-empty string, not {kind}"
        raise GraphValidationError(msg)
    if name in (START, END):
        msg = f"{name!r} is reserved (START / END); choose another vertex name"
        raise GraphValidationError(msg)
    for mark, use in ((":", "task ids"), ("|", "subgraph namespaces"), ("/", "paths into subgraphs")):
        if mark in name:
            msg = f"vertex name {name!r} contains {mark!r}, which {use} use; choose another name"
            raise GraphValidationError(msg)


def check_endpoint(value: Any, role: str, call: str) -> str:
    """`value` if it can name a vertex, START or END (a non-empty string).

    Raises:
        GraphValidationError: naming the call and the argument (`role`: "source", "target").
    """
    if not isinstance(value, str) or not value:
        msg = (
            f"{call}: the {role} must be a vertex name (a non-empty string), START or END, got "
            f"{type(value).__name__} {value!r:.60}"
        )
        raise GraphValidationError(msg)
    return value


def resources_of(name: str, resources: Any) -> dict[str, float] | None:
    """`add_vertex(resources=)` checked: names to non-negative amounts."""
    if resources is None:
        return None
    if not isinstance(resources, Mapping):
        msg = f"vertex {name!r}: resources must be a mapping such as {{'num_cpus': 1}}, got {resources!r}"
        raise GraphValidationError(msg)
    checked: dict[str, float] = {}
    for key, amount in resources.items():
        if not isinstance(key, str) or not key:
            msg = f"vertex {name!r}: resource names must be non-empty strings, got {key!r}"
            raise GraphValidationError(msg)
        if isinstance(amount, bool) or not isinstance(amount, (int, float)) or not amount >= 0:
            msg = f"vertex {name!r}: resource {key!r} must be a number >= 0, got {amount!r}"
            raise GraphValidationError(msg)
        checked[key] = float(amount)
    return checked


def policies_of(retry: RetryPolicy | Sequence[RetryPolicy] | None, what: str) -> tuple[RetryPolicy, ...]:
    """`retry=` as a tuple of policies (none for None)."""
    if retry is None:
        return ()
    if isinstance(retry, RetryPolicy):
        policies: tuple[Any, ...] = (retry,)
    elif isinstance(retry, (list, tuple)):
        policies = tuple(retry)
    else:
        policies = (retry,)
    if not all(isinstance(p, RetryPolicy) for p in policies):
        msg = f"{what} must be a RetryPolicy or a list of them, got {retry!r}"
        raise GraphValidationError(msg)
    return policies


def cache_policy_of(name: str, cache: Any, *, subgraph: bool) -> CachePolicy | None:
    """`add_vertex(cache=)` checked: a `CachePolicy`, on a vertex that is not a subgraph."""
    if cache is None:
        return None
    if not isinstance(cache, CachePolicy):
        msg = (
            f"vertex {name!r}: cache must be a CachePolicy(ttl=..., key=...), got "
            f"{type(cache).__name__} {cache!r:.60}"
        )
        raise GraphValidationError(msg)
    if subgraph:
        msg = (
            f"vertex {name!r} is a subgraph, whose outcome cannot be cached; give CachePolicy "
            "to the vertices inside it"
        )
        raise GraphValidationError(msg)
    return cache


def defer_of(name: str, defer: Any) -> bool:
    """`add_vertex(defer=)` checked: True or False."""
    if defer is None:
        return False
    if not isinstance(defer, bool):
        msg = f"vertex {name!r}: defer must be True or False, got {defer!r:.60}"
        raise GraphValidationError(msg)
    return defer
