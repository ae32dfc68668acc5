"""The options of a run: the keywords of `invoke`, `start`, `stream` and their async twins, checked once.

`RunKeywords` types them for the caller (`**run: Unpack[RunKeywords]`), and
`run_request` turns them into one checked `RunRequest` record, with the compiled graph's
defaults filled in: every default and every check lives here, once.
"""

from __future__ import annotations

import difflib
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Final, TypedDict

from actorgraph._actors.backend import DEFAULT, Backend
from actorgraph._api.spellings import with_config
from actorgraph._engine.caching import namespace_of
from actorgraph._engine.live import LIVE_DEFAULT
from actorgraph._model.errors import ConfigError
from actorgraph._model.policy import NodeCache
from actorgraph._model.runs import DURABILITY, Breakpoints, Durability, RunRequest
from actorgraph._model.spec import GraphSpec
from actorgraph._model.warnings import GraphValidationWarning
from actorgraph.checkpoint._protocol import Checkpointer
from actorgraph.checkpoint._store import check_thread_id
from actorgraph.events import Listener

__all__ = [
    "DEFAULT_RECURSION_LIMIT",
    "LIVE_DEFAULT",
    "GraphSettings",
    "RunKeywords",
    "cache_namespaces",
    "check_cache",
    "check_durability",
    "resolve_breakpoints",
    "run_request",
]

DEFAULT_RECURSION_LIMIT: Final = 10_000
"""The most supersteps one invoke may run, unless `recursion_limit=` says otherwise."""


class RunKeywords(TypedDict, total=False):
    """The keywords every way of running a graph takes (`invoke`, `start`, `stream`, `ainvoke`, ...).

    Attributes:
        thread_id: names the run's persisted history (needed with a checkpointer).
        context: any object; vertices read it as `ctx.context` (default: `compile(context=...)`).
        recursion_limit: the most supersteps this invoke may run (default 10,000).
        checkpoint_id: replay (with input None) or fork from this older checkpoint.
        durability: "sync" (default), "step" or "exit" (default: `compile(durability=...)`).
        interrupt_before: pause before these vertices ("*" for all), this run only.
        interrupt_after: pause after the supersteps these vertices ran in, this run only.
        discard_pending: give a new input to a thread whose last superstep failed or
            is paused, dropping that superstep.
        listeners: callables that receive this run's events.
        answered_by: who gives this run's answers (`Command(resume=...)`), recorded
            with each answer's claim and shown to anyone whose answer comes later
            (default: `user@host (pid N)` of this process).
    """

    thread_id: str | None
    context: Any
    recursion_limit: int | None
    checkpoint_id: str | None
    durability: str | None
    interrupt_before: Sequence[str] | str | None
    interrupt_after: Sequence[str] | str | None
    discard_pending: bool
    listeners: Sequence[Listener]
    answered_by: str | None


_KEYWORDS: Final = frozenset(RunKeywords.__annotations__)


@dataclass(frozen=True, slots=True)
class GraphSettings:
    """What `compile()` fixed for every run of a graph."""

    spec: GraphSpec
    checkpointer: Checkpointer | None
    breakpoints: Breakpoints
    durability: Durability
    listeners: tuple[Listener, ...] = ()
    context: Any = None
    backend: Backend = DEFAULT
    store: Any = None
    cache: NodeCache | None = None
    stateful: bool = False  # compiled with checkpointer=True: a subgraph that keeps its state
    tracing: bool = True  # compile(tracing=...): runs are OpenTelemetry traces when an SDK records
    live: float | None = None  # compile(live_interrupts=...) in seconds, or None


_LIVE_MOST = 1e9  # seconds (31 years): past it, a wait is a typo


def live_seconds(wait: timedelta | float | None) -> float | None:
    """`compile(live_interrupts=...)` in seconds, or None when the live path is off.

    Raises:
        ConfigError: not a positive `timedelta` or number of seconds.
    """
    if wait is None:
        return None
    seconds = wait.total_seconds() if isinstance(wait, timedelta) else wait
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not 0 < seconds < _LIVE_MOST:
        msg = (
            f"live_interrupts must be a positive timedelta (or seconds), or None to turn the live "
            f"path off; got {wait!r}"
        )
        raise ConfigError(msg)
    return float(seconds)


