"""`bulk_update_state`: several supersteps of updates in one call, one checkpoint each.

A superstep of one update does what `update_state` does; a superstep of several
stands for several vertices at once (their writes apply in order through the
reducers, and each routes the result). Every superstep is planned before the
first is written, so a bad update leaves the thread as it was and the error
names it.
"""

from __future__ import annotations

from typing import Annotated, Any, NotRequired, TypedDict

import pytest
from lines import in_a_line

import actorgraph as ag
from actorgraph.merge import append


class State(TypedDict):
    log: Annotated[list[str], append]
    foo: NotRequired[str]
    baz: NotRequired[str]


def chain() -> ag.Graph:
    a = ("a", lambda s: {"log": ["a"], "foo": "a"})
    return in_a_line(a, ("b", lambda s: {"log": ["b"], "baz": "b"}), state=State, returns="update")


def test_each_superstep_is_one_checkpoint_in_order(compile_graph, store) -> None:
    app = compile_graph(chain(), checkpointer=store)
    app.invoke({"log": []}, thread_id="t")
    before = app.get_state("t").checkpoint_id
    ids = app.bulk_update_state("t", [[{"log": ["one"]}], [({"log": ["two"]}, "a")], [{"foo": "three"}]])
    history = app.get_history("t")
    assert [h.checkpoint_id for h in history[:3]] == ids[::-1]
    assert [h.parent_id for h in history[:3]] == [ids[1], ids[0], before]
    assert {h.source for h in history[:3]} == {"update"}
    assert history[0].state == {"log": ["a", "b", "one", "two"], "foo": "three", "baz": "b"}
    assert history[0].next == ("b",)  # as if `a` had produced the second superstep's state


def test_several_updates_of_one_superstep_are_one_task_each_and_all_land(compile_graph, store) -> None:
    app = compile_graph(chain(), checkpointer=store)
    app.invoke({"log": []}, thread_id="t")
    app.bulk_update_state("t", [[({"log": ["x"], "foo": "fa"}, "a"), ({"log": ["y"], "baz": "fb"}, "b")]])
    snap = app.get_state("t")
    assert snap.state == {"log": ["a", "b", "x", "y"], "foo": "fa", "baz": "fb"}
    assert snap.next == ("b",)  # a's message to b stays; b's went to END
    assert app.invoke(None, thread_id="t").state == {
        "log": ["a", "b", "x", "y", "b"],
        "foo": "fa",
        "baz": "b",
    }


def test_a_new_thread_can_be_built_from_updates(compile_graph, store) -> None:
    app = compile_graph(chain(), checkpointer=store)
    app.bulk_update_state("new", [[({"log": ["in"]}, ag.START)], [({"log": ["a"], "foo": "a"}, "a")]])
    assert app.get_state("new").next == ("b",)
    assert app.invoke(None, thread_id="new").state == {"log": ["in", "a", "b"], "foo": "a", "baz": "b"}


@pytest.mark.parametrize(
    ("supersteps", "error"),
    [
        ([], r"takes a non-empty list of supersteps"),
        ([[], []], r"superstep 0 is \[\], not a non-empty list of updates"),
        ([[{"log": ["x"]}], "oops"], r"superstep 1 is 'oops'"),
        (
            [[["log", ["x"]]]],
            r"update 0 of superstep 0 is \['log', \['x'\]\]; an update is a mapping, or a \(values",
        ),
        ([[({"log": ["x"]}, "nowhere")]], r"update 0 of superstep 0 \(as_vertex='nowhere'\): no such vertex"),
        ([[{"foo": "x"}, {"baz": "y"}]], r"superstep 0 has 2 updates, so each stands for a vertex"),
        ([[(None, ag.END), (None, "a")]], r"None, START and END take a superstep each"),
        ([[({"foo": "x"}, "a"), ({"foo": "y"}, "a")]], r"names vertex\(es\) \['a'\] more than once"),
        (
            [[{"foo": "fine"}], [({"log": ["ok"]}, "a"), ({"log": 3}, "b")]],
            r"superstep 1, update 1 \(as_vertex='b'\): .*key 'log' should be list\[str\], got int; nothing",
        ),
        (
            [[({"foo": "x"}, "a"), ({"foo": "y"}, "b")]],
            r"superstep 0, its updates together: the update writes key 'foo' 2 times, but the key has no",
        ),
        ([[{"nope": 1}]], r"superstep 0, update 0 \(as_vertex=None\): .*unknown key\(s\) \['nope'\]"),
    ],
)
def test_a_bad_update_names_itself_and_leaves_the_thread_as_it_was(
    compile_graph, store, supersteps: Any, error: str
) -> None:
    app = compile_graph(chain(), checkpointer=store)
    app.invoke({"log": []}, thread_id="t")
    before = app.get_history("t")
    with pytest.raises(ag.InvalidUpdateError, match=error):
        app.bulk_update_state("t", supersteps)
    assert [h.checkpoint_id for h in app.get_history("t")] == [h.checkpoint_id for h in before]


