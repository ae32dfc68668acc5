"""The colours of a thread's picture (`History.statuses`) are read from the newest checkpoints only.

A long thread is read a page at a time, newest first, and no further than the
colours need: the tests count the checkpoints a real SQLite store hands out,
and compare the colours with those of a read of every checkpoint (what
`statuses` did before it read pages).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import actorgraph as ag
from actorgraph._api import history
from actorgraph._api.history import History
from actorgraph._model.records import NS
from actorgraph._model.spec import GraphSpec
from actorgraph.checkpoint import SqliteCheckpointer

Compile = Callable[..., ag.CompiledGraph[Any]]
SEVERITY = {"pending": 0, "ok": 1, "interrupt": 2, "error": 3}
PAGE = 8  # STATUS_PAGE in these tests: a thread of a few dozen supersteps is many pages long


class CountingStore(SqliteCheckpointer):
    """A real SQLite store that counts the checkpoints it hands out.

    `read`: rows of `history()` and `get()`, and calls of `get_writes()` (the
    task results of one checkpoint); `touched`: the checkpoints of `get()` and
    `get_writes()`, by thread.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.read = 0
        self.touched: set[tuple[str, str]] = set()

    def history(self, thread_id: str, **kwargs: Any) -> list[Any]:
        rows = super().history(thread_id, **kwargs)
        self.read += len(rows)
        return rows

    def get(self, thread_id: str, checkpoint_id: str | None = None) -> Any:
        row = super().get(thread_id, checkpoint_id)
        if row is not None:
            self.read += 1
            self.touched.add((thread_id, row.checkpoint_id))
        return row

    def get_writes(self, thread_id: str, checkpoint_id: str) -> Any:
        self.read += 1
        self.touched.add((thread_id, checkpoint_id))
        return super().get_writes(thread_id, checkpoint_id)


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setattr(history, "STATUS_PAGE", PAGE)
    with CountingStore(tmp_path / "runs.db") as opened:
        yield opened


def every_checkpoint(found: History, thread_id: str, spec: GraphSpec | None = None) -> dict[str, str]:
    """The colours as `statuses` made them before it read pages: every checkpoint of the thread, loaded."""
    spec = spec or found.spec
    out: dict[str, str] = {}
    for index, row in enumerate(found._store().history(thread_id)):
        loaded = found._load(thread_id, row.checkpoint_id)
        latest: dict[str, str] = {}
        for result in loaded.pending.values():
            previous = latest.get(result.vertex)
            if previous is None or SEVERITY[result.status] > SEVERITY[previous]:
                latest[result.vertex] = result.status
        if index == 0:
            latest.update({v: "pending" for v in loaded.position.next_vertices() if v not in latest})
        for vertex, status in latest.items():
            out.setdefault(vertex, status)
        runs = [
            (namespace.rpartition("@")[0].split(":")[0] + "/", namespace, child)
            for namespace, child in found._children(spec, thread_id, loaded)
        ]
        for prefix, namespace, child in runs:
            if prefix in out:  # a newer run of this subgraph was taken
                continue
            out[prefix] = ""
            out |= {
                prefix + p: c for p, c in every_checkpoint(found, thread_id + NS + namespace, child).items()
            }
    return {path: status for path, status in out.items() if status}


def colours(
    app: ag.CompiledGraph[Any], store: CountingStore, thread_id: str, *, old: bool = False
) -> tuple[dict[str, str], int]:
    """The colours of the thread (`old`: read from every checkpoint), and how many checkpoints were read."""
    store.read = 0
    found = every_checkpoint(app._threads, thread_id) if old else app._threads.statuses(thread_id)
    return found, store.read


def loop(steps: int, *, branch: bool = False) -> ag.Graph[Any]:
    """`inc` runs `steps` times; with `branch`, a vertex `never` it could route to but never does."""
    g: ag.Graph[Any] = ag.Graph()
    g.add_vertex("inc", lambda s: {"n": s["n"] + 1})
    g.add_edge(ag.START, "inc")
    if branch:
        g.add_vertex("never", lambda s: s)
        g.add_edge("never", ag.END)
    routes = ["inc", "never", ag.END] if branch else None
    g.add_conditional_edges("inc", lambda s: "inc" if s["n"] < steps else ag.END, routes)
    return g


