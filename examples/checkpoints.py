"""Checkpoints: a thread's history in SQLite, durability modes, forks, and the safe serializer.

Run it: python examples/checkpoints.py [DIRECTORY]

It writes one SQLite file, in DIRECTORY or in a temporary directory.
"""

from __future__ import annotations

import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import actorgraph as ag
from actorgraph.checkpoint import MemoryCheckpointer, MsgpackSerializer, SqliteCheckpointer

State = dict[str, Any]


def pipeline() -> ag.Graph[State]:
    """START -> fetch -> parse -> store -> END."""
    graph: ag.Graph[State] = ag.Graph(name="pipeline")
    graph.add_vertex("fetch", lambda s: {**s, "raw": f"<p>{s['url']}</p>"})
    graph.add_vertex("parse", lambda s: {**s, "text": s["raw"][3:-4]})
    graph.add_vertex("store", lambda s: {**s, "stored": True})
    graph.add_edge(ag.START, "fetch")
    graph.add_edge("fetch", "parse")
    graph.add_edge("parse", "store")
    graph.add_edge("store", ag.END)
    return graph


def history(app: ag.CompiledGraph[State]) -> None:
    # --8<-- [start:history]
    app.invoke({"url": "example.org"}, thread_id="page-1")
    snap = app.get_state("page-1")  # the newest checkpoint
    print(f"{snap.status} at step {snap.step}: {snap.state}")
    for old in app.get_history("page-1"):  # newest first; limit=..., before=checkpoint_id
        print(f"  {old.checkpoint_id} step {old.step} {old.source:<5} next={old.next}")
    # --8<-- [end:history]
    assert snap.status == "done"
    assert [old.step for old in app.get_history("page-1")] == [3, 2, 1, 0]
    assert [old.source for old in app.get_history("page-1")] == ["loop", "loop", "loop", "input"]


def durability(app: ag.CompiledGraph[State]) -> None:
    # --8<-- [start:durability]
    for mode in ("sync", "step", "exit"):
        app.invoke({"url": "example.org"}, thread_id=f"durable-{mode}", durability=mode)
        kept = len(app.get_history(f"durable-{mode}"))
        print(f"durability={mode!r}: {kept} checkpoint(s)")
    # --8<-- [end:durability]
    assert len(app.get_history("durable-sync")) == 4
    assert len(app.get_history("durable-step")) == 4
    assert len(app.get_history("durable-exit")) == 1


def forks(app: ag.CompiledGraph[State]) -> None:
    # --8<-- [start:fork]
    after_fetch = next(s for s in app.get_history("page-1") if s.step == 1)
    # pretend `parse` produced this state, and let the run go on from there
    app.update_state(
        "page-1",
        {**after_fetch.state, "text": "fixed by hand"},
        as_vertex="parse",
        checkpoint_id=after_fetch.checkpoint_id,
    )
    print(f"after update_state: next={app.get_state('page-1').next}")
    fixed = app.invoke(None, thread_id="page-1")
    print(f"continued: {fixed.state['text']!r}")

    # replay from an older checkpoint: the thread forks, its history stays
    again = app.invoke(None, thread_id="page-1", checkpoint_id=after_fetch.checkpoint_id)
    print(f"replayed: {again.state['text']!r}; {len(app.get_history('page-1'))} checkpoints kept")
    # --8<-- [end:fork]
    assert fixed.state["text"] == "fixed by hand"
    assert again.state["text"] == "example.org"
    sources = [s.source for s in app.get_history("page-1")]
    assert "update" in sources
    assert "fork" in sources


# --8<-- [start:serializer]
@dataclass(frozen=True)
class Page:
    """A value in the state that is a dataclass: stored only when its class is allowed."""

    url: str
    words: int = 0


def count_words(state: State) -> State:
    return {**state, "page": Page(state["url"], words=len(state["url"].split(".")))}


def one_vertex() -> ag.Graph[State]:
    graph: ag.Graph[State] = ag.Graph(name="pages")
    graph.add_vertex("count", count_words)
    graph.add_edge(ag.START, "count")
    graph.add_edge("count", ag.END)
    return graph


def serializers() -> None:
    with one_vertex().compile(MemoryCheckpointer()) as app:  # the default MsgpackSerializer()
        try:
            app.invoke({"url": "example.org"}, thread_id="p1")
        except ag.SerializationError as exc:
            print(f"refused: {exc}")
            refused = exc
    store = MemoryCheckpointer(serializer=MsgpackSerializer(allowed=[Page]))
    with one_vertex().compile(store) as app:
        page = app.invoke({"url": "example.org"}, thread_id="p1").state["page"]
    print(f"allowed: {page}")
    # --8<-- [end:serializer]
    assert "vertex 'count'" in str(refused)
    assert "['page']" in str(refused)
    assert page == Page("example.org", words=2)


def prune(store: SqliteCheckpointer, app: ag.CompiledGraph[State]) -> None:
    # --8<-- [start:prune]
    before = len(app.get_history("page-1"))
    deleted = store.prune("page-1", keep=2)  # keep the newest 2 checkpoints
    store.delete_thread("durable-exit")  # a whole thread: its checkpoints, writes and states
    print(f"pruned {deleted} of {before} checkpoints; threads: {[t.thread_id for t in store.threads()]}")
    # --8<-- [end:prune]
    assert len(app.get_history("page-1")) == 2
    assert app.get_state("page-1").status == "done"
    assert "durable-exit" not in [t.thread_id for t in store.threads()]


def read_only(path: Path) -> None:
    # --8<-- [start:readonly]
    with SqliteCheckpointer(path, readonly=True) as store, pipeline().compile(store) as app:
        print(f"read-only: {app.get_state('page-1').state['text']!r}")
        try:
            app.invoke({"url": "example.com"}, thread_id="page-2")
        except ag.CheckpointError as exc:
            print(f"a write: {type(exc).__name__}, the store is read-only")
            refused = exc
    # --8<-- [end:readonly]
    assert "open read-only" in str(refused)


def main(directory: str | None = None) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(directory or scratch) / "runs.db"
        # --8<-- [start:open]
        with SqliteCheckpointer(path) as store, pipeline().compile(store) as app:
            history(app)
            # --8<-- [end:open]
            durability(app)
            forks(app)
            prune(store, app)
        read_only(path)
    serializers()


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else None)
