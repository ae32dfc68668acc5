"""LangGraph's how-to guides rewritten for actorgraph: streams that show a pause, and LangGraph's spellings.

Each scenario is the guide's code with the imports changed, and the one-line
differences `from-langgraph.md` names (the default stream mode is `values` here,
so the guides' bare `graph.stream(...)`, which means `updates` in LangGraph,
says `stream_mode="updates"`). What each stream yields at a pause was read from
LangGraph 1.2 itself: `updates` ends with `{"__interrupt__": (Interrupt,...)}`
(`()` for a breakpoint), `values` with the state and that key (nothing for a
breakpoint), in every way of streaming.
"""

from __future__ import annotations

import asyncio
from typing import Any, TypedDict

import pytest

import actorgraph as ag
from actorgraph import END, START, Command, Graph, interrupt
from actorgraph.checkpoint import MemoryCheckpointer

Compile = Any


# -- "How to wait for user input" (interrupt) ------------------------------------------------------


class State(TypedDict):
    some_text: str


def human_node(state: State) -> dict[str, Any]:
    value = interrupt({"text_to_revise": state["some_text"]})
    return {"some_text": value}


def review_graph() -> Graph[State]:
    graph_builder: Graph[State] = Graph(state=State, returns="update")
    graph_builder.add_vertex("human_node", human_node)
    graph_builder.add_edge(START, "human_node")
    graph_builder.add_edge("human_node", END)  # the one-line difference: a vertex with no way out
    return graph_builder


def test_a_pause_is_the_last_item_of_the_updates_stream(compile_graph: Compile) -> None:
    graph = compile_graph(review_graph(), checkpointer=MemoryCheckpointer())
    config = {"configurable": {"thread_id": "some_id"}}
    chunks = list(graph.stream({"some_text": "original text"}, config=config, stream_mode="updates"))
    [pause] = chunks
    [question] = pause["__interrupt__"]
    assert question.value == {"text_to_revise": "original text"}
    assert question.id == graph.get_state("some_id").interrupts[0].id
    resumed = list(graph.stream(Command(resume="Edited text"), config=config, stream_mode="updates"))
    assert resumed == [{"human_node": {"some_text": "Edited text"}}]


def test_a_pause_is_the_state_with_its_questions_in_the_values_stream(compile_graph: Compile) -> None:
    graph = compile_graph(review_graph(), checkpointer=MemoryCheckpointer())
    config = {"configurable": {"thread_id": "1"}}
    items = list(graph.stream({"some_text": "original text"}, config, stream_mode="values"))
    assert items[0] == {"some_text": "original text"}
    assert items[-1] == {"some_text": "original text", "__interrupt__": graph.get_state("1").interrupts}


def test_a_pause_shows_in_the_async_streams_too(compile_graph: Compile) -> None:
    graph = compile_graph(review_graph(), checkpointer=MemoryCheckpointer())

    async def streamed(thread: str, mode: str) -> list[Any]:
        config = {"configurable": {"thread_id": thread}}
        return [c async for c in graph.astream({"some_text": "t"}, config, stream_mode=mode)]

    updates, values = asyncio.run(streamed("u", "updates")), asyncio.run(streamed("v", "values"))
    assert [list(u) for u in updates] == [["__interrupt__"]]
    assert values[-1]["__interrupt__"] == graph.get_state("v").interrupts


def test_a_pause_shows_in_each_of_several_modes_updates_first(compile_graph: Compile) -> None:
    graph = compile_graph(review_graph(), checkpointer=MemoryCheckpointer())
    items = list(
        graph.stream(
            {"some_text": "t"}, {"configurable": {"thread_id": "1"}}, stream_mode=["values", "updates"]
        )
    )
    questions = graph.get_state("1").interrupts
    assert items[-2:] == [
        ("updates", {"__interrupt__": questions}),
        ("values", {"some_text": "t", "__interrupt__": questions}),
    ]
    assert not list(graph.stream({"some_text": "t"}, thread_id="2", mode="custom"))


def test_a_pause_in_a_subgraph_shows_in_its_namespace_and_in_the_parent(compile_graph: Compile) -> None:
    parent: Graph[State] = Graph(state=State, returns="update")
    parent.add_vertex("review", review_graph())
    parent.add_edge(START, "review").add_edge("review", END)
    graph = compile_graph(parent, checkpointer=MemoryCheckpointer())
    items = list(graph.stream({"some_text": "t"}, thread_id="1", stream_mode="updates", subgraphs=True))
    (inner, inner_pause), (outer, outer_pause) = items
    assert inner[0].startswith("review@") and outer == ()
    assert [q.vertex for q in inner_pause["__interrupt__"]] == ["human_node"]
    assert [q.vertex for q in outer_pause["__interrupt__"]] == ["review/human_node"]
    assert list(graph.stream({"some_text": "t"}, thread_id="2", stream_mode="updates")) == [
        {"__interrupt__": graph.get_state("2").interrupts}
    ]