def test_a_long_thread_is_coloured_from_its_newest_page(compile_graph: Compile, store: CountingStore) -> None:
    steps = 12 * PAGE
    app = compile_graph(loop(steps), checkpointer=store)
    app.invoke({"n": 0}, thread_id="long", recursion_limit=steps + 10)
    new, read = colours(app, store, "long")
    old, read_before = colours(app, store, "long", old=True)
    assert new == old == {"inc": "ok"}
    assert read_before > 2 * steps  # every row of the history, then every row again to load it
    assert read <= PAGE + 3  # one page of the history, the head, and the results of the checkpoint before
    assert "class v0 ok" in app.draw_mermaid("long")


def test_a_thread_paused_mid_loop_is_coloured_from_its_newest_checkpoints(
    compile_graph: Compile, store: CountingStore
) -> None:
    steps = 12 * PAGE
    app = compile_graph(loop(steps), checkpointer=store, interrupt_before=["inc"])
    app.invoke({"n": 0}, thread_id="paused")
    for _ in range(5 * PAGE):
        app.invoke(None, thread_id="paused")
    new, read = colours(app, store, "paused")
    assert new == colours(app, store, "paused", old=True)[0] == {"inc": "interrupt"}
    assert read <= PAGE + 2  # one page of the history, and the head


def test_a_vertex_that_never_ran_leaves_every_checkpoint_to_read(
    compile_graph: Compile, store: CountingStore
) -> None:
    steps = 6 * PAGE
    app = compile_graph(loop(steps, branch=True), checkpointer=store)
    app.invoke({"n": 0}, thread_id="branch", recursion_limit=steps + 10)
    new, read = colours(app, store, "branch")
    store.touched.clear()
    old, read_before = colours(app, store, "branch", old=True)
    assert store.touched == {("branch", r.checkpoint_id) for r in store.history("branch")}
    store.touched.clear()
    assert colours(app, store, "branch")[0] == new
    assert new == old == {"inc": "ok"}
    # `never` might have run in the oldest superstep: every checkpoint is read (its results only)
    assert store.touched == {("branch", r.checkpoint_id) for r in store.history("branch")}
    assert read < read_before


def test_errors_and_questions_are_coloured_as_before(compile_graph: Compile, store: CountingStore) -> None:
    def fails(state: Any) -> Any:
        raise ValueError("no")

    g: ag.Graph[Any] = ag.Graph()
    g.add_vertex("first", lambda s: s)
    g.add_vertex("ask", lambda s: {**s, "answer": ag.interrupt("go on?")})
    g.add_vertex("second", fails)
    g.add_vertex("third", lambda s: s)
    for a, b in [(ag.START, "first"), ("first", "ask"), ("ask", "second"), ("second", "third")]:
        g.add_edge(a, b)
    g.add_edge("third", ag.END)
    app = compile_graph(g, checkpointer=store)
    app.invoke({}, thread_id="t")
    asked = colours(app, store, "t")[0]
    assert asked == colours(app, store, "t", old=True)[0] == {"first": "ok", "ask": "interrupt"}
    with pytest.raises(ag.VertexError):
        app.invoke(ag.Command(resume="yes"), thread_id="t")
    failed = colours(app, store, "t")[0]
    assert failed == colours(app, store, "t", old=True)[0] == {"first": "ok", "ask": "ok", "second": "error"}


def test_a_subgraph_run_many_times_is_coloured_by_its_newest_run(
    compile_graph: Compile, store: CountingStore
) -> None:
    inner: ag.Graph[Any] = ag.Graph(name="inner")
    inner.add_vertex("fetch", lambda s: {**s, "n": s["n"] + 1})
    inner.add_vertex("check", lambda s: {**s, "last": s["n"]})
    inner.add_edge(ag.START, "fetch").add_edge("fetch", "check").add_edge("check", ag.END)
    rounds = 3 * PAGE
    outer: ag.Graph[Any] = ag.Graph(name="outer")
    outer.add_vertex("work", inner)
    outer.add_edge(ag.START, "work")
    outer.add_conditional_edges("work", lambda s: "work" if s["n"] < rounds else ag.END)
    app = compile_graph(outer, checkpointer=store)
    app.invoke({"n": 0}, thread_id="sub", recursion_limit=rounds + 10)
    new, read = colours(app, store, "sub")
    old, read_before = colours(app, store, "sub", old=True)
    assert new == old == {"work": "ok", "work/fetch": "ok", "work/check": "ok"}
    assert read_before > 2 * rounds
    assert read <= 2 * (PAGE + 3)  # a page of the thread and one of the newest subgraph run
