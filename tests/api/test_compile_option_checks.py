"""Compile options and graph schemas that cannot be used are refused where they are given.

Each was accepted before and failed later, far from its cause: a store that was
a number failed inside a vertex's `ctx.store.put`, `tracing="no"` read as True,
`clear_cache` on a graph without a cache ignored names that are not vertices,
and a bad input schema was reported as the state schema.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any, TypedDict

import pytest
from lines import in_a_line

import actorgraph as ag
from actorgraph import CachePolicy, MemoryCache
from actorgraph.func import entrypoint
from actorgraph.store import MemoryStore, SqliteStore


def one_vertex(**graph: Any) -> ag.Graph:
    return in_a_line(("a", lambda s: s), **graph)


@pytest.mark.parametrize(
    ("store", "says"),
    [
        (3, "got int"),
        ("memory", "got str"),
        (MemoryStore, r"got the class MemoryStore itself \(pass an instance: MemoryStore\(\.\.\.\)\)"),
    ],
)
def test_a_store_that_is_no_store_is_refused_at_compile(store: Any, says: str) -> None:
    with pytest.raises(ag.ConfigError, match=f"compile\\(store=...\\) takes a memory store .*; {says}"):
        one_vertex().compile(store=store)
    with pytest.raises(ag.ConfigError, match="takes a memory store"):
        entrypoint(store=store)(lambda value: value)


def test_a_store_is_taken_by_its_put_and_get(compile_graph: Any, tmp_path: Path) -> None:
    with SqliteStore(tmp_path / "store.db") as store:  # a MemoryStore cannot go to Ray's workers
        app = compile_graph(one_vertex(), store=store)
        assert app.invoke({"x": 1}).state == {"x": 1}


@pytest.mark.parametrize("tracing", ["no", 0, None])
def test_tracing_takes_true_or_false_only(tracing: Any) -> None:
    with pytest.raises(
        ag.ConfigError, match=f"compile\\(tracing=...\\) takes True or False, got {tracing!r}"
    ):
        one_vertex().compile(tracing=tracing)


@pytest.mark.parametrize("cache", [None, MemoryCache()])
def test_clear_cache_checks_its_names_with_or_without_a_cache(compile_graph: Any, cache: Any) -> None:
    g: ag.Graph = ag.Graph()
    g.add_vertex("a", lambda s: s, cache=CachePolicy())
    g.add_edge(ag.START, "a")
    g.add_edge("a", ag.END)
    with pytest.warns(ag.GraphValidationWarning) if cache is None else contextlib.nullcontext():
        app = compile_graph(g, cache=cache)
    with pytest.raises(
        ag.ConfigError, match=r"clear_cache: 'b' not vertices of graph 'graph' \(its vertices: a\)"
    ):
        app.clear_cache(["b"])
    with pytest.raises(ag.ConfigError, match="takes a vertex name or a list of them, got int"):
        app.clear_cache(3)  # type: ignore[arg-type]
    app.clear_cache(["a"])
    app.clear_cache("a")
    app.clear_cache()


class State(TypedDict):
    x: int


@pytest.mark.parametrize("role", ["input", "output"])
def test_a_boundary_schema_that_is_no_schema_is_named_by_its_own_keyword(role: str) -> None:
    with pytest.raises(ag.GraphValidationError, match=f"Graph\\({role}=...\\) takes a TypedDict.*got 3"):
        one_vertex(state=State, **{role: 3}).compile()
