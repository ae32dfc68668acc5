"""Human in the loop: interrupt(), answers by id, breakpoints, answers from other processes."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pg_server import POSTGRES
from shared import SharedDict, SharedList

import actorgraph as ag
from actorgraph.merge import append, by_key
from actorgraph.testing import FakeClock

Compile = Callable[..., ag.CompiledGraph]
ROOT = Path(__file__).resolve().parents[2]


def approvals_graph(calls: SharedDict) -> ag.Graph:
    """prepare -> two Send tasks that each ask a person -> collect."""

    def approve(state: dict[str, Any]) -> dict[str, Any]:
        calls.add(state["item"])
        verdict = ag.interrupt(f"approve {state['item']}?")
        return {"verdicts": [f"{state['item']}={verdict}"]}

    g: ag.Graph = ag.Graph(merge=by_key({"verdicts": append}))
    g.add_vertex("prepare", lambda s: s)
    g.add_vertex("approve", approve, returns="update")  # LangGraph's map-reduce: the payload is its input
    g.add_vertex("collect", lambda s: {**s, "done": True})
    g.add_edge(ag.START, "prepare")
    g.add_conditional_edges(
        "prepare",
        lambda s: [ag.Send("approve", {"item": i, "verdicts": []}) for i in s["items"]],
        ["approve"],
    )
    g.add_edge("approve", "collect")
    g.add_edge("collect", ag.END)
    return g


def test_two_send_tasks_interrupt_and_are_answered_one_by_one(compile_graph: Compile, store: Any) -> None:
    calls = SharedDict()
    # the fallback path (the live one: tests/api/test_live_interrupts.py): an answer re-runs its task
    app = compile_graph(approvals_graph(calls), checkpointer=store, live_interrupts=None)
    first = app.invoke({"items": ["a", "b"], "verdicts": []}, thread_id="sends")
    assert first.status == "interrupted"
    by_value = {i.value: i for i in first.interrupts}
    assert set(by_value) == {"approve a?", "approve b?"}
    assert {i.task_id for i in first.interrupts} == {"approve:0", "approve:1"}
    second = app.invoke(ag.Command(resume={by_value["approve a?"].id: "yes"}), thread_id="sends")
    assert second.status == "interrupted"
    assert [i.value for i in second.interrupts] == ["approve b?"]
    assert second.interrupts[0].id == by_value["approve b?"].id  # the same id, in any process
    assert calls == {"a": 2, "b": 1}  # b did not run again while it waited
    third = app.invoke(ag.Command(resume="no"), thread_id="sends")
    assert third.status == "done"
    assert sorted(third.state["verdicts"]) == ["a=yes", "b=no"] and third.state["done"]
    assert calls == {"a": 2, "b": 2}


def test_a_bare_resume_with_two_pending_is_refused_and_lists_both(compile_graph: Compile, store: Any) -> None:
    app = compile_graph(approvals_graph(SharedDict()), checkpointer=store)
    pending = app.invoke({"items": ["a", "b"], "verdicts": []}, thread_id="bare").interrupts
    with pytest.raises(ag.ActorGraphError, match="2 interrupts are pending") as info:
        app.invoke(ag.Command(resume="yes"), thread_id="bare")
    for interrupt in pending:
        assert interrupt.id in str(info.value)
    with pytest.raises(ag.ResumeError, match="not pending"):
        app.invoke(ag.Command(resume={"not-an-id": "yes", pending[0].id: "x"}), thread_id="bare")
    assert app.get_state("bare").status == "interrupted"


def test_a_vertex_with_two_interrupts_gets_its_answers_in_order(compile_graph: Compile, store: Any) -> None:
    seen = SharedList()

    def interview(state: dict[str, Any]) -> dict[str, Any]:
        name = ag.interrupt("name?")
        age = ag.interrupt("age?")
        seen.append((name, age))
        return {"name": name, "age": age}

    g: ag.Graph = ag.Graph()
    g.add_vertex("interview", interview)
    g.add_edge(ag.START, "interview")
    g.add_edge("interview", ag.END)
    app = compile_graph(g, checkpointer=store)
    assert app.invoke({}, thread_id="two").interrupts[0].value == "name?"
    second = app.invoke(ag.Command(resume="Ada"), thread_id="two")
    assert second.status == "interrupted" and second.interrupts[0].value == "age?"
    assert app.invoke(ag.Command(resume=36), thread_id="two").state == {"name": "Ada", "age": 36}
    assert seen == [("Ada", 36)]


def line(*names: str) -> ag.Graph:
    g: ag.Graph = ag.Graph(merge=by_key({"path": append}))
    for name in names:
        g.add_vertex(name, lambda s, name=name: {**s, "path": [*s["path"], name]})
    for src, dst in zip((ag.START, *names), (*names, ag.END), strict=True):
        g.add_edge(src, dst)
    return g


def test_interrupt_after_every_vertex_moves_one_superstep_per_resume(
    compile_graph: Compile, store: Any
) -> None:
    app = compile_graph(line("a", "b", "c"), checkpointer=store, interrupt_after="*")
    result = app.invoke({"path": []}, thread_id="after")
    steps = [(result.status, result.step, result.state["path"])]
    while result.status == "interrupted":
        assert [i.kind for i in result.interrupts] == ["after"]
        result = app.invoke(None, thread_id="after")
        steps.append((result.status, result.step, result.state["path"]))
    assert steps == [
        ("interrupted", 1, ["a"]),
        ("interrupted", 2, ["a", "b"]),
        ("done", 3, ["a", "b", "c"]),
    ]


def test_interrupt_before_fires_once_and_other_tasks_of_the_superstep_run(
    compile_graph: Compile, store: Any
) -> None:
    ran = SharedList()
    g: ag.Graph = ag.Graph(merge=by_key({"path": append}))
    for name in ("left", "right"):
        g.add_vertex(name, lambda s, name=name: (ran.append(name), {**s, "path": [*s["path"], name]})[1])
        g.add_edge(ag.START, name)
        g.add_edge(name, ag.END)
    app = compile_graph(g, checkpointer=store)
    paused = app.invoke({"path": []}, thread_id="before", interrupt_before=["right"])
    assert paused.status == "interrupted" and [i.vertex for i in paused.interrupts] == ["right"]
    assert ran == ["left"]
    done = app.invoke(ag.Command(resume=None), thread_id="before")
    assert done.status == "done" and sorted(done.state["path"]) == ["left", "right"]
    assert ran == ["left", "right"]


def test_resume_with_an_update_changes_the_state_first(compile_graph: Compile, store: Any) -> None:
    g: ag.Graph = ag.Graph()
    g.add_vertex("ask", lambda s: {**s, "answer": ag.interrupt("?"), "seen": s["draft"]})
    g.add_edge(ag.START, "ask")
    g.add_edge("ask", ag.END)
    app = compile_graph(g, checkpointer=store)
    app.invoke({"draft": "v1"}, thread_id="upd")
    result = app.invoke(ag.Command(resume="ok", update={"draft": "v2"}), thread_id="upd")
    assert result.state == {"draft": "v2", "answer": "ok", "seen": "v2"}
    assert "update" in [s.source for s in app.get_history("upd")]


def test_resuming_what_is_not_interrupted_is_a_clear_error(compile_graph: Compile, store: Any) -> None:
    app = compile_graph(line("a"), checkpointer=store)
    app.invoke({"path": []}, thread_id="plain")
    with pytest.raises(ag.ResumeError, match=r"status 'done'.*give it a new input"):
        app.invoke(ag.Command(resume="yes"), thread_id="plain")
    with pytest.raises(ag.ThreadNotFoundError):
        app.invoke(ag.Command(resume="yes"), thread_id="missing")


def test_answering_a_failed_thread_says_it_failed_as_get_state_does(
    compile_graph: Compile, store: Any
) -> None:
    def broken(state: Any) -> Any:
        raise ValueError("bad input")

    g: ag.Graph = ag.Graph()
    g.add_vertex("broken", broken)
    g.add_edge(ag.START, "broken")
    g.add_edge("broken", ag.END)
    app = compile_graph(g, checkpointer=store)
    with pytest.raises(ag.VertexError, match=r"invoke\(None, thread_id=\.\.\.\)"):
        app.invoke({}, thread_id="failed")
    assert app.get_state("failed").status == "error"
    with pytest.raises(ag.ResumeError, match=r"status 'error'.*failed.*invoke\(None"):
        app.invoke(ag.Command(resume="yes"), thread_id="failed")


def test_an_error_and_an_interrupt_in_one_superstep(compile_graph: Compile, store: Any) -> None:
    attempts = SharedDict({"n": 0})

    def fragile(state: dict[str, Any]) -> dict[str, Any]:
        if attempts.add("n") == 1:
            raise ConnectionError("flaky")
        return {**state, "log": [*state["log"], "fragile"]}

    g: ag.Graph = ag.Graph(merge=by_key({"log": append}))
    g.add_vertex("ask", lambda s: {**s, "log": [*s["log"], f"ask={ag.interrupt('go?')}"]})
    g.add_vertex("fragile", fragile)
    for name in ("ask", "fragile"):
        g.add_edge(ag.START, name)
        g.add_edge(name, ag.END)
    app = compile_graph(g, checkpointer=store, clock=FakeClock())
    with pytest.raises(ag.VertexError):
        app.invoke({"log": []}, thread_id="mixed")
    snap = app.get_state("mixed")
    assert snap.status == "error" and snap.interrupts[0].value == "go?"
    retried = app.invoke(None, thread_id="mixed")
    assert retried.status == "interrupted" and retried.interrupts[0].value == "go?"
    done = app.invoke(ag.Command(resume="yes"), thread_id="mixed")
    assert sorted(done.state["log"]) == ["ask=yes", "fragile"]
    assert attempts["n"] == 2


# -- the approval example, and answers from other processes ------------------------------------------


def example(*args: str, stdin: str = "") -> str:
    done = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "approval.py"), *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def final_state(out: str) -> dict[str, Any]:
    return json.loads(out.strip().splitlines()[-1])  # type: ignore[no-any-return]


@pytest.mark.slow
def test_the_approval_example_asks_on_the_terminal(tmp_path: Path) -> None:
    out = example("--db", str(tmp_path / "a.db"), "ask", "release notes", stdin="mention the fix\ny\n")
    assert out.count("Publish this draft?") == 2
    state = final_state(out)
    assert state["status"] == "published" and state["revision"] == 2
    assert state["feedback"] == ["mention the fix"] and state["checked"] == 2  # the flaky check was retried


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["sqlite", POSTGRES])
def test_pause_in_one_process_answer_in_another_finish_in_a_third(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    where = (
        ["--db", str(tmp_path / "b.db")]
        if kind == "sqlite"
        else ["--dsn", request.getfixturevalue("postgres_db")]
    )
    started = example(*where, "start", "release notes", "--thread", "t1")
    assert "waiting for an answer" in started
    assert "t1: Release notes: draft 1." in example(*where, "inbox")
    revised = example(*where, "answer", "--thread", "t1", "--revise", "mention the fix")
    assert "draft 2. Revised to mention the fix." in revised
    finished = final_state(example(*where, "answer", "--thread", "t1", "--approve"))
    single = final_state(
        example("--db", str(tmp_path / "one.db"), "ask", "release notes", stdin="mention the fix\ny\n")
    )
    assert finished == single
    assert "status: done" in example(*where, "status", "--thread", "t1")
    assert example(*where, "inbox") == ""


def two_questions() -> ag.Graph:
    def ask(state: dict[str, Any]) -> dict[str, Any]:
        first = ag.interrupt("first?")
        second = ag.interrupt("second?")
        return {"answers": [first, second]}

    g: ag.Graph = ag.Graph()
    g.add_vertex("ask", ask)
    g.add_edge(ag.START, "ask")
    g.add_edge("ask", ag.END)
    return g


def test_a_repeated_answer_never_answers_the_next_question(compile_graph: Compile, store: Any) -> None:
    app = compile_graph(two_questions(), checkpointer=store)
    first = app.invoke({}, thread_id="twice").interrupts[0]
    answer = ag.Command(resume={first.id: "one"})
    second = app.invoke(answer, thread_id="twice").interrupts[0]
    assert second.value == "second?"
    with pytest.raises(ag.AlreadyAnsweredError, match="already answered") as info:
        app.invoke(answer, thread_id="twice")  # a retried request, a double click
    assert first.id in str(info.value) and info.value.vertex == "ask"
    snap = app.get_state("twice")
    assert snap.status == "interrupted" and [i.id for i in snap.interrupts] == [second.id]
    assert app.invoke(ag.Command(resume="two"), thread_id="twice").state == {"answers": ["one", "two"]}


def test_an_answer_from_another_thread_is_refused(compile_graph: Compile, store: Any) -> None:
    app = compile_graph(two_questions(), checkpointer=store)
    mine = app.invoke({}, thread_id="mine").interrupts[0]
    app.invoke({}, thread_id="theirs")
    with pytest.raises(ag.ResumeError, match="not pending"):
        app.invoke(ag.Command(resume={mine.id: "x"}), thread_id="theirs")
    assert app.get_state("theirs").interrupts[0].value == "first?"


def test_interrupt_ids_are_recognisable_and_a_plain_mapping_is_an_answer(
    compile_graph: Compile, store: Any
) -> None:
    from actorgraph._engine.context import is_interrupt_id

    app = compile_graph(two_questions(), checkpointer=store)
    pending = app.invoke({}, thread_id="form").interrupts[0]
    assert is_interrupt_id(pending.id) and not is_interrupt_id("approve a?")
    answer = {"approved": True, "note": "fine"}  # a form's fields, not ids
    result = app.invoke(ag.Command(resume=answer), thread_id="form")
    assert result.interrupts[0].value == "second?"
    assert app.invoke(ag.Command(resume="ok"), thread_id="form").state == {"answers": [answer, "ok"]}


def test_the_interrupts_of_many_sends_are_listed_in_task_order_everywhere(
    compile_graph: Compile, store: Any
) -> None:
    g: ag.Graph = ag.Graph(merge=by_key({"out": append}))
    g.add_vertex("split", lambda s: s)
    g.add_vertex("w", lambda s: {"out": [ag.interrupt(s["i"])]})
    g.add_edge(ag.START, "split")
    g.add_conditional_edges("split", lambda s: [ag.Send("w", {"i": i}) for i in range(12)], ["w"])
    g.add_edge("w", ag.END)
    app = compile_graph(g, checkpointer=store)
    result = app.invoke({}, thread_id="many")
    assert [i.value for i in result.interrupts] == list(range(12))  # w:2 before w:10
    assert [i.value for i in app.get_state("many").interrupts] == list(range(12))
    assert list(app.get_state("many").superstep.results) == [f"w:{i}" for i in range(12)]
