"""Runs recorded by every checkpointer: resume, history, updates, forks, refusals."""

from __future__ import annotations

import dataclasses
import itertools
import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from shared import SharedBarrier, SharedDict, SharedEvent, SharedList

import actorgraph as ag
from actorgraph.checkpoint import (
    EncryptedSerializer,
    MemoryCheckpointer,
    MsgpackSerializer,
    SqliteCheckpointer,
)
from actorgraph.merge import add, append, by_key

Compile = Callable[..., ag.CompiledGraph]


def counted(calls: SharedDict, name: str, fn: Callable[[Any], Any]) -> Callable[[Any], Any]:
    def vertex(state: Any) -> Any:
        calls.add(name)
        return fn(state)

    return vertex


def two_branch_graph(calls: SharedDict, fail: SharedDict) -> ag.Graph:
    """good (+5) and flaky (+3) in superstep 1, double in superstep 2."""

    def flaky(state: dict[str, int]) -> dict[str, int]:
        if fail["left"] > 0:
            fail.add("left", -1)
            raise ConnectionError("upstream refused the connection")
        return {"n": state["n"] + 3}

    g: ag.Graph = ag.Graph(merge=by_key({"n": add}))
    g.add_vertex("good", counted(calls, "good", lambda s: {"n": s["n"] + 5}))
    g.add_vertex("flaky", counted(calls, "flaky", flaky), retry=ag.RetryPolicy(max_attempts=2, jitter=False))
    g.add_vertex("double", counted(calls, "double", lambda s: {"n": s["n"] * 2}))
    for name in ("good", "flaky"):
        g.add_edge(ag.START, name)
        g.add_edge(name, "double")
    g.add_edge("double", ag.END)
    return g


def test_a_failed_superstep_keeps_finished_tasks_and_resumes_only_the_failed(
    compile_graph: Compile, store: Any
) -> None:
    from actorgraph.testing import FakeClock

    calls = SharedDict()
    fail = SharedDict({"left": 4})
    clock = FakeClock()
    app = compile_graph(two_branch_graph(calls, fail), checkpointer=store, clock=clock)
    with pytest.raises(ag.VertexError) as info:
        app.invoke({"n": 10}, thread_id="t1")
    assert (info.value.vertex, info.value.attempts, info.value.step) == ("flaky", 2, 1)
    assert calls == {"good": 1, "flaky": 2}
    snap = app.get_state("t1")
    assert snap.status == "error" and snap.step == 0
    results = snap.superstep.results
    assert results["good"].status == "ok" and results["good"].state == {"n": 15}
    assert results["flaky"].status == "error" and results["flaky"].error is not None
    assert results["flaky"].error.type == "builtins.ConnectionError"
    with pytest.raises(ag.VertexError):
        app.invoke(None, thread_id="t1")
    assert calls == {"good": 1, "flaky": 4}
    result = app.invoke(None, thread_id="t1")
    assert result.status == "done" and result.state == {"n": 36}
    assert calls == {"good": 1, "flaky": 5, "double": 1}
    assert clock.sleeps == [0.5, 0.5]  # one backoff per invoke that retried
    assert app.get_state("t1").status == "done"


def loop_graph(limit: int = 3) -> ag.Graph:
    g: ag.Graph = ag.Graph()
    g.add_vertex("inc", lambda s: {"n": s["n"] + 1})
    g.add_edge(ag.START, "inc")
    g.add_conditional_edges("inc", lambda s: "inc" if s["n"] < limit else ag.END)
    return g


def test_history_is_newest_first_with_parents_sources_limit_and_cursor(
    compile_graph: Compile, store: Any
) -> None:
    app = compile_graph(loop_graph(), checkpointer=store)
    result = app.invoke({"n": 0}, thread_id="h")
    history = app.get_history("h")
    assert [(s.step, s.source, s.status) for s in history] == [
        (3, "loop", "done"),
        (2, "loop", "running"),
        (1, "loop", "running"),
        (0, "input", "running"),
    ]
    assert [s.state for s in history] == [{"n": 3}, {"n": 2}, {"n": 1}, {"n": 0}]
    assert history[0].checkpoint_id == result.checkpoint_id
    assert all(a.parent_id == b.checkpoint_id for a, b in itertools.pairwise(history))
    assert history[-1].parent_id is None
    assert [s.step for s in app.get_history("h", limit=2)] == [3, 2]
    assert [s.step for s in app.get_history("h", before=history[1].checkpoint_id)] == [1, 0]
    assert history[1].superstep.results["inc"].state == {"n": 3}


