"""Exactness on random graphs: every change counted once; a run stopped and resumed equals one uninterrupted.

DESIGN.md, Semantics 2-5. The graphs are plain data (`exactness_graphs.py`),
so a child process (`exactness_child.py`) can build the same graph, die with
SIGKILL and be resumed by another process. Every task appends a unique token to
`log` and adds a unique power of two to `n`, so the final state tells which
tasks were counted, and how often; a side channel (a list in this process, an
fsynced ledger file in a child) tells which tasks ran. States are compared type
for type (`exact_values.same`: the same types, key order and signs all the way
down), and the tasks set values that `==` alone cannot tell apart.

Set EXACTNESS_SCALE (default 1) to multiply the number of examples.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import exactness_graphs as eg
import pytest
from exact_values import same
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from shared import SharedEvent, SharedList

import actorgraph as ag
from actorgraph._engine.lineage import merge_nodes
from actorgraph._model.records import Node
from actorgraph.checkpoint import MemoryCheckpointer, SqliteCheckpointer
from actorgraph.events import SuperstepCommitted
from actorgraph.merge import add, append, by_key

pytestmark = pytest.mark.slow  # property tests over random graphs, child processes killed

HERE = Path(__file__).resolve().parents[1]  # tests/, where the helper scripts are
SCALE = float(os.environ.get("EXACTNESS_SCALE", "1"))
MAX_TASKS = 40
STORES = ["memory", "sqlite"]
CHILD_TIMEOUT = 60.0


def examples(n: int) -> int:
    """`n` examples, scaled by EXACTNESS_SCALE."""
    return max(1, round(n * SCALE))


_QUIET = [HealthCheck.too_slow, HealthCheck.filter_too_much]
PURE = settings(max_examples=examples(200), deadline=None)
"""The lineage layer alone: no actors, well under a millisecond per example."""
RUNS = settings(max_examples=examples(100), deadline=None, suppress_health_check=_QUIET)
"""One run in this process per example: a few milliseconds."""
FAULTS = settings(max_examples=examples(50), deadline=None, suppress_health_check=_QUIET)
"""A run per task of the graph, each with one fault, and its resumption: tens of milliseconds."""
CHILD = settings(max_examples=examples(8), deadline=None, suppress_health_check=_QUIET)
"""Two child processes per example: a quarter of a second."""


# -- random graphs -------------------------------------------------------------------


@st.composite
def graphs(draw: st.DrawFn, *, extras: bool | None = None) -> eg.Desc:
    """A random description (see `exactness_graphs`): edges, joins, routers and Sends, all forward.

    Vertices are drawn in layers, with no edge inside a layer, so that parallel
    vertices feeding the same later vertices (criss-crosses) are common.
    """
    size = draw(st.integers(2, 7), label="size")
    layer = sorted(draw(st.lists(st.integers(0, 3), min_size=size, max_size=size), label="layers"))
    later = [[j for j in range(i + 1, size) if layer[j] > layer[i]] for i in range(size)]
    senders = [draw(st.booleans()) for _ in range(size)]  # a Send target never Sends: runs stay small
    density = draw(st.integers(0, 4), label="density")  # in quarters: none to all
    edges: list[tuple[int, int | str]] = []
    routers: list[dict[str, Any]] = []
    for i in range(size):
        targets: list[int | str] = [*later[i], "END"]
        edges += [(i, t) for t in targets if draw(st.integers(0, 3)) + density >= 4]  # shrinks to none
        if draw(st.integers(0, 2)) < 2:  # a third of the vertices route; shrinks to none
            continue
        move: st.SearchStrategy[Any] = st.sampled_from(targets)
        receivers = [j for j in later[i] if not senders[j]]
        if senders[i] and receivers:
            sends = st.tuples(st.just("send"), st.sampled_from(receivers), st.integers(1, 3)).map(list)
            move = st.one_of(move, sends)
        options = draw(st.lists(st.lists(move, min_size=1, max_size=3), min_size=1, max_size=3))
        routers.append({"source": i, "by": draw(st.sampled_from(["log", "n"])), "options": options})
    joins: list[tuple[list[int], int]] = []
    for target in draw(st.lists(st.integers(0, size - 1), max_size=3), label="join targets"):
        sources = [i for i in range(target) if layer[i] < layer[target]]
        if len(sources) >= 2:
            joins.append(
                (draw(st.lists(st.sampled_from(sources), min_size=2, max_size=3, unique=True)), target)
            )
    start = [i for i in range(size) if layer[i] == layer[0]]
    return eg.complete(
        size,
        start,
        edges,
        joins,
        routers,
        seer=draw(st.integers(0, size - 1)),
        extras=draw(st.booleans()) if extras is None else extras,
        style=draw(st.sampled_from(["state", "update"]), label="style"),
    )


# -- running in this process ---------------------------------------------------------


@contextmanager
def compiled(desc: eg.Desc, kind: str, **options: Any) -> Iterator[ag.CompiledGraph[Any]]:
    """The graph of `desc` on a fresh store of `kind` ("memory" or "sqlite"), closed afterwards."""
    with tempfile.TemporaryDirectory() as tmp:
        store = MemoryCheckpointer() if kind == "memory" else SqliteCheckpointer(Path(tmp) / "runs.db")
        try:
            with eg.build(desc).compile(store, **options) as app:
                yield app
        finally:
            store.close()


def run_through(app: ag.CompiledGraph[Any], desc: eg.Desc, thread: str) -> tuple[dict[str, Any], list[str]]:
    """Run `desc` uninterrupted on `thread`: its final state and the tokens of the tasks that ran."""
    probe = eg.Probe()
    result = app.invoke(eg.initial_state(desc), thread_id=thread, context=probe)
    assert result.status == "done"
    return result.state, probe.tokens.copy()


def reference(desc: eg.Desc) -> tuple[dict[str, Any], list[str]]:
    """The uninterrupted run of `desc` (in memory): its final state and its tokens."""
    with compiled(desc, "memory") as app:
        return run_through(app, desc, "reference")


def step_of(token: str) -> int:
    """The superstep a token's task ran in."""
    return eg.parse_token(token)[0]


