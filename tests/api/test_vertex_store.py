"""`compile(store=...)` reaches every task as `ctx.store`, subgraphs' tasks included."""

from __future__ import annotations

import threading
from typing import Any

import pytest

import actorgraph as ag
from actorgraph.checkpoint import MemoryCheckpointer

pytestmark = pytest.mark.threads_only("the store is a dict in this process's memory")


class DictStore:
    """The smallest store: a dict behind a lock (the real ones are in actorgraph.store)."""

    def __init__(self) -> None:
        self.data: dict[tuple[tuple[str, ...], str], dict[str, Any]] = {}
        self._lock = threading.Lock()

    def put(self, namespace: tuple[str, ...], key: str, value: dict[str, Any]) -> None:
        with self._lock:
            self.data[namespace, key] = value

    def get(self, namespace: tuple[str, ...], key: str) -> dict[str, Any] | None:
        with self._lock:
            return self.data.get((namespace, key))


def remember(state: dict[str, Any], ctx: ag.Context[Any]) -> dict[str, Any]:
    """Count this user's visits across threads in the store."""
    seen = ctx.store.get(("users", state["user"]), "visits") or {"n": 0}
    ctx.store.put(("users", state["user"]), "visits", {"n": seen["n"] + 1})
    return {**state, "visits": seen["n"] + 1}


def one_vertex(fn: Any) -> ag.Graph:
    g: ag.Graph = ag.Graph()
    g.add_vertex("v", fn)
    g.add_edge(ag.START, "v")
    g.add_edge("v", ag.END)
    return g


def test_every_thread_of_the_graph_shares_the_store() -> None:
    store = DictStore()
    with one_vertex(remember).compile(MemoryCheckpointer(), store=store) as app:
        assert app.invoke({"user": "ann"}, thread_id="t1").state["visits"] == 1
        assert app.invoke({"user": "ann"}, thread_id="t2").state["visits"] == 2
        assert app.invoke({"user": "bob"}, thread_id="t3").state["visits"] == 1
    assert store.data[("users", "ann"), "visits"] == {"n": 2}


def test_without_a_store_ctx_store_is_none() -> None:
    with one_vertex(lambda s, ctx: {"store": ctx.store is None}).compile() as app:
        assert app.invoke({}).state == {"store": True}


def test_a_subgraph_uses_its_parents_store_compiled_or_not() -> None:
    store = DictStore()
    compiled_inner = one_vertex(remember).compile()
    outer: ag.Graph = ag.Graph()
    outer.add_vertex("plain", one_vertex(remember))
    outer.add_vertex("compiled", compiled_inner)
    outer.add_edge(ag.START, "plain")
    outer.add_edge("plain", "compiled")
    outer.add_edge("compiled", ag.END)
    try:
        with outer.compile(MemoryCheckpointer(), store=store) as app:
            assert app.invoke({"user": "ann"}, thread_id="t").state["visits"] == 2
    finally:
        compiled_inner.close()
    assert store.data[("users", "ann"), "visits"] == {"n": 2}


def test_an_async_vertex_and_a_retry_see_the_store() -> None:
    store, failures = DictStore(), [1]

    async def flaky(state: dict[str, Any], ctx: ag.Context[Any]) -> dict[str, Any]:
        ctx.store.put(("tries",), str(ctx.attempt), {"attempt": ctx.attempt})
        if failures:
            failures.pop()
            msg = "once"
            raise ConnectionError(msg)
        return state

    g: ag.Graph = ag.Graph()
    g.add_vertex("v", flaky, retry=ag.RetryPolicy(initial_interval=0, jitter=False))
    g.add_edge(ag.START, "v")
    g.add_edge("v", ag.END)
    with g.compile(store=store) as app:
        app.invoke({})
    assert sorted(key for _, key in store.data) == ["1", "2"]
