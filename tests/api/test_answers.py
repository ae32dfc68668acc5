"""Every answer reaches its own question, once: ids unique per question, and a claim before anything runs."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from answer_child import approval
from pg_server import POSTGRES
from shared import SharedList

import actorgraph as ag

CHILD = Path(__file__).resolve().parents[1] / "answer_child.py"


def ask_twice() -> ag.Graph:
    def ask(state: dict[str, Any]) -> dict[str, Any]:
        return {**state, "answers": [*state.get("answers", []), ag.interrupt("ok?")]}

    g: ag.Graph = ag.Graph()
    g.add_vertex("ask", ask)
    g.add_edge(ag.START, "ask")
    g.add_edge("ask", ag.END)
    return g


def test_the_next_run_of_a_thread_asks_under_a_new_id_and_the_old_answer_is_refused(
    compile_graph: Any, store: Any
) -> None:
    app = compile_graph(ask_twice(), checkpointer=store)
    first = app.invoke({"answers": []}, thread_id="t").interrupts[0]
    old_answer = ag.Command(resume={first.id: "yes"})
    assert app.invoke(old_answer, thread_id="t").state == {"answers": ["yes"]}
    second = app.invoke({}, thread_id="t").interrupts[0]  # a new input on the done thread: a new run
    assert second.id != first.id and second.vertex == first.vertex and second.value == first.value
    with pytest.raises(ag.AlreadyAnsweredError) as caught:  # a replayed request from the first run
        app.invoke(old_answer, thread_id="t")
    assert caught.value.interrupt_id == first.id and caught.value.vertex == "ask"
    assert app.get_state("t").interrupts[0].id == second.id  # the new question still waits
    assert app.invoke(ag.Command(resume={second.id: "again"}), thread_id="t").state == {
        "answers": ["yes", "again"]
    }


def test_a_pending_question_keeps_its_id_in_another_process_and_store_object(
    compile_graph: Any, store_factory: Any
) -> None:
    asked = compile_graph(ask_twice(), checkpointer=store_factory()).invoke({}, thread_id="t").interrupts[0]
    other = compile_graph(ask_twice(), checkpointer=store_factory())
    assert other.get_state("t").interrupts[0].id == asked.id
    assert other.invoke(None, thread_id="t").interrupts[0].id == asked.id  # continued, still the same


def test_a_replay_and_a_fork_ask_under_new_ids(compile_graph: Any, store: Any) -> None:
    app = compile_graph(ask_twice(), checkpointer=store)
    first = app.invoke({}, thread_id="t").interrupts[0]
    start = app.get_state("t").checkpoint_id
    app.invoke(ag.Command(resume="a"), thread_id="t")
    replayed = app.invoke(None, thread_id="t", checkpoint_id=start).interrupts[0]
    assert replayed.id != first.id
    with pytest.raises(ag.AlreadyAnsweredError):  # the first run's question is not the replay's
        app.invoke(ag.Command(resume={first.id: "b"}), thread_id="t")
    assert app.invoke(ag.Command(resume={replayed.id: "b"}), thread_id="t").state == {"answers": ["b"]}


def test_a_breakpoint_of_the_next_run_has_a_new_id(compile_graph: Any, store: Any) -> None:
    g: ag.Graph = ag.Graph()
    g.add_vertex("work", lambda s: {**s, "n": s.get("n", 0) + 1})
    g.add_edge(ag.START, "work")
    g.add_edge("work", ag.END)
    app = compile_graph(g, checkpointer=store, interrupt_before=["work"])
    first = app.invoke({"n": 0}, thread_id="t").interrupts[0]
    assert app.invoke(ag.Command(resume={first.id: None}), thread_id="t").state == {"n": 1}
    second = app.invoke({}, thread_id="t").interrupts[0]
    assert second.id != first.id and second.vertex == "work"


def test_a_lost_claim_runs_nothing_and_names_the_winner(compile_graph: Any, store_factory: Any) -> None:
    ran = SharedList()  # seen from every process (the vertex may run on a Ray worker)

    def review(state: dict[str, Any]) -> dict[str, Any]:
        answer = ag.interrupt("ship?")
        ran.append(answer)
        return {**state, "answer": answer}

    g: ag.Graph = ag.Graph()
    g.add_vertex("review", review)
    g.add_edge(ag.START, "review")
    g.add_edge("review", ag.END)
    alice = compile_graph(g, checkpointer=store_factory())
    bob = compile_graph(g, checkpointer=store_factory())
    question = alice.invoke({}, thread_id="t").interrupts[0]
    assert bob.get_state("t").interrupts[0].id == question.id  # bob's page shows the question
    alice.invoke(ag.Command(resume="ship it"), thread_id="t", answered_by="alice")
    with pytest.raises(ag.AlreadyAnsweredError, match="already answered by alice") as caught:
        bob.invoke(ag.Command(resume={question.id: "hold"}), thread_id="t", answered_by="bob")
    assert caught.value.answered_by == "alice" and caught.value.answered_at <= time.time()
    with pytest.raises(ag.AlreadyAnsweredError, match="alice"):  # a bare answer, just after
        bob.invoke(ag.Command(resume="hold"), thread_id="t", answered_by="bob")
    assert ran == ["ship it"]
    assert bob.get_state("t").state == {"answer": "ship it"}


def test_an_answer_without_answered_by_names_this_process(compile_graph: Any, store_factory: Any) -> None:
    """Who answered defaults to this process's user, host and pid, worked out when the answer is claimed."""
    import getpass
    import socket

    def review(state: dict[str, Any]) -> dict[str, Any]:
        return {"answer": ag.interrupt("ship?")}

    g: ag.Graph = ag.Graph()
    g.add_vertex("review", review)
    g.add_edge(ag.START, "review")
    g.add_edge("review", ag.END)
    alice, bob = (
        compile_graph(g, checkpointer=store_factory()),
        compile_graph(g, checkpointer=store_factory()),
    )
    alice.invoke({}, thread_id="t")
    alice.invoke(ag.Command(resume="ship it"), thread_id="t")
    with pytest.raises(ag.AlreadyAnsweredError) as caught:
        bob.invoke(ag.Command(resume="hold"), thread_id="t", answered_by="bob")
    assert caught.value.answered_by == f"{getpass.getuser()}@{socket.gethostname()} (pid {os.getpid()})"


