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
import dataclasses
from typing import Any, NotRequired, TypedDict

import pytest

import actorgraph as ag
from actorgraph import END, START, Command, Graph, IsLastStep, RemainingSteps, get_stream_writer, interrupt
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


# -- "How to return state before hitting the recursion limit" (RemainingSteps) ---------------------


class LoopState(TypedDict):
    value: str
    action_result: NotRequired[str]  # the one-line difference: a key the first input does not give
    remaining_steps: RemainingSteps


def router(state: LoopState) -> str:
    # Force the agent to end
    if state["remaining_steps"] <= 2:
        return END
    if state["value"] == "end":
        return END
    return "action"


def decision_node(state: LoopState) -> dict[str, Any]:
    return {"value": "keep going!"}


def action_node(state: LoopState) -> dict[str, Any]:
    # Do your action here ...
    return {"action_result": "what a great result!"}


def loop_graph() -> Graph[LoopState]:
    workflow: Graph[LoopState] = Graph(state=LoopState, returns="update")
    workflow.add_vertex("decision", decision_node)
    workflow.add_vertex("action", action_node)
    workflow.add_edge(START, "decision")
    workflow.add_conditional_edges("decision", router, ["action", END])
    workflow.add_edge("action", "decision")
    return workflow


def test_a_loop_ends_itself_with_its_state_before_the_recursion_limit(compile_graph: Compile) -> None:
    app = compile_graph(loop_graph(), checkpointer=MemoryCheckpointer())
    result = app.invoke({"value": "hi!"}, {"recursion_limit": 25, "configurable": {"thread_id": "1"}})
    assert result.state == {"value": "keep going!", "action_result": "what a great result!"}
    assert result.step == 23  # decision ran with 24, 22, ..., 2 steps left: the last has 2
    assert "remaining_steps" not in app.get_state("1").state  # filled for the vertices, never stored


class Seen(TypedDict):
    seen: list[list[int]]
    remaining_steps: RemainingSteps


def counted(state: Seen, ctx: ag.Context[Any]) -> Seen:
    # a whole state, given back with the managed key: it is dropped, never stored
    return {**state, "seen": [*state["seen"], [state["remaining_steps"], ctx.remaining_steps]]}


def test_the_vertices_see_the_steps_left_and_none_is_ever_stored(compile_graph: Compile) -> None:
    g: Graph[Seen] = Graph(state=Seen)
    g.add_vertex("loop", counted)
    g.add_edge(START, "loop")
    g.add_conditional_edges("loop", lambda s: END if s["remaining_steps"] == 0 else "loop", ["loop", END])
    items = list(compile_graph(g).stream({"seen": []}, recursion_limit=4, stream_mode="values"))
    assert items[-1]["seen"] == [[3, 3], [2, 2], [1, 1], [0, 0]]  # as LangGraph's: 0 in the last superstep
    assert all("remaining_steps" not in item for item in items)


def test_is_last_step_is_true_in_the_last_superstep_the_limit_allows(compile_graph: Compile) -> None:
    class Last(TypedDict):
        laps: int
        is_last_step: IsLastStep

    g: Graph[Last] = Graph(state=Last, returns="update")
    g.add_vertex("lap", lambda s: {"laps": s["laps"] + 1})
    g.add_edge(START, "lap")
    g.add_conditional_edges("lap", lambda s: END if s["is_last_step"] else "lap", ["lap", END])
    assert compile_graph(g).invoke({"laps": 0}, recursion_limit=3).state == {"laps": 3}


def test_an_input_that_sets_a_managed_key_is_refused(compile_graph: Compile) -> None:
    with pytest.raises(ag.InvalidUpdateError, match=r"\['remaining_steps'\] are filled by the engine"):
        compile_graph(loop_graph()).invoke({"value": "v", "remaining_steps": 3})


def test_remaining_steps_in_a_dataclass_state_is_refused_naming_ctx_remaining_steps() -> None:
    @dataclasses.dataclass
    class Steps:
        value: str
        remaining_steps: RemainingSteps = 0

    g: Graph[Steps] = Graph(state=Steps)
    g.add_vertex("a", lambda s: s).add_edge(START, "a").add_edge("a", END)
    with pytest.raises(ag.GraphValidationError, match=r"Steps.remaining_steps .* reads ctx.remaining_steps"):
        g.compile()


# -- "How to stream custom data" (get_stream_writer) -----------------------------------------------


class Answer(TypedDict):
    query: str
    answer: NotRequired[str]


def node(state: Answer) -> dict[str, Any]:
    writer = get_stream_writer()
    writer({"custom_key": "Generating custom data inside node"})
    return {"answer": "some data"}


def test_a_vertex_streams_custom_data_with_get_stream_writer(compile_graph: Compile) -> None:
    builder: Graph[Answer] = Graph(state=Answer, returns="update")
    builder.add_vertex(node).add_edge(START, "node").add_edge("node", END)
    graph = compile_graph(builder)
    inputs = {"query": "example"}
    assert list(graph.stream(inputs, stream_mode="custom")) == [
        {"custom_key": "Generating custom data inside node"}
    ]
    assert [mode for mode, _ in graph.stream(inputs, stream_mode=["custom", "updates"])] == [
        "custom",
        "updates",
    ]


def test_get_stream_writer_outside_a_run_writes_nowhere() -> None:
    get_stream_writer()({"nobody": "listens"})
