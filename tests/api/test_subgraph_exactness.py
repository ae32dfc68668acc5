"""Exactness across the subgraph boundary: a graph run as a subgraph resumes as exactly as at the top.

The random graphs of `test_exactness_properties.py` run inside one or two levels
of subgraphs (`exactness_graphs.build_nested`). The properties are the same:
the final state equals the graph's run on its own, a fault anywhere inside
(an error, an interrupt, a breakpoint named by path) followed by a resumption
ends in that state with every task finished exactly once, and a SIGKILL at any
superstep boundary of the innermost run, or inside any of its tasks, resumes
in a new process without re-running a stored task. Processes run
`exactness_child.py`, on SQLite and on PostgreSQL.
"""

from __future__ import annotations

import json
import signal
import tempfile
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import exactness_graphs as eg
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from test_exactness_properties import (
    _QUIET,
    MAX_TASKS,
    FaultProbe,
    assert_counted_once,
    assert_resumed_exactly,
    child,
    examples,
    graphs,
    in_task_order,
    reference,
    step_of,
)

import actorgraph as ag
from actorgraph.checkpoint import MemoryCheckpointer, PostgresCheckpointer, SqliteCheckpointer

pytestmark = pytest.mark.slow  # property tests over random nested graphs

NESTED = settings(max_examples=examples(25), deadline=None, suppress_health_check=_QUIET)
"""A run per task of the graph, each with one fault, inside subgraphs: tens of milliseconds."""


@contextmanager
def nested(desc: eg.Desc, depth: int, kind: str) -> Iterator[ag.CompiledGraph[Any]]:
    """The graph of `desc` inside `depth` subgraphs, on a fresh store of `kind`, closed afterwards."""
    with tempfile.TemporaryDirectory() as tmp:
        store = MemoryCheckpointer() if kind == "memory" else SqliteCheckpointer(Path(tmp) / "runs.db")
        try:
            with eg.build_nested(desc, depth).compile(store) as app:
                yield app
        finally:
            store.close()


def faulted(  # noqa: PLR0913 - the run, its fault, and what the uninterrupted run did
    app: ag.CompiledGraph[Any],
    desc: eg.Desc,
    depth: int,
    thread: str,
    *,
    fault: str,
    target: str,
    tokens: list[str],
) -> tuple[ag.RunResult[Any], FaultProbe]:
    """Run with one fault inside the innermost subgraph, check the pause, then resume.

    Checks that the parent run paused (or failed) naming the inner vertex by
    path, and that the innermost run's snapshot holds exactly its committed tasks.
    """
    probe = FaultProbe(fault, target)
    inp = eg.initial_state(desc)
    path = "sub/" * depth + eg.vertex_name(eg.parse_token(target)[1])
    pause = step_of(target) - 1
    if fault == "error":
        with pytest.raises(ag.VertexError) as raised:
            app.invoke(inp, thread_id=thread, context=probe)
        assert raised.value.vertex == path
    elif fault == "interrupt":
        first = app.invoke(inp, thread_id=thread, context=probe)
        assert [(i.vertex, i.value) for i in first.interrupts] == [(path, "q")]
    else:
        where = {"interrupt_before": [path]} if fault == "before" else {"interrupt_after": [path]}
        first = app.invoke(inp, thread_id=thread, context=probe, **where)
        vertex = eg.parse_token(target)[1]
        pause = min(step_of(t) for t in tokens if eg.parse_token(t)[1] == vertex) - (fault == "before")
        if pause == max(map(step_of, tokens)):
            assert first.status == "done"
            return first, probe
        assert first.status == "interrupted"
        assert all(i.vertex == path for i in first.interrupts)
    what = f"the innermost run at the pause ({fault} at {target})"
    top = app.get_state(thread, subgraphs=True)
    assert top.status == ("error" if fault == "error" else "interrupted"), what
    inner = eg.innermost(top)
    assert inner.step == pause, what
    assert_counted_once(inner.state, [t for t in tokens if step_of(t) <= pause], what)
    if fault == "interrupt":
        return app.invoke(ag.Command(resume="yes"), thread_id=thread, context=probe), probe
    return app.invoke(None, thread_id=thread, context=probe), probe


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
@NESTED
@given(
    desc=graphs(extras=True),
    depth=st.integers(1, 2),
    fault=st.sampled_from(["error", "interrupt", "before", "after"]),
)
def test_a_subgraph_resumed_after_a_fault_equals_the_graph_run_on_its_own(
    kind: str, desc: eg.Desc, depth: int, fault: str
) -> None:
    """The graph's own uninterrupted run is the reference; a fault at every task in turn."""
    expected, tokens = reference(desc)
    assume(len(tokens) <= MAX_TASKS)
    with nested(desc, depth, kind) as app:
        probe = eg.Probe()
        whole = app.invoke(eg.initial_state(desc), thread_id="uninterrupted", context=probe)
        assert whole.state == expected
        assert Counter(probe.tokens) == Counter(tokens)
        for i, target in enumerate(in_task_order(tokens)):
            what = f"{fault} at {target}, {depth} deep"
            result, probe = faulted(
                app, desc, depth, f"faulted-{i}", fault=fault, target=target, tokens=tokens
            )
            assert result.status == "done", what
            assert result.state == expected, what
            assert Counter(probe.tokens) == Counter(tokens), f"{what}: each task finishes once"


