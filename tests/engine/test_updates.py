"""Updates, threads that remember, and vertices that return only what they change.

An update is a mapping of some keys applied to a state through the graph's
reducers: the new input of a finished thread, `update_state`, `Command(update=...)`
and the vertices of a `returns="update"` graph all use it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from children import report_of
from shared import SharedList

import actorgraph as ag
from actorgraph.checkpoint import MemoryCheckpointer, SqliteCheckpointer
from actorgraph.merge import add, append, by_key, merge_dicts, replace, union

HERE = Path(__file__).resolve().parents[1]  # tests/, where the helper scripts are
REDUCERS = by_key({"log": append, "n": add, "tags": union, "meta": merge_dicts, "last": replace, "best": max})
START_STATE = {"log": ["a"], "n": 1, "tags": ["x"], "meta": {"k": 1}, "last": "a", "best": 5, "plain": "p"}


@pytest.mark.slow
def test_a_five_turn_chat_in_five_processes_keeps_every_message_once(tmp_path: Path) -> None:
    db = str(tmp_path / "chat.db")
    states = [
        report_of("chat_child.py", db, "chat-1", f"user {turn}") for turn in range(1, 6)
    ]  # a process each
    expected = []
    for turn in range(1, 6):
        expected += [f"user {turn}", f"bot saw {2 * turn - 1}"]  # the bot saw the whole conversation
    assert states[-1] == {"messages": expected}
    with SqliteCheckpointer(db) as store:
        runs = [s for s in reversed(list(store.history("chat-1"))) if s.source == "input"]
        assert len(runs) == 5
        history = list(store.history("chat-1"))
        assert [h.parent_id for h in history[:-1]] == [h.checkpoint_id for h in history[1:]]  # one line


def one_step(merge: Any = None, **graph: Any) -> ag.Graph:
    g: ag.Graph = ag.Graph(merge=merge, **graph)
    g.add_vertex("noop", lambda s: None)
    g.add_edge(ag.START, "noop")
    g.add_edge("noop", ag.END)
    return g


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        ({"log": ["b"]}, {"log": ["a", "b"]}),
        ({"n": 4}, {"n": 5}),
        ({"tags": ["y", "x"]}, {"tags": ["x", "y"]}),
        ({"meta": {"j": 2}}, {"meta": {"k": 1, "j": 2}}),
        ({"last": "z"}, {"last": "z"}),
        ({"best": 3}, {"best": 5}),
        ({"best": 9}, {"best": 9}),
        ({"plain": "q"}, {"plain": "q"}),
        ({"new": 1}, {"new": 1}),
    ],
)
def test_update_state_applies_each_key_through_its_reducer(compile_graph, store, values, expected) -> None:
    app = compile_graph(one_step(REDUCERS), checkpointer=store)
    app.invoke(START_STATE, thread_id="u")
    app.update_state("u", values)
    assert app.get_state("u").state == {**START_STATE, **expected}


def test_update_state_replace_takes_the_whole_state(compile_graph, store) -> None:
    app = compile_graph(one_step(REDUCERS), checkpointer=store)
    app.invoke(START_STATE, thread_id="u")
    app.update_state("u", {"log": ["only"]}, replace=True)
    assert app.get_state("u").state == {"log": ["only"]}


def asker() -> ag.Graph:
    g: ag.Graph = ag.Graph(merge=by_key({"log": append}))
    g.add_vertex("prep", lambda s: {**s, "log": [*s["log"], "prep"]})
    g.add_vertex("ask", lambda s: {**s, "log": [*s["log"], f"answer={ag.interrupt('ok?')}"]})
    g.add_edge(ag.START, "prep")
    g.add_edge("prep", "ask")
    g.add_edge("ask", ag.END)
    return g


def test_update_state_as_end_ends_the_thread_and_drops_pending_questions(compile_graph, store) -> None:
    app = compile_graph(asker(), checkpointer=store)
    assert app.invoke({"log": []}, thread_id="e").status == "interrupted"
    app.update_state("e", {"log": ["skipped"]}, as_vertex=ag.END)
    snap = app.get_state("e")
    assert snap.status == "done" and snap.interrupts == () and snap.next == ()
    assert snap.state == {"log": ["prep", "skipped"]}
    assert [t.status for t in store.threads() if t.thread_id == "e"] == ["done"]
    with pytest.raises(ag.ResumeError, match="status 'done'"):
        app.invoke(ag.Command(resume="yes"), thread_id="e")


def test_update_state_as_start_is_a_new_input_that_invoke_none_runs(compile_graph, store) -> None:
    app = compile_graph(one_step(REDUCERS), checkpointer=store)
    app.invoke(START_STATE, thread_id="s")
    app.update_state("s", {"log": ["again"]}, as_vertex=ag.START)
    assert app.get_state("s").next == ("noop",)
    assert app.invoke(None, thread_id="s").state["log"] == ["a", "again"]


def test_a_finished_thread_takes_new_input_as_an_update_through_the_reducers(compile_graph, store) -> None:
    g: ag.Graph = ag.Graph(merge=by_key({"log": append, "n": add}))
    g.add_vertex("count", lambda s: {**s, "n": s["n"] + 1, "log": [*s["log"], "count"]})
    g.add_edge(ag.START, "count")
    g.add_edge("count", ag.END)
    app = compile_graph(g, checkpointer=store)
    assert app.invoke({"log": ["hi"], "n": 0}, thread_id="t").state == {"log": ["hi", "count"], "n": 1}
    second = app.invoke({"log": ["again"], "n": 10}, thread_id="t").state
    assert second == {"log": ["hi", "count", "again", "count"], "n": 12}


def test_a_paused_thread_refuses_new_input_saying_what_to_do(compile_graph, store) -> None:
    app = compile_graph(asker(), checkpointer=store)
    app.invoke({"log": []}, thread_id="p")
    with pytest.raises(ag.ActorGraphError, match=r"takes no new input yet; answer it.*discard_pending"):
        app.invoke({"log": ["x"]}, thread_id="p")


def test_command_update_from_a_vertex_goes_through_the_reducers(compile_graph) -> None:
    g: ag.Graph = ag.Graph(merge=by_key({"seen": append, "n": add}))
    g.add_vertex("a", lambda s: ag.Command(update={"seen": ["a"], "n": 2}, goto="b"), destinations=["b"])
    g.add_vertex("b", lambda s: ag.Command(update={"seen": ["b"]}))
    g.add_edge(ag.START, "a")
    g.add_edge("b", ag.END)
    assert compile_graph(g).invoke({"seen": ["in"], "n": 1}).state == {"seen": ["in", "a", "b"], "n": 3}


def routed_by_command() -> ag.Graph:
    """START -> first -> second -> END."""
    g: ag.Graph = ag.Graph(merge=by_key({"log": append}))
    for name in ("first", "second"):
        g.add_vertex(name, lambda s, name=name: {**s, "log": [*s["log"], name]})
    g.add_edge(ag.START, "first")
    g.add_edge("first", "second")
    g.add_edge("second", ag.END)
    return g


def test_a_command_as_input_updates_the_state_and_starts_at_goto(compile_graph, store) -> None:
    plain = compile_graph(routed_by_command())
    assert plain.invoke(ag.Command(goto="second", update={"log": ["in"]})).state == {"log": ["in", "second"]}
    app = compile_graph(routed_by_command(), checkpointer=store)
    app.invoke({"log": ["hello"]}, thread_id="c")
    result = app.invoke(ag.Command(goto="second", update={"log": ["more"]}), thread_id="c")
    assert result.state == {"log": ["hello", "first", "second", "more", "second"]}  # first is skipped
    with pytest.raises(ag.ActorGraphError, match="cannot be combined with goto"):
        app.invoke(ag.Command(goto="second", resume="x"), thread_id="c")


def test_update_vertices_in_fan_outs_joins_and_sends_merge_exactly(compile_graph) -> None:
    g: ag.Graph = ag.Graph(merge=by_key({"log": append, "n": add}), returns="update")
    g.add_vertex("a", lambda s: {"log": ["a"], "n": 1})
    g.add_vertex("b", lambda s: {"log": ["b"], "n": 2})
    g.add_vertex("join", lambda s: {"log": ["join"], "n": 4})
    g.add_vertex("work", lambda s: {"log": [f"w{s['item']}"], "n": 2 ** s["item"], "item": None})
    g.add_vertex("whole", lambda s: {**s, "log": [*s["log"], "whole"]}, returns="state")
    g.add_edge(ag.START, "a")
    g.add_edge(ag.START, "b")
    g.add_edge(["a", "b"], "join")
    g.add_conditional_edges("join", lambda s: [ag.Send("work", {**s, "item": i}) for i in (3, 4)], ["work"])
    g.add_edge("work", "whole")
    g.add_edge("whole", ag.END)
    state = compile_graph(g).invoke({"log": [], "n": 0}).state
    assert sorted(state["log"]) == ["a", "b", "join", "w3", "w4", "whole"]
    assert state["n"] == 1 + 2 + 4 + 8 + 16


def test_an_update_vertex_returning_a_non_mapping_says_what_it_should_return(compile_graph) -> None:
    g: ag.Graph = ag.Graph(returns="update")
    g.add_vertex("x", lambda s: [1, 2])
    g.add_edge(ag.START, "x")
    g.add_edge("x", ag.END)
    with pytest.raises(
        ag.InvalidUpdateError, match=r"vertex 'x' returned a list; .* returns a mapping of the keys"
    ):
        compile_graph(g).invoke({"a": 1})


@pytest.mark.parametrize(
    ("call", "error"),
    [
        (
            lambda app: app.update_state("b", {"log": 5}),
            r"the append reducer of key 'log' cannot apply a int",
        ),
        (
            lambda app: app.update_state("b", {"n": 1}, as_vertex="nowhere"),
            r"as_vertex='nowhere'.*no such vertex",
        ),
        (lambda app: app.update_state("b", [1]), r"item 0 of the update list is 1, not a \(key, value\)"),
        (lambda app: app.update_state("b", 7), r"an update is a mapping of keys to values, .* got int"),
        (lambda app: app.invoke(ag.Command(update=[1]), thread_id="b"), r"item 0 of the update list is 1"),
        (lambda app: app.invoke(ag.Command(update=7), thread_id="b"), r"an update is a mapping"),
    ],
)
def test_bad_updates_are_clear_errors_and_leave_the_thread_as_it_was(
    compile_graph, store, call, error
) -> None:
    app = compile_graph(one_step(REDUCERS), checkpointer=store)
    app.invoke(START_STATE, thread_id="b")
    before = app.get_state("b")
    with pytest.raises(ag.InvalidUpdateError, match=error):
        call(app)
    after = app.get_state("b")
    assert after.checkpoint_id == before.checkpoint_id and after.state == START_STATE


def test_compile_context_is_the_default_of_every_run_and_of_resumes(compile_graph, store) -> None:
    seen = SharedList()

    def ask(state: Any, ctx: ag.Context[Any]) -> Any:
        seen.append(ctx.context["client"])
        ag.interrupt("go?")
        return state

    g: ag.Graph = ag.Graph()
    g.add_vertex("ask", ask)
    g.add_edge(ag.START, "ask")
    g.add_edge("ask", ag.END)
    app = compile_graph(g, checkpointer=store, context={"client": "default"}, live_interrupts=None)
    app.invoke({}, thread_id="ctx")
    app.invoke(ag.Command(resume="yes"), thread_id="ctx")  # no context= on the resume
    app.invoke({}, thread_id="other", context={"client": "mine"})
    assert seen == ["default", "default", "mine"]


def test_the_default_context_reaches_runs_without_a_checkpointer(compile_graph) -> None:
    g: ag.Graph = ag.Graph()
    g.add_vertex("read", lambda s, ctx: {"client": ctx.context})
    g.add_edge(ag.START, "read")
    g.add_edge("read", ag.END)
    assert compile_graph(g, context="db").invoke({}).state == {"client": "db"}


def test_memory_threads_remember_too() -> None:
    g = one_step(REDUCERS)
    with g.compile(MemoryCheckpointer()) as app:
        app.invoke({"log": ["a"]}, thread_id="m")
        assert app.invoke({"log": ["b"]}, thread_id="m").state == {"log": ["a", "b"]}
