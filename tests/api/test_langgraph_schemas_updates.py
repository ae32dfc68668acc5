"""LangGraph's tests of input/output schemas, several writes per task and `bulk_update_state`, ported.

From libs/langgraph/tests/test_pregel.py. Each test's docstring names the
LangGraph test it ports; LangGraph's `StateUpdate(values, as_node)` is our
`(values, as_vertex)` pair. Where our behaviour differs on purpose, the test
asserts ours and the docstring says why. Not ported: per-node input schemas
(`add_node(..., input_schema=...)`, which we do not have), JSON schemas of a
graph (`get_input_jsonschema`), the `tasks` stream mode's payloads (their own
port) and `bulk_update_state` with `Command` values (`test_batch_update_as_input`).
"""

from __future__ import annotations

from typing import Annotated, Any, NotRequired, TypedDict

import pytest
from lines import in_a_line
from pydantic import BaseModel

import actorgraph as ag
from actorgraph.checkpoint import MsgpackSerializer
from actorgraph.merge import append
from actorgraph.messages import add_messages


def test_node_schemas_custom_output(compile_graph) -> None:
    """test_node_schemas_custom_output: the result holds the output schema's keys only.

    LangGraph ignores an input key outside the input schema ("now"); we refuse it,
    naming it, so a misspelt key is never lost without a word.
    """

    class State(TypedDict):
        hello: str
        bye: str
        messages: Annotated[list[Any], add_messages]

    class Output(TypedDict):
        messages: list[Any]

    vertices = [("a", lambda s: None), ("b", lambda s: {"hello": "again"}), ("c", lambda s: None)]
    g = in_a_line(*vertices, state=State, output=Output, returns="update")
    app = compile_graph(g)
    result = app.invoke({"hello": "there", "bye": "world", "messages": "hello"})
    assert list(result.state) == ["messages"]
    assert [(m["role"], m["content"]) for m in result.state["messages"]] == [("user", "hello")]
    with pytest.raises(ag.InvalidUpdateError, match=r"unknown key\(s\) \['now'\]"):
        app.invoke({"hello": "there", "bye": "world", "messages": "hello", "now": 345})


class InnerObject(BaseModel):
    yo: int


class QueryModel(BaseModel):
    query: str


class PydanticState(QueryModel):
    """LangGraph's `State`, with `docs` given a default: a key the input schema does not give
    must have one here (LangGraph leaves it unset), and our `append` for its `sorted_add`."""

    inner: InnerObject
    answer: str | None = None
    docs: Annotated[list[str], append] = []


class Input(QueryModel):
    inner: InnerObject


class Output(BaseModel):
    answer: str
    docs: list[str]


def fan_out_graph() -> ag.Graph:
    g: ag.Graph = ag.Graph(state=PydanticState, input=Input, output=Output, returns="update")
    g.add_vertex("rewrite_query", lambda s: {"query": f"query: {s.query}"})
    g.add_vertex("analyzer_one", lambda s: {"query": f"analyzed: {s.query}"})
    g.add_vertex("retriever_one", lambda s: {"docs": ["doc1", "doc2"]})
    g.add_vertex("retriever_two", lambda s: {"docs": ["doc3", "doc4"]})
    g.add_vertex("qa", lambda s: {"answer": ",".join(sorted(s.docs))})
    g.add_edge(ag.START, "rewrite_query")
    g.add_edge("rewrite_query", "analyzer_one")
    g.add_edge("analyzer_one", "retriever_one")
    g.add_conditional_edges("rewrite_query", lambda s: "retriever_two", {"retriever_two": "retriever_two"})
    g.add_edge(["retriever_one", "retriever_two"], "qa")
    g.add_edge("qa", ag.END)
    return g


def test_in_one_fan_out_state_graph_waiting_edge_custom_state_class_pydantic_input(
    compile_graph, store_factory
) -> None:
    """test_in_one_fan_out_state_graph_waiting_edge_custom_state_class_pydantic_input.

    A pydantic state, input and output: an `Input` instance is an input, the
    result is a dict of the output's keys, a bad input is refused (LangGraph
    raises pydantic's `ValidationError`, we an `InvalidUpdateError` naming the key).
    """
    app = compile_graph(fan_out_graph())
    question = Input(query="what is weather in sf", inner=InnerObject(yo=1))
    expected = {"docs": ["doc1", "doc2", "doc3", "doc4"], "answer": "doc1,doc2,doc3,doc4"}
    assert sorted(app.invoke(question).state["docs"]) == expected["docs"]
    assert app.invoke(question).state["answer"] == expected["answer"]
    with pytest.raises(ag.InvalidUpdateError, match=r"does not fit the input schema Input: key 'query'"):
        app.invoke({"query": {}, "inner": {"yo": 1}})
    store = store_factory(serializer=MsgpackSerializer(allowed=[PydanticState, InnerObject]))
    paused_app = compile_graph(fan_out_graph(), checkpointer=store, interrupt_after=["retriever_one"])
    assert paused_app.invoke(question, thread_id="1").status == "interrupted"
    assert paused_app.invoke(None, thread_id="1").state["answer"] == expected["answer"]
    paused_app.update_state("1", {"docs": ["doc5"]}, as_vertex="rewrite_query")
    assert "doc5" in paused_app.get_state("1").state.docs  # the thread keeps the whole state