# -- SIGKILL inside a subgraph, resumed in a new process ------------------------------


def innermost_stored(desc: eg.Desc, depth: int, db: str, tokens: list[str]) -> tuple[int, set[str]]:
    """After the kill: the innermost run's last committed step, and the tokens of its stored tasks."""
    store: Any = PostgresCheckpointer(db) if db.startswith("host=") else SqliteCheckpointer(db)
    try:
        with eg.build_nested(desc, depth).compile(store) as reader:
            top = reader.get_state("t", subgraphs=True)
    finally:
        store.close()
    if depth and not top.subgraphs:
        return -1, set()  # killed before the subgraph's run wrote its first checkpoint
    snap = eg.innermost(top)
    stored = {t for t in tokens if step_of(t) <= snap.step}
    if snap.superstep.step == snap.step + 1:
        stored |= {f"{tid}@{snap.step + 1}" for tid, r in snap.superstep.results.items() if r.status == "ok"}
    return snap.step, stored


def kill_and_resume(  # noqa: PLR0913 - the graph, where it is stored, and where it is killed
    desc: eg.Desc, depth: int, db: str, tmp: Path, *, where: list[str], point: str
) -> None:
    """Kill a nested run in one child process, resume it in another: it ends as the graph on its own."""
    expected, tokens = reference(desc)
    tmp.mkdir(parents=True, exist_ok=True)
    ledger, out = tmp / "ledger.txt", tmp / "out.json"
    graph, nest = json.dumps(desc), ["--nest", str(depth)]
    victim = child(["run", db, "t", str(ledger), graph, *where, *nest], "victim")
    assert victim.returncode == -signal.SIGKILL, f"{point}: the victim was not killed:\n{victim.stderr}"
    committed, stored = innermost_stored(desc, depth, db, tokens)
    if where[0] == "--after-step":
        assert committed == int(where[1]), point
    survivor = child(["resume", db, "t", str(ledger), graph, "--out", str(out), *nest], "survivor")
    assert_resumed_exactly(survivor, ledger, out, expected=(expected, tokens), stored=stored, point=point)


def inner_kill_points(desc: eg.Desc) -> Iterator[tuple[str, list[str]]]:
    """Every superstep boundary of the innermost run, and every one of its tasks."""
    _, tokens = reference(desc)
    for k in range(max(map(step_of, tokens)) + 1):
        yield f"after-{k}", ["--after-step", str(k)]
    for token in in_task_order(tokens):
        yield f"in-{token}", ["--in-task", token]


@pytest.mark.parametrize("name", sorted(eg.FIXED))
def test_a_kill_at_every_point_inside_a_subgraph_resumes_without_rerunning_stored_tasks(
    name: str, tmp_path: Path
) -> None:
    desc = eg.FIXED[name]
    for point, where in inner_kill_points(desc):
        folder = tmp_path / point.replace(":", "_").replace("@", "_")
        kill_and_resume(desc, 1, str(folder / "runs.db"), folder, where=where, point=f"{name} {point}")


