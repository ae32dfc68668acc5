"""A fork is a new line of a thread's history: its questions get new ids; the old line's answers stay there.

A fork is any new checkpoint whose parent is not the thread's head: a replay
(`invoke(..., checkpoint_id=old)`) or an update of an older checkpoint
(`update_state(..., checkpoint_id=old)`, `bulk_update_state`). Its questions are
asked under ids of its own, so an answer claimed on the old line neither
answers the fork nor refuses the fork's answer.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from answer_child import approval, open_store
from pg_server import POSTGRES

import actorgraph as ag

CHILD = Path(__file__).resolve().parents[1] / "answer_child.py"


def asking() -> ag.Graph:
    def ask(state: dict[str, Any]) -> dict[str, Any]:
        return {**state, "answers": [*state.get("answers", []), ag.interrupt("ok?")]}

    g: ag.Graph = ag.Graph()
    g.add_vertex("ask", ask)
    g.add_edge(ag.START, "ask")
    g.add_edge("ask", ag.END)
    return g


def _answered_once(app: ag.CompiledGraph) -> tuple[ag.Interrupt, str]:
    """Ask on thread "t" and answer "a": the question, and the checkpoint before it was answered."""
    first = app.invoke({}, thread_id="t").interrupts[0]
    before = app.get_state("t").checkpoint_id
    assert app.invoke(ag.Command(resume="a"), thread_id="t").state == {"answers": ["a"]}
    return first, before


def _asks_anew(app: ag.CompiledGraph, old: ag.Interrupt, asked: ag.RunResult) -> ag.Interrupt:
    """The fork asked again under a new id, which get_state shows and which takes an answer."""
    assert asked.status == "interrupted"
    (question,) = asked.interrupts
    assert question.id != old.id and (question.vertex, question.value) == (old.vertex, old.value)
    snap = app.get_state("t")
    assert (snap.status, [i.id for i in snap.interrupts]) == ("interrupted", [question.id])
    return question


def test_an_update_of_an_older_checkpoint_asks_again_under_a_new_id(compile_graph: Any, store: Any) -> None:
    app = compile_graph(asking(), checkpointer=store)
    first, before = _answered_once(app)
    app.update_state("t", {"x": 1}, checkpoint_id=before)
    question = _asks_anew(app, first, app.invoke(None, thread_id="t"))
    assert app.invoke(ag.Command(resume="b"), thread_id="t").state == {"x": 1, "answers": ["b"]}
    with pytest.raises(ag.AlreadyAnsweredError):  # each line's question takes one answer
        app.invoke(ag.Command(resume={question.id: "c"}), thread_id="t")


def test_a_bulk_update_of_an_older_checkpoint_asks_again_under_a_new_id(
    compile_graph: Any, store: Any
) -> None:
    app = compile_graph(asking(), checkpointer=store)
    first, before = _answered_once(app)
    app.bulk_update_state("t", [[{"x": 1}], [{"y": 2}]], checkpoint_id=before)
    _asks_anew(app, first, app.invoke(None, thread_id="t"))
    assert app.invoke(ag.Command(resume="b"), thread_id="t").state == {"x": 1, "y": 2, "answers": ["b"]}


def _answered_after_an_update(app: ag.CompiledGraph) -> tuple[ag.Interrupt, str]:
    """Ask, update at the head (the question carried on), answer there: the first checkpoint still asks."""
    first = app.invoke({}, thread_id="t").interrupts[0]
    asked_at = app.get_state("t").checkpoint_id
    app.update_state("t", {"x": 0})
    assert app.get_state("t").interrupts[0].id == first.id  # an update at the head keeps the question
    assert app.invoke(ag.Command(resume="a"), thread_id="t").state == {"x": 0, "answers": ["a"]}
    return first, asked_at


def test_a_fork_where_the_old_question_waits_does_not_take_the_old_lines_answer(
    compile_graph: Any, store: Any
) -> None:
    app = compile_graph(asking(), checkpointer=store)
    first, asked_at = _answered_after_an_update(app)
    app.update_state("t", {"x": 1}, checkpoint_id=asked_at)
    snap = app.get_state("t")
    assert (snap.status, snap.interrupts) == ("running", ())  # its task asks again when it runs
    _asks_anew(app, first, app.invoke(None, thread_id="t"))
    assert app.invoke(ag.Command(resume="b"), thread_id="t").state == {"x": 1, "answers": ["b"]}


def test_a_replay_with_an_update_asks_again_under_a_new_id(compile_graph: Any, store: Any) -> None:
    app = compile_graph(asking(), checkpointer=store)
    first, asked_at = _answered_after_an_update(app)
    replayed = app.invoke(ag.Command(update={"x": 1}), thread_id="t", checkpoint_id=asked_at)
    _asks_anew(app, first, replayed)
    assert app.invoke(ag.Command(resume="b"), thread_id="t").state == {"x": 1, "answers": ["b"]}


def test_a_replay_answering_a_question_the_old_line_answered_takes_the_new_answer(
    compile_graph: Any, store: Any
) -> None:
    app = compile_graph(asking(), checkpointer=store)
    first, asked_at = _answered_after_an_update(app)
    replayed = app.invoke(ag.Command(resume={first.id: "b"}), thread_id="t", checkpoint_id=asked_at)
    assert (replayed.status, replayed.state) == ("done", {"answers": ["b"]})
    assert [s.state for s in app.get_history("t")][:1] == [{"answers": ["b"]}]


def test_a_replay_with_an_update_and_an_answer_keeps_the_question_it_answers(
    compile_graph: Any, store: Any
) -> None:
    app = compile_graph(asking(), checkpointer=store)
    first, asked_at = _answered_after_an_update(app)
    answered = ag.Command(update={"x": 1}, resume={first.id: "b"})
    replayed = app.invoke(answered, thread_id="t", checkpoint_id=asked_at)
    assert (replayed.status, replayed.state) == ("done", {"x": 1, "answers": ["b"]})


# -- real processes: the answers are claimed in the store by others ---------------------------------


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(CHILD.parent), *sys.path])}


def _answer_in_a_child(store_kind: str, target: str, answer: str, ledger: Path) -> str:
    done = subprocess.run(
        [sys.executable, str(CHILD), store_kind, target, "t", answer, str(ledger)],
        capture_output=True,
        text=True,
        env=_env(),
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


@pytest.mark.slow
@pytest.mark.parametrize("store_kind", ["sqlite", POSTGRES])
def test_a_fork_asks_anew_when_other_processes_answer_both_lines(
    store_kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    target = (
        str(tmp_path / "runs.db") if store_kind == "sqlite" else str(request.getfixturevalue("postgres_db"))
    )
    ledger = tmp_path / "ledger"
    with open_store(store_kind, target) as cp, approval(str(ledger)).compile(checkpointer=cp) as app:
        first = app.invoke({}, thread_id="t").interrupts[0]
        before = app.get_state("t").checkpoint_id
    assert _answer_in_a_child(store_kind, target, "ship", ledger) == "won"
    with open_store(store_kind, target) as cp, approval(str(ledger)).compile(checkpointer=cp) as app:
        app.update_state("t", {"note": "again"}, checkpoint_id=before)
        question = app.invoke(None, thread_id="t").interrupts[0]
        assert question.id != first.id and app.get_state("t").interrupts[0].id == question.id
    assert _answer_in_a_child(store_kind, target, "hold", ledger) == "won"  # the fork's answer is its own
    assert _answer_in_a_child(store_kind, target, "late", ledger) == "lost:proc-hold"
    with open_store(store_kind, target) as cp, approval(str(ledger)).compile(checkpointer=cp) as app:
        assert app.get_state("t").state == {"note": "again", "answer": "hold"}
    assert ledger.read_text().splitlines() == ["ran:ship", "ran:hold"]
