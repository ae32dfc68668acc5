"""What a durable superstep costs its database, counted: statements, transactions, round trips, pages.

Counts, never times (`store_counts.counting` watches the store's connection from
outside). With durability "sync" a superstep of one task is one transaction
(its result goes into its checkpoint's): one `BEGIN`, four statements (the
head, the checkpoint, the state, the result) and a `COMMIT`, which PostgreSQL
receives in two round trips (the statements in one pipeline, then the commit).
A superstep of several tasks stores each finished result at most once, the
results that finish while the store is busy together (group commit), and
never takes more transactions than it has tasks.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pg_server import POSTGRES
from store_counts import Counts, counting

import actorgraph as ag
from actorgraph._actors.recorder import Recorder
from actorgraph._model.records import Node, Position, VertexResult
from actorgraph.checkpoint import PostgresCheckpointer, SqliteCheckpointer
from actorgraph.merge import append, by_key

STEPS = 12
WIDTH = 8
PER_TRANSACTION = 6  # BEGIN, the head, the checkpoint, the state, the result, COMMIT


def loop() -> ag.Graph[Any]:
    g: ag.Graph[Any] = ag.Graph()
    g.add_vertex("inc", lambda s: {"n": s["n"] + 1})
    g.add_edge(ag.START, "inc")
    g.add_conditional_edges("inc", lambda s: "inc" if s["n"] < STEPS else ag.END)
    return g


def chain() -> ag.Graph[Any]:
    g: ag.Graph[Any] = ag.Graph()
    names = [f"v{i:02d}" for i in range(STEPS)]
    for name in names:
        g.add_vertex(name, lambda s: {"n": s["n"] + 1})
    for src, dst in zip([ag.START, *names], [*names, ag.END], strict=True):
        g.add_edge(src, dst)
    return g


def fan_out() -> ag.Graph[Any]:
    g: ag.Graph[Any] = ag.Graph(merge=by_key({"results": append}))
    names = [f"b{i}" for i in range(WIDTH)]
    for i, name in enumerate(names):
        g.add_vertex(name, lambda s, i=i: {"results": [*s["results"], i]})
        g.add_edge(ag.START, name)
    g.add_vertex("join", lambda s: s)
    g.add_edge(names, "join")
    g.add_edge("join", ag.END)
    return g


def sends() -> ag.Graph[Any]:
    g: ag.Graph[Any] = ag.Graph(merge=by_key({"results": append}))
    g.add_vertex("split", lambda s: s)
    g.add_vertex("work", lambda s: {"results": [s["item"] * 2]}, returns="update")
    g.add_vertex("reduce", lambda s: s)
    g.add_edge(ag.START, "split")
    route = lambda s: [ag.Send("work", {"item": i}) for i in range(WIDTH)]
    g.add_conditional_edges("split", route, ["work"])
    g.add_edge("work", "reduce")
    g.add_edge("reduce", ag.END)
    return g


@pytest.fixture(params=["sqlite", POSTGRES])
def store(request, tmp_path: Path):
    if request.param == "sqlite":
        cp: Any = SqliteCheckpointer(tmp_path / "counts.db")
    else:
        cp = PostgresCheckpointer(request.getfixturevalue("postgres_db"))
    yield cp
    cp.close()


def counted(store: Any, graph: ag.Graph[Any], state: Any) -> Counts:
    """What one run on a new thread sent, after three runs have warmed the store up.

    (psycopg prepares a statement on its fifth use, which takes a round trip of its own.)
    """
    with graph.compile(store) as app:
        for n in range(3):
            app.invoke(state, thread_id=f"warm-up-{n}")
        with counting(store) as counts:
            app.invoke(state, thread_id="counted")
    return counts


@pytest.mark.parametrize("graph", [loop, chain], ids=["loop", "chain"])
def test_a_superstep_of_one_task_is_one_transaction(store, graph) -> None:
    counts = counted(store, graph(), {"n": 0})
    # the input's checkpoint (no task result in it), then one per superstep; and one read of
    # the thread when the run starts
    assert counts.transactions == STEPS + 1
    if store.dialect.name == "SQLite":
        assert counts.statements == 1 + (PER_TRANSACTION - 1) + PER_TRANSACTION * STEPS
        assert counts.pages <= 11 * (STEPS + 1)  # table and index pages of the write-ahead log
    else:
        assert counts.round_trips == 1 + 2 * (STEPS + 1)  # BEGIN and the statements; COMMIT
        assert counts.statements == 1 + (PER_TRANSACTION - 1) + PER_TRANSACTION * STEPS


@pytest.mark.parametrize(
    ("graph", "state", "supersteps"),
    [(fan_out, {"results": []}, 2), (sends, {"results": []}, 3)],
    ids=["fan-out", "Send"],
)
def test_a_superstep_of_many_tasks_takes_at_most_one_transaction_per_task(
    store, graph, state, supersteps
) -> None:
    counts = counted(store, graph(), state)
    tasks = supersteps - 1 + WIDTH  # one task in each superstep but the wide one
    assert supersteps + 1 <= counts.transactions <= tasks + 1
    if store.dialect.name == "SQLite":
        assert counts.statements <= PER_TRANSACTION * counts.transactions + 2 * tasks
    else:
        assert counts.round_trips == 2 * counts.transactions + 1


def test_results_that_finish_together_are_stored_in_one_transaction(tmp_path: Path) -> None:
    store = SqliteCheckpointer(tmp_path / "group.db")
    try:
        asked: list[int] = []
        recorder = Recorder(store, "t", "sync", head=None)
        recorder.committed(Position(0))
        recorder.later = lambda: asked.append(1)
        results = [finished(f"b{i}") for i in range(WIDTH)]
        with counting(store) as counts:
            for result in results:
                recorder.task_finished(result, {})
            assert counts.transactions == 0
            recorder.flush()
            recorder.flush()  # nothing left: nothing sent
        assert asked == [1]  # one flush asked for, by the first result
        assert counts.transactions == 1
        assert set(store.get_writes("t", recorder.parent)) == {r.task_id for r in results}  # type: ignore[arg-type]
    finally:
        store.close()


def finished(task_id: str) -> VertexResult:
    state = {"n": 1}
    return VertexResult(task_id, task_id, "ok", state, node=Node(f"v:{task_id}", state))