def run_request(
    settings: GraphSettings, keywords: Mapping[str, Any], *, sink: Listener | None = None, config: Any = None
) -> RunRequest:
    """The run's options from the keywords a caller gave, checked, with the graph's defaults filled in.

    `config` is LangGraph's spelling of some of them (`_api/spellings.py`).

    Raises:
        ConfigError: an unknown keyword, a value out of range, or a `config` that
            actorgraph does not read or that disagrees with a keyword.
    """
    keywords = with_config(config, keywords)
    unknown = sorted(set(keywords) - _KEYWORDS)
    if unknown:
        hints = [difflib.get_close_matches(k, _KEYWORDS, n=1) for k in unknown]
        meant = "; ".join(
            f"{k!r} (did you mean {h[0]!r}?)" if h else repr(k) for k, h in zip(unknown, hints, strict=True)
        )
        msg = f"unknown run keyword(s) {meant}; the keywords are: {', '.join(sorted(_KEYWORDS))}"
        raise ConfigError(msg)
    thread_id = keywords.get("thread_id")
    if thread_id is not None:
        check_thread_id(thread_id)
    context = keywords.get("context")
    durability = keywords.get("durability")
    before, after = keywords.get("interrupt_before"), keywords.get("interrupt_after")
    breakpoints = settings.breakpoints
    if before is not None or after is not None:
        breakpoints = resolve_breakpoints(
            before if before is not None else breakpoints.before,
            after if after is not None else breakpoints.after,
            settings.spec,
        )
    listeners = (*settings.listeners, *keywords.get("listeners", ()), *([sink] if sink else []))
    return RunRequest(
        thread_id=thread_id,
        context=context if context is not None else settings.context,
        recursion_limit=_recursion_limit(keywords.get("recursion_limit")),
        checkpoint_id=keywords.get("checkpoint_id"),
        durability=check_durability(durability) if durability is not None else settings.durability,
        breakpoints=breakpoints,
        discard_pending=bool(keywords.get("discard_pending", False)),
        listeners=tuple(listeners),
        answered_by=_answerer(keywords.get("answered_by")),
        store=settings.store,
        cache=settings.cache,
        live=settings.live,
    )


_ANSWERER_LIMIT = 200


def _answerer(given: Any) -> str:
    """Who answers: `given` once checked, or "" for this process's user, host and pid.

    Those are worked out when an answer is claimed (`_actors/start.py`): a run
    that answers nothing loads neither `getpass` nor `socket`.
    """
    if given is None:
        return ""
    if not isinstance(given, str) or not given.strip() or len(given) > _ANSWERER_LIMIT:
        msg = (
            f"answered_by must be a non-empty string of at most {_ANSWERER_LIMIT} characters, got "
            f"{given!r:.80}"
        )
        raise ConfigError(msg)
    return given


def _recursion_limit(limit: Any) -> int:
    if limit is None:
        return DEFAULT_RECURSION_LIMIT
    if not isinstance(limit, int) or isinstance(limit, bool) or limit < 1:
        msg = f"recursion_limit must be a positive int, got {limit!r}"
        raise ConfigError(msg)
    return limit


def check_durability(value: Any) -> Durability:
    """`value` if it is a durability mode.

    Raises:
        ConfigError: it is not "sync", "step" or "exit".
    """
    if value not in DURABILITY:
        msg = f"durability must be one of {', '.join(DURABILITY)}, got {value!r}"
        raise ConfigError(msg)
    return value  # type: ignore[no-any-return]


def check_cache(spec: GraphSpec, cache: Any) -> NodeCache | None:
    """`compile(cache=)` checked; a warning when the cache and the vertices' `CachePolicy` miss each other.

    A policy without a cache caches nothing, and a cache without a policy holds
    nothing: both are allowed (a compiled graph may run as another's subgraph,
    with its parent's cache), and both are named in a `GraphValidationWarning`.

    Raises:
        ConfigError: `cache` is not a node cache.
    """
    cached = _cached_vertices(spec)
    if cache is None:
        if cached:
            _warn(
                f"vertices {', '.join(cached)} have a CachePolicy, but the graph was compiled without "
                "cache=: nothing is cached unless it runs as a subgraph of a graph that has one; pass "
                "compile(cache=MemoryCache()) or SqliteCache(path)"
            )
        return None
    if not has_methods(cache, ("digest", "get", "put", "clear")):
        msg = (
            f"compile(cache=...) takes a node cache (MemoryCache(), SqliteCache(path)), got "
            f"{type(cache).__name__}"
        )
        raise ConfigError(msg)
    if not cached:
        _warn(
            "the graph was compiled with cache=, but no vertex has a CachePolicy, so nothing is "
            "cached; give the vertices to cache add_vertex(..., cache=CachePolicy())"
        )
    return cache  # type: ignore[no-any-return]


def _cached_vertices(spec: GraphSpec, prefix: str = "") -> list[str]:
    """The paths of the vertices with a `CachePolicy`, inside subgraphs too (`research/fetch`)."""
    found = []
    for name, vertex in spec.vertices.items():
        if vertex.cache is not None:
            found.append(f"{prefix}{name}")
        if vertex.child is not None:
            found.extend(_cached_vertices(vertex.child.spec, f"{prefix}{name}/"))
    return found