def in_task_order(tokens: list[str]) -> list[str]:
    """Tokens sorted by step, then task order (vertex, then Send index)."""
    return sorted(tokens, key=eg.parse_token)


# -- a. every executed task is counted exactly once ----------------------------------


def assert_counted_once(state: dict[str, Any], tokens: list[str], what: str) -> None:
    """`state` holds the change of each task in `tokens` exactly once, and no other."""
    assert Counter(state["log"]) == Counter(tokens), what
    assert state["n"] == eg.expected_n(tokens), what


def committed_states(events: list[Any]) -> list[tuple[int, Any]]:
    """`(step, state)` of every `SuperstepCommitted` among `events`."""
    return [(e.step, e.state) for e in events if isinstance(e, SuperstepCommitted)]


@pytest.mark.parametrize("kind", STORES)
@RUNS
@given(desc=graphs())
def test_the_final_state_counts_every_task_that_ran_exactly_once(kind: str, desc: eg.Desc) -> None:
    """And so does the state after every superstep: it holds exactly the tasks of the steps so far."""
    events: list[Any] = []
    listen = events.append
    with compiled(desc, kind, listeners=[listen]) as app:
        state, tokens = run_through(app, desc, "t")
    assume(len(tokens) <= MAX_TASKS)
    assert_counted_once(state, tokens, "the final state")
    steps = committed_states(events)
    assert [k for k, _ in steps] == list(range(max(map(step_of, tokens)) + 1))
    for k, current in steps:
        assert_counted_once(current, [t for t in tokens if step_of(t) <= k], f"the state after step {k}")


# -- b. one fault, then resume: equal to the uninterrupted run ------------------------


class FaultProbe(eg.Probe):
    """Injects one fault into the task with `target`'s token.

    "error": the task raises ConnectionError once; "interrupt": the task calls
    `ag.interrupt("q")` (its output does not depend on the answer).
    """

    def __init__(self, fault: str, target: str) -> None:
        super().__init__()
        self.fault = fault
        self.target = target
        self.fired = SharedEvent()  # across processes: the error fires once in all of them
        self.answers = SharedList()

    def started(self, token: str) -> None:
        if token != self.target:
            return
        if self.fault == "error" and not self.fired.is_set():
            self.fired.set()
            raise ConnectionError("once")
        if self.fault == "interrupt":
            self.answers.append(ag.interrupt("q"))