@pytest.mark.parametrize(("durability", "count"), [("sync", 4), ("step", 4), ("exit", 1)])
def test_durability_modes(compile_graph: Compile, store: Any, durability: str, count: int) -> None:
    app = compile_graph(loop_graph(), checkpointer=store, durability=durability)
    assert app.invoke({"n": 0}, thread_id="d").state == {"n": 3}
    assert len(app.get_history("d")) == count
    assert app.get_state("d").state == {"n": 3} and app.get_state("d").status == "done"


def test_update_state_changes_what_the_next_vertex_sees(compile_graph: Compile, store: Any) -> None:
    g: ag.Graph = ag.Graph()
    g.add_vertex("draft", lambda s: {**s, "text": "draft"})
    g.add_vertex("publish", lambda s: {**s, "published": s["text"]})
    g.add_edge(ag.START, "draft")
    g.add_edge("draft", "publish")
    g.add_edge("publish", ag.END)
    app = compile_graph(g, checkpointer=store, interrupt_before=["publish"])
    paused = app.invoke({"text": ""}, thread_id="u")
    assert paused.status == "interrupted" and paused.interrupts[0].kind == "before"
    before = app.get_state("u")
    new_id = app.update_state("u", {"text": "edited"})
    snap = app.get_state("u")
    assert snap.checkpoint_id == new_id and snap.source == "update" and snap.parent_id == before.checkpoint_id
    assert snap.state == {"text": "edited"} and snap.next == ("publish",)
    assert snap.status == "interrupted"  # the breakpoint is still pending, and fires only once
    assert app.invoke(None, thread_id="u").state == {"text": "edited", "published": "edited"}
    assert [(s.step, s.source) for s in app.get_history("u")] == [
        (2, "loop"),
        (1, "update"),
        (1, "loop"),
        (0, "input"),
    ]


def test_update_state_as_vertex_continues_as_if_it_had_run(compile_graph: Compile, store: Any) -> None:
    ran = SharedList()
    g: ag.Graph = ag.Graph()
    g.add_vertex("fetch", lambda s: (ran.append("fetch"), {**s, "data": "fetched"})[1])
    g.add_vertex("review", lambda s: (ran.append("review"), {**s, "ok": True})[1])
    g.add_edge(ag.START, "fetch")
    g.add_edge("fetch", "review")
    g.add_edge("review", ag.END)
    app = compile_graph(g, checkpointer=store, interrupt_before=["fetch"])
    app.invoke({}, thread_id="av")
    app.update_state("av", {"data": "manual"}, as_vertex="fetch")
    assert app.get_state("av").next == ("review",)
    result = app.invoke(None, thread_id="av")
    assert result.state == {"data": "manual", "ok": True} and ran == ["review"]


def test_replay_from_an_old_checkpoint_forks_and_keeps_history(compile_graph: Compile, store: Any) -> None:
    app = compile_graph(loop_graph(), checkpointer=store)
    app.invoke({"n": 0}, thread_id="f")
    old = app.get_history("f")
    step_one = next(s for s in old if s.step == 1)
    replayed = app.invoke(None, thread_id="f", checkpoint_id=step_one.checkpoint_id)
    assert replayed.state == {"n": 3}
    history = app.get_history("f")
    assert len(history) == len(old) + 3  # the fork's own copy of step 1, then steps 2 and 3
    forked = history[2]
    assert forked.source == "fork" and forked.parent_id == step_one.checkpoint_id and forked.step == 1
    assert history[1].parent_id == forked.checkpoint_id and history[1].step == 2
    origin = app.get_state("f", step_one.checkpoint_id).superstep.results  # untouched by the fork
    assert [(r.task_id, r.state, r.finished_at) for r in origin.values()] == [
        (r.task_id, r.state, r.finished_at) for r in step_one.superstep.results.values()
    ]
    assert {s.checkpoint_id for s in old} <= {s.checkpoint_id for s in history}
    assert app.get_state("f", old[0].checkpoint_id).state == {"n": 3}


def ask_graph(fail: SharedDict) -> ag.Graph:
    """START -> a -> ask (asks a question, or fails while `fail["ask"]`) -> END."""

    def ask(state: dict[str, Any]) -> dict[str, Any]:
        if fail.get("ask"):
            raise ConnectionError("down")
        return {**state, "answer": ag.interrupt("q")}

    g: ag.Graph = ag.Graph()
    g.add_vertex("a", lambda s: {**s, "a": 1})
    g.add_vertex("ask", ask)
    g.add_edge(ag.START, "a")
    g.add_edge("a", "ask")
    g.add_edge("ask", ag.END)
    return g


