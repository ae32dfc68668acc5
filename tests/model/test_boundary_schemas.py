"""Input and output schemas: `Graph(state=S, input=InS, output=OutS)`.

A run's input must fit `InS`, its result holds `OutS`'s keys only, and the keys
in neither are the vertices' own; the thread keeps the whole state. At a
subgraph's boundary the parent's state is cut to the subgraph's input keys and
its result is an update to the parent's state.
"""

from __future__ import annotations

import dataclasses
from typing import Annotated, Any, NotRequired, TypedDict

import pytest
from lines import in_a_line
from pydantic import BaseModel
from shared import SharedList

import actorgraph as ag
from actorgraph.merge import append


class State(TypedDict):
    question: str
    notes: NotRequired[Annotated[list[str], append]]  # the vertices' own
    answer: NotRequired[str]


class Question(TypedDict):
    question: str


class Answer(TypedDict):
    answer: str


def think(state: State) -> dict[str, Any]:
    return {"notes": [f"thought about {state['question']}"]}


def reply(state: State) -> dict[str, Any]:
    return {"answer": f"{state['question']}: {len(state['notes'])} note(s)"}


def qa_graph(thinker: Any = think, **schemas: Any) -> ag.Graph:
    return in_a_line(
        ("think", thinker), ("reply", reply), state=State, returns="update", name="qa", **schemas
    )


def test_the_result_holds_the_output_keys_and_the_thread_the_whole_state(compile_graph, store) -> None:
    app = compile_graph(qa_graph(input=Question, output=Answer), checkpointer=store)
    result = app.invoke({"question": "why"}, thread_id="t")
    assert result.state == {"answer": "why: 1 note(s)"}
    whole = {"question": "why", "notes": ["thought about why"], "answer": "why: 1 note(s)"}
    assert app.get_state("t").state == whole
    assert app.get_history("t")[0].state == whole


def test_stream_values_shows_the_whole_state_as_langgraph_does(compile_graph) -> None:
    app = compile_graph(qa_graph(input=Question, output=Answer))
    values = list(app.stream({"question": "why"}, mode="values"))
    assert values[-1] == {"question": "why", "notes": ["thought about why"], "answer": "why: 1 note(s)"}


@pytest.mark.parametrize(
    ("given", "error"),
    [
        (
            {"question": "why", "notes": ["x"]},
            r"the input does not fit the input schema Question: unknown key\(s\) \['notes'\]",
        ),
        ({}, r"missing required key\(s\) \['question'\]"),
        ({"question": 3}, r"key 'question' should be str, got int"),
    ],
)
def test_the_input_is_checked_against_the_input_schema(compile_graph, given: Any, error: str) -> None:
    app = compile_graph(qa_graph(input=Question, output=Answer))
    with pytest.raises(ag.InvalidUpdateError, match=error):
        app.invoke(given)


def test_a_new_input_on_a_finished_thread_is_an_update_of_input_keys(compile_graph, store) -> None:
    app = compile_graph(qa_graph(input=Question), checkpointer=store)
    app.invoke({"question": "why"}, thread_id="t")
    assert app.invoke({"question": "how"}, thread_id="t").state["notes"] == [
        "thought about why",
        "thought about how",
    ]
    with pytest.raises(ag.InvalidUpdateError, match=r"the update does not fit the input schema Question"):
        app.invoke({"answer": "forced"}, thread_id="t")
    app.update_state("t", {"answer": "by hand"})  # update_state writes any key of the state, as in LangGraph
    assert app.get_state("t").state["answer"] == "by hand"


def test_the_schemas_default_to_the_state(compile_graph) -> None:
    result = compile_graph(qa_graph()).invoke({"question": "why"})
    assert result.state == {"question": "why", "notes": ["thought about why"], "answer": "why: 1 note(s)"}
    with pytest.raises(
        ag.InvalidUpdateError, match=r"the input made a state that does not fit the state schema"
    ):
        compile_graph(qa_graph()).invoke({"question": "why", "other": 1})


def test_an_interrupted_run_returns_the_output_keys_too(compile_graph, store) -> None:
    g = qa_graph(output=Answer)
    app = compile_graph(g, checkpointer=store, interrupt_before=["reply"])
    paused = app.invoke({"question": "why"}, thread_id="t")
    assert (paused.status, paused.state) == ("interrupted", {})
    assert app.invoke(None, thread_id="t").state == {"answer": "why: 1 note(s)"}


def test_dataclass_and_pydantic_schemas(compile_graph) -> None:
    @dataclasses.dataclass
    class Whole:
        a: int
        b: int = 0
        hidden: int = 0

    @dataclasses.dataclass
    class In:
        a: int

    class Out(BaseModel):
        b: int

    g: ag.Graph = ag.Graph(state=Whole, input=In, output=Out, returns="update")
    g.add_vertex("x", lambda s: {"b": s.a + 1, "hidden": 7})
    g.add_edge(ag.START, "x")
    g.add_edge("x", ag.END)
    app = compile_graph(g)
    assert app.invoke({"a": 1}).state == {"b": 2}  # a dict of the output keys, as LangGraph returns
    assert app.invoke(In(a=2)).state == {"b": 3}  # an instance of the input schema is an input too


@pytest.mark.parametrize(
    ("schemas", "error"),
    [
        ({"input": Answer | None}, r"takes a TypedDict, a dataclass or a pydantic model"),
        (
            {"output": TypedDict("Extra", {"other": int})},
            r"output=Extra\): Extra has key\(s\) \['other'\] that the state",
        ),
        (
            {"input": TypedDict("Partial", {"answer": str})},
            r"State requires key\(s\) \['question'\], which the input",
        ),
    ],
)
def test_schemas_that_cannot_work_are_refused_at_compile(schemas: dict[str, Any], error: str) -> None:
    with pytest.raises(ag.GraphValidationError, match=error):
        qa_graph(**schemas).compile()


def test_without_a_state_schema_the_boundary_schemas_still_apply(compile_graph) -> None:
    g: ag.Graph = ag.Graph(input=Question, output=Answer, returns="update")
    g.add_vertex("x", lambda s: {"answer": s["question"].upper(), "scratch": 1})
    g.add_edge(ag.START, "x")
    g.add_edge("x", ag.END)
    app = compile_graph(g)
    assert app.invoke({"question": "why"}).state == {"answer": "WHY"}
    with pytest.raises(ag.InvalidUpdateError, match=r"unknown key\(s\) \['scratch'\]"):
        app.invoke({"question": "why", "scratch": 0})


class Parent(TypedDict):
    question: str
    answer: NotRequired[str]
    log: NotRequired[Annotated[list[str], append]]


@pytest.mark.parametrize("compiled", [False, True])
def test_a_subgraph_sees_its_input_keys_and_returns_its_output_keys(compile_graph, compiled: bool) -> None:
    seen = SharedList()
    child = qa_graph(lambda s: seen.append(dict(s)) or think(s), input=Question, output=Answer)
    parent: ag.Graph = ag.Graph(state=Parent, returns="update")
    parent.add_vertex("start", lambda s: {"log": ["parent"]})
    inner = child.compile() if compiled else child
    parent.add_vertex("qa", inner)
    parent.add_edge(ag.START, "start")
    parent.add_edge("start", "qa")
    parent.add_edge("qa", ag.END)
    app = compile_graph(parent)
    try:
        assert app.invoke({"question": "why"}).state == {
            "question": "why",
            "answer": "why: 1 note(s)",
            "log": ["parent"],
        }
        assert seen == [{"question": "why"}]  # the parent's log is not the subgraph's business
    finally:
        if compiled:
            inner.close()