def faulted_run(  # noqa: PLR0913 - the run, its fault, and what the uninterrupted run did
    app: ag.CompiledGraph[Any], desc: eg.Desc, thread: str, *, fault: str, target: str, tokens: list[str]
) -> tuple[ag.RunResult[Any], FaultProbe]:
    """Run `desc` on `thread` with one `fault` at the task with token `target`, then resume it.

    A breakpoint ("before", "after") names the target's vertex, so it fires at
    that vertex's first superstep. Also asserts that the run paused there, and
    that its state at the pause holds exactly the tasks of the committed supersteps.
    """
    probe = FaultProbe(fault, target)
    inp = eg.initial_state(desc)
    vertex = eg.parse_token(target)[1]
    pause = step_of(target) - 1  # the last committed superstep at the pause
    first: ag.RunResult[Any] | None = None
    if fault == "error":
        with pytest.raises(ag.VertexError):
            app.invoke(inp, thread_id=thread, context=probe)
    elif fault == "interrupt":
        first = app.invoke(inp, thread_id=thread, context=probe)
        assert [i.value for i in first.interrupts] == ["q"]
    else:
        name = eg.vertex_name(vertex)
        where = {"interrupt_before": [name]} if fault == "before" else {"interrupt_after": [name]}
        first = app.invoke(inp, thread_id=thread, context=probe, **where)
        pause = min(step_of(t) for t in tokens if eg.parse_token(t)[1] == vertex) - (fault == "before")
        if pause == max(map(step_of, tokens)):  # after the last superstep: nothing left to pause
            assert first.status == "done"
            return first, probe
    what = f"the state at the pause ({fault} at {target})"
    snapshot = app.get_state(thread)
    assert snapshot.step == pause, what
    assert_counted_once(snapshot.state, [t for t in tokens if step_of(t) <= pause], what)
    if first is not None:
        assert first.status == "interrupted", what
        assert same(first.state, snapshot.state), f"{what}: the stored state reads back type for type"
    if fault == "interrupt":
        result = app.invoke(ag.Command(resume="yes"), thread_id=thread, context=probe)
        assert probe.answers == ["yes"]
        return result, probe
    return app.invoke(None, thread_id=thread, context=probe), probe


@pytest.mark.parametrize("kind", STORES)
@pytest.mark.parametrize("fault", ["error", "interrupt", "before", "after"])
@FAULTS
@given(desc=graphs(extras=True))
def test_a_run_resumed_after_one_fault_equals_the_uninterrupted_run(
    kind: str, fault: str, desc: eg.Desc
) -> None:
    """One fault per run, at every task in turn (each run on its own thread)."""
    with compiled(desc, kind) as app:
        expected, tokens = run_through(app, desc, "uninterrupted")
        assume(len(tokens) <= MAX_TASKS)
        for i, target in enumerate(in_task_order(tokens)):
            what = f"{fault} at {target}"
            result, probe = faulted_run(app, desc, f"faulted-{i}", fault=fault, target=target, tokens=tokens)
            assert result.status == "done", what
            assert result.state == expected, what
            assert same(result.state, expected), f"{what}: equal type for type, keys in order"
            assert same(app.get_state(f"faulted-{i}").state, expected), what
            assert Counter(probe.tokens) == Counter(tokens), f"{what}: each task finishes once"


# -- c. SIGKILL at a superstep boundary, or in a task, then resume in a new process --