@pytest.mark.parametrize("ending", ["interrupted", "error"])
def test_a_replay_that_stops_in_its_first_superstep_moves_the_head_there(
    compile_graph: Compile, store: Any, ending: str
) -> None:
    fail = SharedDict()
    app = compile_graph(ask_graph(fail), checkpointer=store)
    app.invoke({}, thread_id="r")
    assert app.invoke(ag.Command(resume="old"), thread_id="r").state == {"a": 1, "answer": "old"}
    before = next(h for h in app.get_history("r") if h.next == ("ask",))
    fail["ask"] = ending == "error"
    if ending == "error":
        with pytest.raises(ag.VertexError):
            app.invoke(None, thread_id="r", checkpoint_id=before.checkpoint_id)
    else:
        assert app.invoke(None, thread_id="r", checkpoint_id=before.checkpoint_id).status == "interrupted"
    head = app.get_state("r")
    assert head.status == ending and head.source == "fork" and head.parent_id == before.checkpoint_id
    assert [t.status for t in store.threads() if t.thread_id == "r"] == [ending]
    fail["ask"] = False
    if ending == "error":
        assert app.invoke(None, thread_id="r").status == "interrupted"
    assert app.invoke(ag.Command(resume="new"), thread_id="r").state == {"a": 1, "answer": "new"}


def test_prune_keeps_the_head_and_what_it_needs(compile_graph: Compile, store: Any) -> None:
    app = compile_graph(loop_graph(limit=10), checkpointer=store)
    app.invoke({"n": 0}, thread_id="p")
    assert store.prune("p", keep=2) == 9
    assert [s.step for s in app.get_history("p")] == [10, 9]
    assert app.get_state("p").state == {"n": 10}
    assert app.get_state("p", app.get_history("p")[1].checkpoint_id).state == {"n": 9}


@pytest.mark.slow
def test_new_input_on_a_failed_thread_is_refused_unless_discarded(compile_graph: Compile, store: Any) -> None:
    calls = SharedDict()
    app = compile_graph(two_branch_graph(calls, SharedDict({"left": 5})), checkpointer=store)
    with pytest.raises(ag.VertexError):
        app.invoke({"n": 1}, thread_id="x")
    with pytest.raises(ag.ActorGraphError, match=r"unfinished superstep 1 \(error\).*discard_pending"):
        app.invoke({"n": 2}, thread_id="x")
    with pytest.raises(ag.VertexError):
        app.invoke({"n": 2}, thread_id="x", discard_pending=True)
    # the input is an update to the thread's state: add gives 1 + 2, then good adds 5
    assert app.get_state("x").superstep.results["good"].state == {"n": 8}


def test_new_input_on_a_finished_thread_continues_its_history(compile_graph: Compile, store: Any) -> None:
    app = compile_graph(loop_graph(), checkpointer=store)
    first = app.invoke({"n": 0}, thread_id="again")
    second = app.invoke({"n": 1}, thread_id="again")
    assert second.state == {"n": 3}
    history = app.get_history("again")
    assert history[-1].parent_id is None
    start_of_second = next(s for s in history if s.source == "input" and s.parent_id is not None)
    assert start_of_second.parent_id == first.checkpoint_id


def test_a_graph_with_a_checkpointer_needs_a_thread(compile_graph: Compile, store: Any) -> None:
    app = compile_graph(loop_graph(), checkpointer=store)
    with pytest.raises(ag.ActorGraphError, match="thread_id"):
        app.invoke({"n": 0})
    with pytest.raises(ag.ThreadNotFoundError, match="'nope'"):
        app.get_state("nope")
    with pytest.raises(ag.ThreadNotFoundError, match="'nope'"):
        app.invoke(None, thread_id="nope")


# -- serialization ---------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Profile:
    name: str
    score: int


def profile_graph() -> ag.Graph:
    g: ag.Graph = ag.Graph()
    g.add_vertex("enrich", lambda s: {**s, "user": {"profile": Profile(s["name"], 7)}})
    g.add_edge(ag.START, "enrich")
    g.add_edge("enrich", ag.END)
    return g


def test_a_state_that_cannot_be_stored_fails_its_vertex_naming_the_key(
    compile_graph: Compile, store: Any
) -> None:
    app = compile_graph(profile_graph(), checkpointer=store)
    with pytest.raises(ag.SerializationError) as info:
        app.invoke({"name": "ada"}, thread_id="s")
    message = str(info.value)
    assert "'enrich'" in message and "['user']['profile']" in message and "Profile" in message
    snap = app.get_state("s")  # the input checkpoint is intact, the failure recorded
    assert snap.step == 0 and snap.state == {"name": "ada"}
    assert snap.superstep.results["enrich"].status == "error"