# -- "How to add breakpoints" (interrupt_before) ---------------------------------------------------


def step_1(state: State) -> dict[str, Any]:
    return {"some_text": state["some_text"] + " 1"}


def step_2(state: State) -> dict[str, Any]:
    return {"some_text": state["some_text"] + " 2"}


def test_a_breakpoint_is_an_empty_interrupt_in_updates_and_nothing_in_values(compile_graph: Compile) -> None:
    builder: Graph[State] = Graph(state=State, returns="update").add_sequence([step_1, step_2])
    builder.add_edge(START, "step_1").add_edge("step_2", END)
    graph = compile_graph(builder, checkpointer=MemoryCheckpointer(), interrupt_before=["step_2"])
    thread = {"configurable": {"thread_id": "1"}}
    assert list(graph.stream({"some_text": "a"}, thread, stream_mode="updates")) == [
        {"step_1": {"some_text": "a 1"}},
        {"__interrupt__": ()},
    ]
    assert list(graph.stream(None, thread, stream_mode="updates")) == [{"step_2": {"some_text": "a 1 2"}}]
    thread = {"configurable": {"thread_id": "2"}}
    assert list(graph.stream({"some_text": "a"}, thread, stream_mode="values")) == [
        {"some_text": "a"},
        {"some_text": "a 1"},
    ]


# -- LangGraph's spellings: config, stream_mode, result["key"] -------------------------------------


def test_invoke_takes_langgraph_s_config_and_the_result_reads_like_its_dict(compile_graph: Compile) -> None:
    graph = compile_graph(review_graph(), checkpointer=MemoryCheckpointer())
    config = {"configurable": {"thread_id": "1"}}
    paused = graph.invoke({"some_text": "original text"}, config)
    assert paused["some_text"] == "original text"
    assert [q.value for q in paused["__interrupt__"]] == [{"text_to_revise": "original text"}]
    result = graph.invoke(Command(resume="Edited text"), config)
    assert result["some_text"] == "Edited text" and "__interrupt__" not in result
    assert result.get("missing", "default") == "default"
    with pytest.raises(KeyError):
        result["missing"]


def test_recursion_limit_in_config_is_the_run_s_limit(compile_graph: Compile) -> None:
    def loop(state: State) -> dict[str, Any]:
        return {"some_text": state["some_text"] + "."}

    g: Graph[State] = Graph(state=State, returns="update")
    g.add_vertex(loop).add_edge(START, "loop").add_edge("loop", "loop")
    with pytest.raises(ag.RecursionLimitError, match="limit of 4"):
        compile_graph(g).invoke({"some_text": ""}, {"recursion_limit": 4})


def test_a_config_and_a_keyword_that_disagree_are_an_error(compile_graph: Compile) -> None:
    graph = compile_graph(review_graph(), checkpointer=MemoryCheckpointer())
    config = {"configurable": {"thread_id": "1"}}
    with pytest.raises(ag.ConfigError, match="thread_id is given twice"):
        graph.invoke({"some_text": "t"}, config, thread_id="2")
    assert graph.invoke({"some_text": "t"}, config, thread_id="1").status == "interrupted"
    with pytest.raises(ag.ConfigError, match="give the stream's mode once"):
        graph.stream({"some_text": "t"}, config, mode="values", stream_mode="updates")


@pytest.mark.parametrize(
    ("config", "says"),
    [
        ({"configurable": {"thread_id": "1", "user_id": "u"}}, r"pass 'user_id' in context="),
        ({"callbacks": []}, "config key 'callbacks' is not one actorgraph reads"),
        ({"configurable": "1"}, r"config\['configurable'\] must be a mapping"),
        ("thread-1", "config must be a mapping"),
    ],
)
def test_what_actorgraph_does_not_read_from_a_config_is_refused_saying_where_it_goes(
    compile_graph: Compile, config: Any, says: str
) -> None:
    graph = compile_graph(review_graph(), checkpointer=MemoryCheckpointer())
    with pytest.raises(ag.ConfigError, match=says):
        graph.invoke({"some_text": "t"}, config)