def test_a_fork_from_an_older_checkpoint(compile_graph, store) -> None:
    app = compile_graph(chain(), checkpointer=store)
    app.invoke({"log": []}, thread_id="t")
    first = app.get_history("t")[-1]  # the input
    app.bulk_update_state("t", [[({"log": ["by hand"]}, "a")]], checkpoint_id=first.checkpoint_id)
    assert app.get_state("t").parent_id == first.checkpoint_id
    assert app.invoke(None, thread_id="t").state["log"] == ["by hand", "b"]


def test_an_update_as_end_ends_the_thread_and_drops_its_questions(compile_graph, store) -> None:
    def ask(state: State) -> dict[str, Any]:
        return {"log": [ag.interrupt("go?")]}

    app = compile_graph(in_a_line(("ask", ask), state=State, returns="update"), checkpointer=store)
    assert app.invoke({"log": []}, thread_id="t").status == "interrupted"
    app.bulk_update_state("t", [[{"log": ["answered by hand"]}], [(None, ag.END)]])
    snap = app.get_state("t")
    assert (snap.status, snap.interrupts, snap.state["log"]) == ("done", (), ["answered by hand"])


def test_without_a_checkpointer_there_is_no_thread_to_update(compile_graph) -> None:
    with pytest.raises(ag.ActorGraphError, match=r"has no checkpointer"):
        compile_graph(chain()).bulk_update_state("t", [[{"log": ["x"]}]])


# -- all or none: the checkpoints of one call are written in one transaction -------------------------


class Shout(str):
    """A str the default serializer refuses to store (it fits the schema's `str`)."""

    __slots__ = ()


def test_an_update_the_store_refuses_midway_leaves_the_thread_as_it_was(compile_graph, store) -> None:
    app = compile_graph(chain(), checkpointer=store)
    app.invoke({"log": []}, thread_id="t")
    before = app.get_history("t")
    supersteps = [[{"log": ["one"]}], [{"log": ["two"]}], [{"foo": Shout("three")}]]
    with pytest.raises(ag.SerializationError, match="subclasses of str"):
        app.bulk_update_state("t", supersteps)
    assert [h.checkpoint_id for h in app.get_history("t")] == [h.checkpoint_id for h in before]
    assert app.get_state("t").state == {"log": ["a", "b"], "foo": "a", "baz": "b"}
    assert app.invoke({"log": ["again"]}, thread_id="t").status == "done"  # the thread goes on


@pytest.mark.slow
def test_a_store_failure_midway_leaves_the_thread_as_it_was(compile_graph, postgres_db: str) -> None:
    """Another session holds the row the third checkpoint's new part goes into: that insert times out."""
    import psycopg

    from actorgraph.checkpoint import PostgresCheckpointer
    from actorgraph.checkpoint._codec import aad
    from actorgraph.checkpoint._parts import PartCodec

    big = "z" * 5000  # a part of its own, stored under its content address
    with PostgresCheckpointer(postgres_db, statement_timeout=1) as store:
        app = compile_graph(chain(), checkpointer=store)
        app.invoke({"log": []}, thread_id="t")
        before = app.get_history("t")
        codec = PartCodec(store.serializer, "t", aad("t", "part"))
        part = codec.address(codec.dumps(big))
        with psycopg.connect(postgres_db) as other:  # one transaction, open until the block ends
            other.execute("INSERT INTO actorgraph_blobs VALUES (%s, %s, %s)", ("t", part, b"held"))
            with pytest.raises(ag.CheckpointError, match="statement timeout"):
                app.bulk_update_state("t", [[{"log": ["one"]}], [{"log": ["two"]}], [{"foo": big}]])
            other.rollback()
        assert [h.checkpoint_id for h in app.get_history("t")] == [h.checkpoint_id for h in before]
        app.bulk_update_state("t", [[{"log": ["one"]}], [{"log": ["two"]}], [{"foo": big}]])
        assert app.get_state("t").state == {"log": ["a", "b", "one", "two"], "foo": big, "baz": "b"}