def test_allowed_classes_round_trip_and_a_narrower_allowlist_refuses_them(
    compile_graph: Compile, store_factory: Callable[..., Any]
) -> None:
    wide = store_factory(serializer=MsgpackSerializer(allowed=[Profile]))
    app = compile_graph(profile_graph(), checkpointer=wide)
    assert app.invoke({"name": "ada"}, thread_id="w").state["user"]["profile"] == Profile("ada", 7)
    assert app.get_state("w").state["user"]["profile"] == Profile("ada", 7)
    if isinstance(wide, MemoryCheckpointer):
        wide.serializer = MsgpackSerializer()
        narrow = wide
    else:
        narrow = store_factory()
    reader = compile_graph(profile_graph(), checkpointer=narrow)
    with pytest.raises(ag.SerializationError, match="Profile"):
        reader.get_state("w")


def test_encrypted_checkpoints_refuse_a_wrong_key(
    compile_graph: Compile, store_factory: Callable[..., Any]
) -> None:
    key = EncryptedSerializer.generate_key()
    secret = store_factory(serializer=EncryptedSerializer(MsgpackSerializer(), key))
    app = compile_graph(loop_graph(), checkpointer=secret)
    app.invoke({"n": 0}, thread_id="e")
    assert app.get_state("e").state == {"n": 3}
    if isinstance(secret, MemoryCheckpointer):
        secret.serializer = EncryptedSerializer(MsgpackSerializer(), EncryptedSerializer.generate_key())
        wrong = secret
    else:
        wrong = store_factory(
            serializer=EncryptedSerializer(MsgpackSerializer(), EncryptedSerializer.generate_key())
        )
    with pytest.raises(ag.SerializationError, match="authentication"):
        compile_graph(loop_graph(), checkpointer=wrong).get_state("e")


def test_tampered_ciphertext_is_refused(compile_graph: Compile, tmp_path: Path) -> None:
    key = EncryptedSerializer.generate_key()
    path = tmp_path / "secret.db"
    store = SqliteCheckpointer(path, serializer=EncryptedSerializer(MsgpackSerializer(), key))
    try:
        app = compile_graph(loop_graph(), checkpointer=store)
        app.invoke({"n": 0}, thread_id="e")
        with sqlite3.connect(path) as raw:
            (blob_id, data) = raw.execute("SELECT blob_id, data FROM actorgraph_blobs LIMIT 1").fetchone()
            flipped = bytes([data[0], *data[1:-1], data[-1] ^ 1])
            raw.execute("UPDATE actorgraph_blobs SET data = ? WHERE blob_id = ?", (flipped, blob_id))
        with pytest.raises(ag.SerializationError, match="authentication"):
            app.get_history("e")
    finally:
        store.close()


def test_swapped_checkpoints_are_refused(compile_graph: Compile, tmp_path: Path) -> None:
    key = EncryptedSerializer.generate_key()
    path = tmp_path / "swap.db"
    store = SqliteCheckpointer(path, serializer=EncryptedSerializer(MsgpackSerializer(), key))
    try:
        app = compile_graph(loop_graph(), checkpointer=store)
        app.invoke({"n": 0}, thread_id="a")
        app.invoke({"n": 1}, thread_id="b")
        with sqlite3.connect(path) as raw:
            other = raw.execute(
                "SELECT data FROM actorgraph_checkpoints WHERE thread_id = 'b' ORDER BY checkpoint_id DESC"
            ).fetchone()[0]
            head = app.get_state("a").checkpoint_id
            raw.execute(
                "UPDATE actorgraph_checkpoints SET data = ? WHERE thread_id = 'a' AND checkpoint_id = ?",
                (other, head),
            )
        with pytest.raises(ag.SerializationError, match="authentication"):
            app.get_state("a")
    finally:
        store.close()


# -- concurrency and faults ---------------------------------------------------------------------


