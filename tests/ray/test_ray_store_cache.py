"""On the Ray backend: `ctx.store` travels with each call, and node-cache hits never leave the driver."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

import actorgraph as ag
from actorgraph.ray import RayBackend  # sets Ray's sandbox settings before Ray is imported

pytestmark = pytest.mark.slow  # a real Ray cluster

ray = pytest.importorskip("ray", reason='the Ray backend needs Ray: pip install -e ".[ray]"')


class FileStore:
    """A store kept in a JSON file: pickled with each call, it works in the partition's process too."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def put(self, key: str, value: Any) -> None:
        data = json.loads(self.path.read_text()) if self.path.exists() else {}
        data[key] = value
        self.path.write_text(json.dumps(data))

    def get(self, key: str) -> Any:
        return json.loads(self.path.read_text()).get(key) if self.path.exists() else None


def test_the_store_reaches_vertices_in_partition_processes(backend: RayBackend, tmp_path: Path) -> None:
    def note(state: dict[str, Any], ctx: ag.Context[Any]) -> dict[str, Any]:
        ctx.store.put("pid", os.getpid())
        return state

    g: ag.Graph = ag.Graph()
    g.add_vertex("note", note)
    g.add_edge(ag.START, "note")
    g.add_edge("note", ag.END)
    store = FileStore(tmp_path / "store.json")
    with g.compile(backend=backend, store=store) as app:
        app.invoke({})
    assert store.get("pid") not in (None, os.getpid())


def test_a_cache_hit_calls_no_partition(backend: RayBackend, tmp_path: Path) -> None:
    calls = tmp_path / "calls.txt"

    def double(state: dict[str, Any]) -> dict[str, Any]:
        with calls.open("a") as f:
            f.write("x")
        return {"n": state["n"] * 2}

    g: ag.Graph = ag.Graph()
    g.add_vertex("double", double, cache=ag.CachePolicy())
    g.add_edge(ag.START, "double")
    g.add_edge("double", ag.END)
    with ag.SqliteCache(tmp_path / "cache.db") as cache, g.compile(backend=backend, cache=cache) as app:
        assert [app.invoke({"n": 3}).state for _ in range(3)] == [{"n": 6}] * 3
    assert calls.read_text() == "x"