def test_a_kill_at_every_boundary_two_subgraphs_deep_resumes_exactly(tmp_path: Path) -> None:
    desc = eg.FIXED["join-criss-cross"]
    for point, where in inner_kill_points(desc):
        if where[0] == "--after-step":
            folder = tmp_path / point
            kill_and_resume(desc, 2, str(folder / "runs.db"), folder, where=where, point=f"2 deep {point}")


def test_a_kill_inside_a_subgraph_on_postgres_resumes_exactly(postgres_server: Any, tmp_path: Path) -> None:
    """Every boundary and task of one shape, each on a fresh PostgreSQL database."""
    import uuid

    import psycopg

    desc = eg.FIXED["uneven-fan-out"]
    for point, where in inner_kill_points(desc):
        name = f"test_{uuid.uuid4().hex}"
        with psycopg.connect(postgres_server.dsn(), autocommit=True) as admin:
            admin.execute(f"CREATE DATABASE {name}")
        try:
            folder = tmp_path / point.replace(":", "_").replace("@", "_")
            kill_and_resume(
                desc, 1, postgres_server.dsn(name), folder, where=where, point=f"postgres {point}"
            )
        finally:
            with psycopg.connect(postgres_server.dsn(), autocommit=True) as admin:
                admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


CHAIN = eg.complete(6, [0], [(0, 1), (1, 2), (2, 3), (3, 4), (4, 5), (5, "END")], [], [], seer=0, extras=True)
"""Six vertices in a row: a subgraph run of six supersteps."""


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_a_parent_killed_in_its_childs_fifth_superstep_resumes_the_child_there(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """Killed inside the fifth inner task: supersteps 1-4 never run again; the state counts each once."""
    db = request.getfixturevalue("postgres_db") if backend == "postgres" else str(tmp_path / "runs.db")
    kill_and_resume(CHAIN, 1, db, tmp_path, where=["--in-task", "v4@5"], point=f"{backend}: in v4@5")
    lines = (tmp_path / "ledger.txt").read_text().split()
    assert lines == [
        "run",
        "v0@1",
        "run",
        "v1@2",
        "run",
        "v2@3",
        "run",
        "v3@4",
        "resume",
        "v4@5",
        "resume",
        "v5@6",
    ]


# -- an interrupt two subgraphs deep, answered by another process ---------------------


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_an_interrupt_two_subgraphs_deep_is_answered_from_another_process(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    desc = eg.FIXED["send-from-two-senders"]
    expected, tokens = reference(desc)
    db = request.getfixturevalue("postgres_db") if backend == "postgres" else str(tmp_path / "runs.db")
    ledger, out, graph = tmp_path / "ledger.txt", tmp_path / "out.json", json.dumps(desc)
    target = in_task_order([t for t in tokens if step_of(t) == 2])[0]
    asked = child(["run", db, "t", str(ledger), graph, "--nest", "2", "--interrupt-at", target], "asker")
    assert asked.returncode == 5, f"the run did not pause:\n{asked.stderr}"
    store: Any = PostgresCheckpointer(db) if backend == "postgres" else SqliteCheckpointer(db)
    try:
        with eg.build_nested(desc, 2).compile(store) as reader:
            paused = reader.get_state("t", subgraphs=True)
            assert [t.thread_id for t in store.threads(status="interrupted")] == ["t"]
    finally:
        store.close()
    path = "sub/sub/" + eg.vertex_name(eg.parse_token(target)[1])
    assert [(i.vertex, i.value) for i in paused.interrupts] == [(path, "q")]
    assert eg.innermost(paused).status == "interrupted"
    answered = child(
        ["answer", db, "t", str(ledger), graph, "--nest", "2", "--interrupt-at", target, "--out", str(out)],
        "answerer",
    )
    assert answered.returncode == 0, f"the answer failed:\n{answered.stderr}"
    result = json.loads(out.read_text())
    assert result["status"] == "done"
    assert result["state"] == json.loads(json.dumps(expected))
    lines = [line.split() for line in ledger.read_text().splitlines()]
    ran = Counter(token for _, token in lines)
    assert ran == Counter(tokens), "every task finished once, across the two processes"
    assert {token for mode, token in lines if mode == "run"} == {t for t in tokens if step_of(t) <= 2} - {
        target
    }