def test_two_runs_resuming_one_thread_cannot_both_commit(
    compile_graph: Compile, store_factory: Callable[..., Any]
) -> None:
    arrived = SharedBarrier(2)
    first_try = SharedDict({"left": 1})

    def slow(state: dict[str, int]) -> dict[str, int]:
        if first_try["left"]:
            first_try.add("left", -1)
            raise ConnectionError("down")
        arrived.wait(timeout=10)  # BrokenBarrierError if the other run never arrives
        return {"n": state["n"] + 1}

    g: ag.Graph = ag.Graph()
    g.add_vertex("slow", slow)
    g.add_edge(ag.START, "slow")
    g.add_edge("slow", ag.END)
    app_a = compile_graph(g, checkpointer=store_factory())
    app_b = compile_graph(g, checkpointer=store_factory())
    with pytest.raises(ag.VertexError):
        app_a.invoke({"n": 0}, thread_id="race")
    a = app_a.start(None, thread_id="race")
    b = app_b.start(None, thread_id="race")
    outcomes: list[str] = []
    refusals: list[str] = []
    for handle in (a, b):
        try:
            outcomes.append(handle.result(20).status)
        except ag.CheckpointError as exc:
            refusals.append(str(exc).lower())
    assert outcomes == ["done"]
    assert len(refusals) == 1
    assert "another run" in refusals[0]
    assert app_a.get_state("race").state == {"n": 1}


def test_a_failing_store_raises_checkpoint_error_and_the_run_resumes_later(
    compile_graph: Compile, tmp_path: Path
) -> None:
    path = tmp_path / "locked.db"
    store = SqliteCheckpointer(path, timeout=0.2)
    release = threading.Event()
    holding = SharedEvent()

    def hold_lock() -> None:
        raw = sqlite3.connect(path, timeout=5)
        raw.execute("BEGIN IMMEDIATE")
        holding.set()
        release.wait(10)
        raw.rollback()
        raw.close()

    running = SharedEvent()  # the input is stored by then: the lock cannot beat it

    g: ag.Graph = ag.Graph()
    g.add_vertex("one", lambda s: (running.set(), {"n": s["n"] + 1})[1])
    g.add_vertex("two", lambda s: (holding.wait(5), {"n": s["n"] * 10})[1])
    g.add_edge(ag.START, "one")
    g.add_edge("one", "two")
    g.add_edge("two", ag.END)
    try:
        app = compile_graph(g, checkpointer=store)
        locker = threading.Thread(target=hold_lock)
        handle = app.start({"n": 1}, thread_id="lock")
        assert running.wait(10)
        locker.start()
        with pytest.raises(ag.CheckpointError):
            handle.result(10)
        release.set()
        locker.join(10)
        assert app.invoke(None, thread_id="lock").state == {"n": 20}
    finally:
        release.set()
        store.close()


def test_pending_interrupts_are_listed_across_threads(compile_graph: Compile, store: Any) -> None:
    g: ag.Graph = ag.Graph(merge=by_key({"log": append}))
    g.add_vertex("ask", lambda s: {**s, "answer": ag.interrupt({"question": s["q"]})})
    g.add_edge(ag.START, "ask")
    g.add_edge("ask", ag.END)
    app = compile_graph(g, checkpointer=store)
    for i in range(3):
        app.invoke({"q": f"approve {i}?", "log": []}, thread_id=f"inbox-{i}")
    app.invoke(ag.Command(resume="yes"), thread_id="inbox-1")
    waiting = sorted(t.thread_id for t in store.threads(status="interrupted"))
    assert waiting == ["inbox-0", "inbox-2"]
    assert app.get_state("inbox-2").interrupts[0].value == {"question": "approve 2?"}


def test_a_conflict_at_end_is_located_and_the_thread_stays_readable_and_repairable(
    compile_graph: Compile, store: Any
) -> None:
    g: ag.Graph = ag.Graph()
    g.add_vertex("alpha", lambda s: {"k": 1})
    g.add_vertex("beta", lambda s: {"k": 2})
    for name in ("alpha", "beta"):
        g.add_edge(ag.START, name)
        g.add_edge(name, ag.END)
    app = compile_graph(g, checkpointer=store)
    with pytest.raises(ag.MergeConflictError) as info:
        app.invoke({"k": 0}, thread_id="clash")
    assert info.value.vertices == ("alpha", "beta") and info.value.step == 1
    snap = app.get_state("clash")
    assert snap.status == "error" and snap.state is None
    assert snap.error is not None and "'k'" in snap.error.message
    assert [t.thread_id for t in store.threads(status="error")] == ["clash"]
    assert "class v0 ok" in app.draw_mermaid(thread_id="clash")
    with pytest.raises(ag.InvalidUpdateError, match=r"merge conflict.*replace=True"):
        app.update_state("clash", {"k": 3})
    app.update_state("clash", {"k": 3}, replace=True)
    repaired = app.get_state("clash")
    assert repaired.state == {"k": 3} and repaired.status == "done"