def test_multiple_writes_same_channel_from_same_node(compile_graph, store) -> None:
    """test_multiple_writes_same_channel_from_same_node: the writes land in order, through the reducer.

    Our history has no `__start__` checkpoint (the input is the first), and our
    `updates` items are whole states, so the values are compared.
    """

    class State(TypedDict):
        foo: Annotated[str, lambda a, b: ", ".join(x for x in (a, b) if x)]

    one = ("one", lambda s: ag.Command(update=[("foo", "one.0"), ("foo", "one.1")]))
    g = in_a_line(one, ("two", lambda s: {"foo": "two"}), state=State, returns="update")
    app = compile_graph(g, checkpointer=store)
    updates = list(app.stream({"foo": "input"}, thread_id="1", mode="updates"))
    assert [next(iter(u.values())) for u in updates] == [
        {"foo": "input, one.0, one.1"},
        {"foo": "input, one.0, one.1, two"},
    ]
    assert [h.state["foo"] for h in app.get_history("1")] == [
        "input, one.0, one.1, two",
        "input, one.0, one.1",
        "input",
    ]


class FooBaz(TypedDict):
    foo: NotRequired[str]
    baz: NotRequired[str]


def test_bulk_state_updates(compile_graph, store) -> None:
    """test_bulk_state_updates: one checkpoint per superstep; several updates in one superstep.

    LangGraph's `State` requires `foo` and `baz`; ours marks them `NotRequired`,
    since the first update gives one. Malformed calls are `InvalidUpdateError`s
    (LangGraph raises `ValueError` for empty lists); we have no `__copy__`.
    """
    writes = {"node_a": {"foo": "bar"}, "node_b": {"baz": "qux"}}
    g = in_a_line(*[(name, lambda s, w=w: w) for name, w in writes.items()], state=FooBaz, returns="update")
    app = compile_graph(g, checkpointer=store)
    app.bulk_update_state("1", [[({"foo": "bar"}, "node_a")]])
    app.bulk_update_state("1", [[({"foo": "updated"}, "node_a"), ({"baz": "new"}, "node_b")]])
    assert app.get_state("1").state == {"foo": "updated", "baz": "new"}
    assert len(app.get_history("1")) == 2
    app.bulk_update_state(
        "2", [[({"foo": "bar"}, "node_a")], [({"foo": "updated"}, "node_a"), ({"baz": "new"}, "node_b")]]
    )
    assert app.get_state("2").state == {"foo": "updated", "baz": "new"}
    assert len(app.get_history("2")) == 2
    with pytest.raises(ag.InvalidUpdateError, match=r"each stands for a vertex"):
        app.bulk_update_state("2", [[({"foo": "error"}, None), ({"bar": "error"}, None)]])
    with pytest.raises(ag.InvalidUpdateError, match=r"non-empty list of supersteps"):
        app.bulk_update_state("2", [])
    with pytest.raises(ag.InvalidUpdateError, match=r"not a non-empty list of updates"):
        app.bulk_update_state("2", [[], []])
    with pytest.raises(ag.InvalidUpdateError, match=r"None, START and END take a superstep each"):
        app.bulk_update_state("2", [[(None, ag.END), (None, "node_a")]])
    assert len(app.get_history("2")) == 2


def test_update_as_input(compile_graph, store) -> None:
    """test_update_as_input: a thread built by `bulk_update_state` has the history a run made.

    LangGraph records the input (`__input__`) and START (`__start__`) as two
    checkpoints; ours is one, an update as START. Compared: states and next
    vertices (an update keeps its superstep number; a run's advance it).
    """

    class Foo(TypedDict):
        foo: str

    g = in_a_line(*[(n, lambda s, n=n: {"foo": n}) for n in ("agent", "tool")], state=Foo, returns="update")
    app = compile_graph(g, checkpointer=store)
    assert app.invoke({"foo": "input"}, thread_id="1").state == {"foo": "tool"}
    assert app.invoke({"foo": "input"}, thread_id="1").state == {"foo": "tool"}
    turn = [[({"foo": "input"}, ag.START)], [({"foo": "agent"}, "agent")], [({"foo": "tool"}, "tool")]]
    app.bulk_update_state("2", turn + turn)
    assert app.get_state("2").state == {"foo": "tool"}

    def seen(thread: str) -> list[tuple[Any, tuple[str, ...]]]:
        return [(h.state, h.next) for h in app.get_history(thread)]

    assert seen("2") == seen("1")