def child(args: list[str], what: str) -> subprocess.CompletedProcess[str]:
    """Run `exactness_child.py` with `args`, bounded by CHILD_TIMEOUT (killed when it overruns)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")])}
    try:
        return subprocess.run(
            [sys.executable, str(HERE / "exactness_child.py"), *args],
            env=env,
            capture_output=True,
            text=True,
            timeout=CHILD_TIMEOUT,
            check=False,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"the {what} child did not finish within {CHILD_TIMEOUT} s")


def stored_tokens(desc: eg.Desc, db: Path, thread: str, tokens: list[str]) -> tuple[int, set[str]]:
    """What the store holds after the kill: the last committed step, and the tokens of the stored tasks."""
    store = SqliteCheckpointer(db)
    try:
        with eg.build(desc).compile(store) as reader:
            snap = reader.get_state(thread)
    finally:
        store.close()
    stored = {t for t in tokens if step_of(t) <= snap.step}
    if snap.superstep is not None and snap.superstep.step == snap.step + 1:
        stored |= {f"{tid}@{snap.step + 1}" for tid, r in snap.superstep.results.items() if r.status == "ok"}
    return snap.step, stored


def crash_and_resume(
    desc: eg.Desc,
    tmp: Path,
    *,
    after_step: int | None = None,
    in_task: str | None = None,
    once: str | None = None,
) -> None:
    """Kill a run of `desc` in a child process, resume it in another; assert it ends as the reference.

    Asserts that the resumed state equals the uninterrupted run's item for item,
    that no task stored before the kill ran again, and that every task not
    stored ran exactly once in the resumed process.
    """
    expected, tokens = reference(desc)
    tmp.mkdir(parents=True, exist_ok=True)
    db, ledger, out = tmp / "runs.db", tmp / "ledger.txt", tmp / "out.json"
    for path in (db, ledger, out):
        path.unlink(missing_ok=True)
    graph = json.dumps(desc)
    if after_step is not None:
        point, where = f"killed after step {after_step}", ["--after-step", str(after_step)]
    else:
        point, where = f"killed in {in_task} once {once} was stored", ["--in-task", str(in_task)]
        where += ["--once", once] if once else []
    victim = child(["run", str(db), "t", str(ledger), graph, *where], "victim")
    assert victim.returncode == -signal.SIGKILL, f"{point}: the victim was not killed:\n{victim.stderr}"
    committed, stored = stored_tokens(desc, db, "t", tokens)
    if after_step is not None:
        assert committed == after_step, point
    else:
        assert committed == step_of(str(in_task)) - 1, point
        assert once is None or once in stored, point
    survivor = child(["resume", str(db), "t", str(ledger), graph, "--out", str(out)], "survivor")
    ran_before = assert_resumed_exactly(
        survivor, ledger, out, expected=(expected, tokens), stored=stored, point=point
    )
    if after_step is not None:
        assert Counter(ran_before) == Counter(stored), f"{point}: a finished task was not stored"


def assert_resumed_exactly(  # noqa: PLR0913 - what the survivor left, and what it must match
    survivor: subprocess.CompletedProcess[str],
    ledger: Path,
    out: Path,
    *,
    expected: tuple[dict[str, Any], list[str]],
    stored: set[str],
    point: str,
) -> list[str]:
    """The resumed run ended as the uninterrupted one, and ran exactly the tasks not stored before the kill.

    `expected` is the uninterrupted run's `(state, tokens)`. Returns the tokens
    of the tasks the killed process finished.
    """
    state, tokens = expected
    assert survivor.returncode == 0, f"{point}: the resume failed:\n{survivor.stderr}"
    lines = [line.split() for line in ledger.read_text().splitlines()] if ledger.exists() else []
    ran_before = [token for mode, token in lines if mode == "run"]
    ran_after = [token for mode, token in lines if mode == "resume"]
    result = json.loads(out.read_text())
    assert result["status"] == "done", point
    assert result["state"] == json.loads(json.dumps(state)), point
    assert same(result["state"], json.loads(json.dumps(state))), f"{point}: equal type for type"
    assert stored <= set(ran_before), f"{point}: the store holds a task that never finished"
    assert not stored & set(ran_after), f"{point}: stored tasks ran again: {sorted(stored & set(ran_after))}"
    assert Counter(ran_after) == Counter(set(tokens) - stored), f"{point}: each unstored task runs once"
    return ran_before


def kill_points(desc: eg.Desc) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every superstep boundary of the run of `desc`, and every task of every superstep.

    A task kills the process once the first other task of its superstep (in
    task order) is stored, or at once when it is alone.
    """
    _, tokens = reference(desc)
    last = max(step_of(t) for t in tokens)
    for k in range(last + 1):
        yield f"after-{k}", {"after_step": k}
    for k in range(1, last + 1):
        tasks = in_task_order([t for t in tokens if step_of(t) == k])
        for killer in tasks:
            once = next((t for t in tasks if t != killer), None)
            yield f"in-{k}-{killer}", {"in_task": killer, "once": once}