def check_store(store: Any) -> None:
    """`compile(store=)` checked: None, or an object with a store's `put` and `get` (`actorgraph.store`).

    Raises:
        ConfigError: naming what was passed; otherwise a vertex's `ctx.store.put` would fail mid-run.
    """
    if store is None or has_methods(store, ("put", "get")):
        return
    msg = (
        "compile(store=...) takes a memory store (MemoryStore(), SqliteStore(path), PostgresStore(dsn) "
        f"from actorgraph.store), or None; got {described(store)}"
    )
    raise ConfigError(msg)


def has_methods(value: Any, names: Iterable[str]) -> bool:
    """Whether `value` is an object (not a class) with each of these methods."""
    return not isinstance(value, type) and all(callable(getattr(value, name, None)) for name in names)


def described(value: Any) -> str:
    """What was passed instead of an object a compile option takes, as an error message names it."""
    if isinstance(value, type):
        return f"the class {value.__name__} itself (pass an instance: {value.__name__}(...))"
    return type(value).__name__


def check_tracing(tracing: Any) -> bool:
    """`compile(tracing=)` checked: True or False (a string such as "no" would read as True).

    Raises:
        ConfigError: anything else.
    """
    if isinstance(tracing, bool):
        return tracing
    msg = f"compile(tracing=...) takes True or False, got {tracing!r}"
    raise ConfigError(msg)


def cache_namespaces(spec: GraphSpec, vertices: Sequence[str] | None) -> list[str]:
    """The node cache's namespaces of these vertices of `spec` (None: all, subgraphs' inside too).

    Raises:
        ConfigError: a name that is not a vertex of `spec`.
    """
    if vertices is None:
        found = [namespace_of(spec.name, name) for name in spec.vertices]
        for vertex in spec.vertices.values():
            if vertex.child is not None:
                found.extend(cache_namespaces(vertex.child.spec, None))
        return found
    if not isinstance(vertices, str | list | tuple | set | frozenset):
        msg = (
            f"clear_cache(vertices=...) takes a vertex name or a list of them, got {type(vertices).__name__}"
        )
        raise ConfigError(msg)
    names = [vertices] if isinstance(vertices, str) else list(vertices)
    unknown = [name for name in names if name not in spec.vertices]
    if unknown:
        msg = (
            f"clear_cache: {', '.join(map(repr, unknown))} not vertices of graph {spec.name!r} "
            f"(its vertices: {', '.join(spec.vertices)})"
        )
        raise ConfigError(msg)
    return [namespace_of(spec.name, name) for name in names]


def _warn(message: str) -> None:
    warnings.warn(message, GraphValidationWarning, stacklevel=4)


def resolve_breakpoints(
    before: Iterable[str] | str | None, after: Iterable[str] | str | None, spec: GraphSpec
) -> Breakpoints:
    """Breakpoints from user input, checked against the graph's vertices.

    A vertex inside a subgraph is named by its path (`research/fetch`,
    `research/*` for all of that subgraph's).

    Raises:
        ConfigError: a name that is not a vertex (or "*").
    """

    def names(value: Iterable[str] | str | None, what: str) -> frozenset[str]:
        if value is None:
            return frozenset()
        items = (value,) if isinstance(value, str) else tuple(value)
        for item in items:
            _check_path(item, spec, what)
        return frozenset(items)

    return Breakpoints(names(before, "interrupt_before"), names(after, "interrupt_after"))


def _check_path(path: str, spec: GraphSpec, what: str) -> None:
    """Raise ConfigError unless `path` names a vertex (through subgraphs: `research/fetch`) or "*"."""
    *outer, last = path.split("/") if isinstance(path, str) else [path]
    graph, walked = spec, list[str]()
    for name in outer:
        vertex = graph.vertices.get(name)
        if vertex is None or vertex.child is None:
            subgraphs = [v for v, s in graph.vertices.items() if s.child is not None]
            within = f" in {'/'.join(walked)}" if walked else ""
            msg = (
                f"{what} names {path!r}, but {name!r} is not a subgraph vertex{within} "
                f"(subgraph vertices: {', '.join(subgraphs) or 'none'})"
            )
            raise ConfigError(msg)
        graph = vertex.child.spec
        walked.append(name)
    if last != "*" and last not in graph.vertices:
        within = f" of {'/'.join(walked)}" if walked else ""
        msg = f"{what} names unknown vertex {path!r} (vertices{within}: {', '.join(graph.vertices)}; or '*')"
        raise ConfigError(msg)