@pytest.mark.parametrize("bad", ["", "   ", 7, "x" * 201])
def test_answered_by_must_be_a_short_name(compile_graph: Any, store: Any, bad: Any) -> None:
    app = compile_graph(ask_twice(), checkpointer=store)
    with pytest.raises(ag.ConfigError, match="answered_by"):
        app.invoke(ag.Command(resume="x"), thread_id="t", answered_by=bad)


# -- real processes --------------------------------------------------------------------------------


def _target(store_kind: str, tmp_path: Path, request: pytest.FixtureRequest) -> str:
    if store_kind == "sqlite":
        return str(tmp_path / "runs.db")
    return str(request.getfixturevalue("postgres_db"))


def _paused(store_kind: str, target: str, ledger: Path) -> str:
    from answer_child import open_store

    with open_store(store_kind, target) as cp, approval(str(ledger)).compile(checkpointer=cp) as app:
        return str(app.invoke({}, thread_id="t").interrupts[0].id)


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(CHILD.parent), *sys.path])}


@pytest.mark.slow
@pytest.mark.parametrize("store_kind", ["sqlite", POSTGRES])
def test_racing_processes_answer_once_and_the_losers_run_nothing(
    store_kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    target = _target(store_kind, tmp_path, request)
    ledger, go = tmp_path / "ledger", tmp_path / "go"
    _paused(store_kind, target, ledger)
    answers = [f"a{i}" for i in range(4)]
    procs = [
        subprocess.Popen(
            [sys.executable, str(CHILD), store_kind, target, "t", a, str(ledger), str(go)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=_env(),
        )
        for a in answers
    ]
    time.sleep(1.5)  # every child has opened the store and waits for the start
    go.touch()
    outs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0] * 4, [o[1] for o in outs]
    said = [o[0].strip() for o in outs]
    winners = [a for a, s in zip(answers, said, strict=True) if s == "won"]
    assert len(winners) == 1, said
    assert all(s == f"lost:proc-{winners[0]}" for s in said if s != "won"), said
    assert ledger.read_text().splitlines() == [f"ran:{winners[0]}"]  # the losers' answers never ran


@pytest.mark.slow
@pytest.mark.parametrize("store_kind", ["sqlite", POSTGRES])
def test_a_claimed_answer_survives_its_process_and_the_next_resume_applies_it(
    store_kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    from answer_child import open_store

    target = _target(store_kind, tmp_path, request)
    ledger = tmp_path / "ledger"
    question = _paused(store_kind, target, ledger)
    child = subprocess.Popen(
        [sys.executable, str(CHILD), store_kind, target, "t", "ship", str(ledger)],
        env={**_env(), "SLEEP": "60"},
    )
    deadline = time.monotonic() + 60
    while not (ledger.exists() and ledger.read_text()) and time.monotonic() < deadline:
        time.sleep(0.05)
    os.kill(child.pid, signal.SIGKILL)  # claimed, ran its side effect, never finished
    child.wait(30)
    with open_store(store_kind, target) as cp, approval(str(ledger)).compile(checkpointer=cp) as app:
        snap = app.get_state("t")
        assert snap.interrupts == () and snap.status == "running"
        with pytest.raises(ag.AlreadyAnsweredError, match="proc-ship"):
            app.invoke(ag.Command(resume={question: "hold"}), thread_id="t")
        assert app.invoke(None, thread_id="t").state == {"answer": "ship"}
    assert ledger.read_text().splitlines() == ["ran:ship", "ran:ship"]  # re-run with the claimed answer


# -- thread ids ---------------------------------------------------------------------------------------

BAD_IDS = ["", "   ", " t", "t ", "a\nb", "a\x1b[31m", "a\u202eb", "a|b", "x" * 257, 123, None.__class__]


@pytest.mark.parametrize("bad", BAD_IDS, ids=repr)
def test_a_thread_id_that_cannot_be_shown_or_typed_is_refused_everywhere(
    compile_graph: Any, store: Any, bad: Any
) -> None:
    app = compile_graph(ask_twice(), checkpointer=store)
    calls = [
        lambda: app.invoke({}, thread_id=bad),
        lambda: app.start({}, thread_id=bad),
        lambda: list(app.stream({}, thread_id=bad)),
        lambda: app.get_state(bad),
        lambda: app.get_history(bad),
        lambda: app.update_state(bad, {"answers": []}),
    ]
    for call in calls:
        with pytest.raises(ag.ConfigError, match="thread_id"):
            call()
    assert store.threads() == []


@pytest.mark.parametrize("tricky", ["x/../victim", "a/b", "..", "%2f", "50%", "#frag", "?q=1", "a\\b", "é ü"])
def test_printable_thread_ids_work_as_given(compile_graph: Any, store: Any, tricky: str) -> None:
    app = compile_graph(ask_twice(), checkpointer=store)
    asked = app.invoke({}, thread_id=tricky).interrupts[0]
    assert app.get_state(tricky).interrupts[0].id == asked.id
    assert [t.thread_id for t in store.threads()] == [tricky]


@pytest.mark.parametrize("bad", [123, b"t", ""])
def test_stores_refuse_a_thread_id_that_is_not_a_string(store: Any, bad: Any) -> None:
    from store_rows import row

    with pytest.raises(ag.ConfigError, match="thread id"):
        store.put(row(bad, 1), expect_head=None)
    with pytest.raises(ag.ConfigError, match="thread id"):
        store.set_metadata(bad, {"k": "v"})
    assert store.threads() == []


def test_wait_started_tells_at_once_whether_a_background_answer_was_taken(
    compile_graph: Any, store: Any
) -> None:
    app = compile_graph(ask_twice(), checkpointer=store)
    question = app.invoke({}, thread_id="t").interrupts[0]
    first = app.start(ag.Command(resume={question.id: "yes"}), thread_id="t", answered_by="ann")
    first.wait_started(30)
    second = app.start(ag.Command(resume={question.id: "no"}), thread_id="t", answered_by="bob")
    with pytest.raises(ag.AlreadyAnsweredError, match="ann"):
        second.wait_started(30)
    assert first.result(30).state == {"answers": ["yes"]}
    with pytest.raises(ag.AlreadyAnsweredError):
        second.result(30)