@pytest.mark.parametrize("name", sorted(eg.FIXED))
def test_a_kill_at_every_point_of_a_known_shape_resumes_to_the_uninterrupted_state(
    name: str, tmp_path: Path
) -> None:
    desc = eg.FIXED[name]
    for point, where in kill_points(desc):
        crash_and_resume(desc, tmp_path / point.replace(":", "_").replace("@", "_"), **where)


@CHILD
@given(desc=graphs(extras=True), data=st.data())
def test_a_kill_at_a_random_point_of_a_random_graph_resumes_to_the_uninterrupted_state(
    desc: eg.Desc, data: st.DataObject
) -> None:
    _, tokens = reference(desc)
    assume(len(tokens) <= MAX_TASKS)
    last = max(step_of(t) for t in tokens)
    with tempfile.TemporaryDirectory() as tmp:
        if data.draw(st.booleans(), label="at a boundary"):
            crash_and_resume(desc, Path(tmp), after_step=data.draw(st.integers(0, last), label="k"))
            return
        k = data.draw(st.integers(1, last), label="k")
        tasks = in_task_order([t for t in tokens if step_of(t) == k])
        victim = data.draw(st.sampled_from(tasks), label="killer")
        others = [t for t in tasks if t != victim]
        once = data.draw(st.sampled_from(others), label="stored first") if others else None
        crash_and_resume(desc, Path(tmp), in_task=victim, once=once)


# -- d. the lineage layer alone: merging any versions counts every ancestor once --------


MERGE = by_key({"log": append, "n": add})


Shape = list[tuple[list[int], bool, bool]]
"""Per version: its parents (earlier versions), whether it adds a change, whether it is merged at the end."""


@st.composite
def lineages(draw: st.DrawFn) -> Shape:
    """A random lineage DAG.

    A version with no parents is a root (version 0 always; others only when
    drawn); a version with several parents is a merge, which may add nothing.
    """
    size = draw(st.integers(1, 14))
    roots = draw(st.booleans())
    out: Shape = []
    for i in range(size):
        low = 0 if roots or i == 0 else 1
        parents = draw(st.lists(st.integers(0, i - 1), min_size=low, max_size=3, unique=True)) if i else []
        changes = len(parents) < 2 or draw(st.booleans())
        out.append((parents, changes, draw(st.booleans())))
    return out


def grow(shape: Shape, ids: list[str]) -> list[Node]:
    """The versions of `shape`, version i with id `ids[i]`, each state built by merging its parents."""
    nodes: list[Node] = []
    for i, (parents, changes, _) in enumerate(shape):
        ps = [nodes[p] for p in parents]
        state = merge_nodes(ps, MERGE) if ps else {"log": [], "n": 0}
        if changes:
            state = {"log": [*state["log"], f"t{i}"], "n": state["n"] + 2**i}
        nodes.append(Node.child(ids[i], state, *ps))
    return nodes


def ancestors(shape: Shape, picked: list[int]) -> set[int]:
    """The versions `picked` descend from (themselves included)."""
    seen: set[int] = set()
    todo = list(picked)
    while todo:
        i = todo.pop()
        if i not in seen:
            seen.add(i)
            todo.extend(shape[i][0])
    return seen


@PURE
@given(shape=lineages(), data=st.data())
def test_merging_any_versions_counts_each_ancestor_change_once(shape: Shape, data: st.DataObject) -> None:
    size = len(shape)
    picked = [i for i, (_, _, merged) in enumerate(shape) if merged] or [size - 1]
    order = data.draw(st.permutations(picked), label="merge order")
    nodes = grow(shape, [f"v{i}" for i in range(size)])
    merged = merge_nodes([nodes[i] for i in order], MERGE)
    changes = sorted(i for i in ancestors(shape, picked) if shape[i][1])
    assert Counter(merged["log"]) == Counter(f"t{i}" for i in changes)
    assert merged["n"] == sum(2**i for i in changes)
    # the same lineage under other version ids (as in a resumed run) merges to the same state
    renamed = data.draw(st.permutations(range(size)), label="other ids")
    other = grow(shape, [f"r{j}" for j in renamed])
    assert merge_nodes([other[i] for i in order], MERGE) == merged
