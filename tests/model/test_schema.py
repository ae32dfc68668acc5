"""An optional state schema: `Graph(state=TypedDict | dataclass | pydantic model)`.

The input, every vertex's output and every update are checked; a mismatch fails
that task with an `InvalidUpdateError` naming the vertex, the keys and what was
expected, so a dropped key is never silent.
"""

from __future__ import annotations

import dataclasses
import operator
from typing import Annotated, Any, NotRequired, TypedDict

import pydantic
import pytest
from shared import SharedList

import actorgraph as ag
from actorgraph.checkpoint import MemoryCheckpointer
from actorgraph.merge import append


class Draft(TypedDict):
    topic: str
    words: int
    notes: NotRequired[list[str]]


@dataclasses.dataclass
class DraftData:
    topic: str
    words: int = 0


class DraftModel(pydantic.BaseModel):
    topic: str
    words: int = 0


def line(schema: Any, fn: Any, **graph: Any) -> ag.Graph:
    g: ag.Graph = ag.Graph(state=schema, **graph)
    g.add_vertex("write", fn)
    g.add_edge(ag.START, "write")
    g.add_edge("write", ag.END)
    return g


def test_a_typed_dict_state_passes_when_it_fits(compile_graph) -> None:
    app = compile_graph(line(Draft, lambda s: {**s, "words": 3}))
    assert app.invoke({"topic": "t", "words": 0}).state == {"topic": "t", "words": 3}


@pytest.mark.parametrize(
    ("returned", "expected"),
    [
        (
            {"words": 3},
            (
                r"vertex 'write' made a state that does not fit the state schema Draft: "
                r"missing required key\(s\) \['topic'\]"
            ),
        ),
        ({"topic": "t", "words": "3"}, r"key 'words' should be int, got str"),
        (
            {"topic": "t", "words": 3, "wrods": 1},
            r"unknown key\(s\) \['wrods'\] \(Draft has \['notes', 'topic', 'words'\]\)",
        ),
        ("text", r"vertex 'write' returned a str, but this graph merges its states key by key"),
    ],
)
def test_a_typed_dict_refuses_a_dropped_key_a_wrong_type_or_an_unknown_key(
    compile_graph, returned, expected
) -> None:
    app = compile_graph(line(Draft, lambda s: returned))
    with pytest.raises(ag.InvalidUpdateError, match=expected):
        app.invoke({"topic": "t", "words": 0})


def test_the_input_is_checked_before_anything_runs(compile_graph) -> None:
    ran = SharedList()
    app = compile_graph(line(Draft, lambda s: (ran.append("write"), s)[1]))
    with pytest.raises(
        ag.InvalidUpdateError, match=r"the input made a state that does not fit .*\['words'\]"
    ):
        app.invoke({"topic": "t"})
    assert ran == []


def test_a_failed_schema_check_is_the_tasks_error_and_never_retried(compile_graph) -> None:
    calls = SharedList()
    g = line(
        Draft, lambda s: (calls.append(1), {"topic": 1, "words": 0})[1], retry=ag.RetryPolicy(max_attempts=3)
    )
    with pytest.raises(ag.InvalidUpdateError, match=r"key 'topic' should be str, got int"):
        compile_graph(g, checkpointer=MemoryCheckpointer()).invoke({"topic": "t", "words": 0}, thread_id="r")
    assert calls == [1]


def test_a_dataclass_schema_turns_dicts_into_instances_and_checks_types(compile_graph) -> None:
    app = compile_graph(line(DraftData, lambda s: {"topic": s.topic, "words": 5}))
    state = app.invoke(DraftData("t")).state
    assert state == DraftData("t", 5) and isinstance(state, DraftData)
    wrong = compile_graph(line(DraftData, lambda s: dataclasses.replace(s, words="many")))
    with pytest.raises(
        ag.InvalidUpdateError, match=r"state schema DraftData: key 'words' should be int, got str"
    ):
        wrong.invoke(DraftData("t"))


def test_a_pydantic_schema_is_validated_by_pydantic(compile_graph) -> None:
    app = compile_graph(line(DraftModel, lambda s: {"topic": s.topic, "words": "7"}))
    state = app.invoke({"topic": "t"}).state
    assert state == DraftModel(topic="t", words=7)  # coerced by pydantic, and of the declared type
    wrong = compile_graph(line(DraftModel, lambda s: {"topic": s.topic, "words": "many"}))
    with pytest.raises(
        ag.InvalidUpdateError, match=r"state schema DraftModel: key 'words': Input should be a valid integer"
    ):
        wrong.invoke({"topic": "t"})
    unknown = compile_graph(line(DraftModel, lambda s: {"topic": "t", "title": "x"}))
    with pytest.raises(ag.InvalidUpdateError, match=r"unknown key\(s\) \['title'\]"):
        unknown.invoke({"topic": "t"})


class Chat(TypedDict):
    messages: Annotated[list[str], operator.add]  # LangGraph's habit
    turns: Annotated[int, operator.add]


def test_reducers_declared_in_the_schema_are_the_merge(compile_graph) -> None:
    g: ag.Graph = ag.Graph(state=Chat, returns="update")
    g.add_vertex("left", lambda s: {"messages": ["left"], "turns": 1})
    g.add_vertex("right", lambda s: {"messages": ["right"], "turns": 1})
    for name in ("left", "right"):
        g.add_edge(ag.START, name)
        g.add_edge(name, ag.END)
    state = compile_graph(g).invoke({"messages": ["hi"], "turns": 0}).state
    assert sorted(state["messages"]) == ["hi", "left", "right"] and state["turns"] == 2


def test_updates_are_checked_against_the_schema_and_a_bad_one_changes_nothing(compile_graph) -> None:
    class Log(TypedDict):
        log: Annotated[list[str], append]

    app = compile_graph(line(Log, lambda s: s), checkpointer=MemoryCheckpointer())
    app.invoke({"log": ["a"]}, thread_id="u")
    head = app.get_state("u").checkpoint_id
    with pytest.raises(
        ag.InvalidUpdateError,
        match=r"update_state\(\.\.\.\): the update does not fit the state schema Log: "
        r"unknown key\(s\) \['lgo'\]",
    ):
        app.update_state("u", {"lgo": ["b"]})
    with pytest.raises(ag.InvalidUpdateError, match=r"key 'log' should be list\[str\], got str"):
        app.update_state("u", {"log": "b"})
    assert app.get_state("u").checkpoint_id == head
    app.update_state("u", {"log": ["b"]})
    assert app.get_state("u").state == {"log": ["a", "b"]}


def test_a_schema_that_is_not_a_class_of_the_three_kinds_is_refused() -> None:
    with pytest.raises(
        ag.GraphValidationError,
        match=r"takes a TypedDict, a dataclass or a pydantic model class, got <class 'int'>",
    ):
        line(int, lambda s: s).compile()


def test_without_a_schema_nothing_is_checked(compile_graph) -> None:
    app = compile_graph(line(None, lambda s: {"words": 3}, returns="state"))
    assert app.invoke({"topic": "t", "words": 0}).state == {
        "words": 3
    }  # the dropped key is the user's choice, said with returns="state"
