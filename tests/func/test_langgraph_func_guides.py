"""LangGraph's functional-API guides rewritten for actorgraph: streams, state, custom data, injections.

The code is the guides' with the imports changed (and `thread_id=` where a
guide reads the thread's state: our `get_state` takes the thread's id), and
each assertion is the output the guide prints, LangGraph's exactly: a task
call streams `{task: result}` as it finishes, the entrypoint's return value
comes last, and the thread's state is the return value.
"""

from __future__ import annotations

import asyncio
from typing import Any, TypedDict

import pytest

from actorgraph import END, START, Command, Graph, StreamWriter, get_stream_writer, interrupt
from actorgraph.checkpoint import MemoryCheckpointer
from actorgraph.func import entrypoint, task
from actorgraph.func._task import close_task_graphs

ON_THREADS = pytest.mark.threads_only("an entrypoint whose function calls a task is refused on Ray")


def test_an_entrypoint_is_given_a_writer_as_langgraph_injects_it() -> None:
    checkpointer = MemoryCheckpointer()

    @entrypoint(checkpointer=checkpointer)
    def main(inputs: dict[str, Any], writer: StreamWriter) -> int:
        writer("Started processing")
        result = inputs["x"] * 2
        writer(f"Result is {result}")
        return result

    config = {"configurable": {"thread_id": "abc"}}
    with main:
        chunks = list(main.stream({"x": 5}, stream_mode=["custom", "updates"], config=config))
        assert chunks == [
            ("custom", "Started processing"),
            ("custom", "Result is 10"),
            ("updates", {"main": 10}),
        ]
        assert main.invoke({"x": 6}, {"configurable": {"thread_id": "def"}}).state == 12


@task
def call_tool(x: int) -> int:
    writer = get_stream_writer()
    writer({"progress": f"working on {x}"})
    return x + 1


@ON_THREADS
def test_a_task_s_get_stream_writer_streams_as_the_entrypoint_s() -> None:
    @entrypoint(checkpointer=MemoryCheckpointer())
    def workflow(numbers: list[int]) -> list[int]:
        get_stream_writer()({"progress": "started"})
        return [future.result() for future in [call_tool(n) for n in numbers]]

    with workflow:
        custom = list(workflow.stream([1], {"configurable": {"thread_id": "1"}}, stream_mode="custom"))
        assert custom == [{"progress": "started"}, {"progress": "working on 1"}]
        tagged = list(workflow.stream([2], thread_id="2", mode="custom", subgraphs=True))
        assert tagged == [((), {"progress": "started"}), ((), {"progress": "working on 2"})]


def test_an_entrypoint_is_given_its_context_and_config() -> None:
    @entrypoint(checkpointer=MemoryCheckpointer())
    def greet(name: str, *, context: dict[str, str], config: dict[str, Any]) -> str:
        return f"{context['greeting']}, {name} (thread {config['configurable']['thread_id']})"

    with greet:
        given = greet.invoke("Ada", thread_id="t", context={"greeting": "Hello"})
    assert given.state == "Hello, Ada (thread t)"


def test_the_async_stream_of_an_entrypoint_takes_langgraph_s_spellings() -> None:
    @entrypoint(checkpointer=MemoryCheckpointer())
    async def main(x: int, writer: StreamWriter) -> int:
        writer("async")
        return x

    async def streamed() -> list[Any]:
        return [c async for c in main.astream(1, {"configurable": {"thread_id": "a"}}, stream_mode="custom")]

    with main:
        assert asyncio.run(streamed()) == ["async"]


# -- "Use the functional API": human-in-the-loop ------------------------------------------------------


@task
def step_1(input_query: str) -> str:
    """Append bar."""
    return f"{input_query} bar"


@task
def human_feedback(input_query: str) -> str:
    """Append user input."""
    feedback = interrupt(f"Please provide feedback: {input_query}")
    return f"{input_query} {feedback}"


@task
def step_3(input_query: str) -> str:
    """Append qux."""
    return f"{input_query} qux"


def feedback_graph() -> Any:
    checkpointer = MemoryCheckpointer()

    @entrypoint(checkpointer=checkpointer)
    def graph(input_query: str) -> str:
        result_1 = step_1(input_query).result()
        result_2 = human_feedback(result_1).result()
        return step_3(result_2).result()

    return graph


@ON_THREADS
def test_the_human_in_the_loop_guide_streams_each_task_then_the_question_then_the_rest() -> None:
    graph = feedback_graph()
    config = {"configurable": {"thread_id": "1"}}
    with graph:
        first = list(graph.stream("foo", config))
        (question,) = first[-1]["__interrupt__"]
        assert first == [{"step_1": "foo bar"}, {"__interrupt__": (question,)}]
        assert question.value == "Please provide feedback: foo bar"
        assert graph.get_state("1").state is None  # nothing returned yet, as LangGraph's `values`
        assert list(graph.stream(Command(resume="baz"), config)) == [
            {"human_feedback": "foo bar baz"},
            {"step_3": "foo bar baz qux"},
            {"graph": "foo bar baz qux"},
        ]
        snapshot = graph.get_state("1")
        assert (snapshot.state, snapshot.next) == ("foo bar baz qux", ())
        assert [past.state for past in graph.get_history("1")] == ["foo bar baz qux", None]


@ON_THREADS
def test_the_human_in_the_loop_guide_streamed_async_with_subgraphs_and_values() -> None:
    """`astream`, `subgraphs=True` (the task calls are the entrypoint's tasks: `()`), and `values`."""
    graph = feedback_graph()
    config = {"configurable": {"thread_id": "1"}}

    async def scenario() -> tuple[list[Any], list[Any]]:
        first = [
            c async for c in graph.astream("foo", config, subgraphs=True, stream_mode=["updates", "values"])
        ]
        resumed = [c async for c in graph.astream(Command(resume="baz"), config, stream_mode="values")]
        return first, resumed

    with graph:
        first, resumed = asyncio.run(scenario())
    (question,) = first[-1][2]["__interrupt__"]
    assert first == [
        ((), "updates", {"step_1": "foo bar"}),
        ((), "updates", {"__interrupt__": (question,)}),
        (
            (),
            "values",
            {"__interrupt__": (question,)},
        ),  # no state beside the question: it returned nothing yet
    ]
    # values: the return value, once (LangGraph's resumed stream first repeats the thread's value, None)
    assert resumed == ["foo bar baz qux"]


# -- "Use the functional API": short-term memory, entrypoint.final --------------------------------------


def test_the_final_guide_returns_one_value_and_saves_another() -> None:
    checkpointer = MemoryCheckpointer()

    @entrypoint(checkpointer=checkpointer)
    def my_workflow(number: int, *, previous: Any = None) -> entrypoint.final[int, int]:
        previous = previous or 0
        # This will return the previous value to the caller, saving
        # 2 * number to the checkpoint, which will be used in the next invocation
        # for the `previous` parameter.
        return entrypoint.final(value=previous, save=2 * number)

    config = {"configurable": {"thread_id": "1"}}
    with my_workflow:
        assert my_workflow.invoke(3, config).state == 0  # (previous was None)
        assert my_workflow.invoke(1, config).state == 6  # (previous was 3 * 2 from the previous invocation)
        assert my_workflow.get_state("1").state == 6  # the value returned, not the one saved
        assert list(my_workflow.stream(5, config)) == [{"my_workflow": 2}]
        my_workflow.update_state("1", entrypoint.final(value=-1, save=100))  # as LangGraph's update_state
        assert my_workflow.get_state("1").state == -1
        assert my_workflow.invoke(7, config).state == 100


@ON_THREADS
def test_the_short_term_memory_guide_reads_previous_and_the_thread_s_state() -> None:
    checkpointer = MemoryCheckpointer()

    @task
    def call_model(messages: list[str]) -> str:
        return f"reply to {messages[-1]}"

    @entrypoint(checkpointer=checkpointer)
    def workflow(inputs: list[str], *, previous: list[str] | None = None) -> entrypoint.final[str, list[str]]:
        messages = [*(previous or []), *inputs]
        response = call_model(messages).result()
        return entrypoint.final(value=response, save=[*messages, response])

    config = {"configurable": {"thread_id": "1"}}
    with workflow:
        assert list(workflow.stream(["hi! I'm bob"], config, stream_mode="values")) == [
            "reply to hi! I'm bob"
        ]
        assert workflow.invoke(["what's my name?"], config).state == "reply to what's my name?"
        assert workflow.get_state("1").state == "reply to what's my name?"
        assert [past.state for past in workflow.get_history("1")] == [
            "reply to what's my name?",
            "reply to hi! I'm bob",  # a new input's checkpoint shows the thread's value as it was
            "reply to hi! I'm bob",
            None,
        ]


# -- tasks and entrypoints inside graphs ("Use the functional API": integration with the graph API) ------


class XState(TypedDict):
    x: int


@task
def double(x: int) -> int:
    return 2 * x


def one_vertex(name: str, vertex: Any) -> Graph[XState]:
    graph: Graph[XState] = Graph(state=XState, returns="update")
    graph.add_vertex(name, vertex)
    graph.add_edge(START, name)
    graph.add_edge(name, END)
    return graph


def node(state: XState) -> dict[str, int]:
    return {"x": double(state["x"]).result()}


@pytest.mark.threads_only("a vertex whose code calls a task is refused on Ray")
def test_a_task_called_in_a_graph_s_vertex_is_one_of_its_tasks() -> None:
    try:
        with one_vertex("node", node).compile() as graph:
            assert list(graph.stream({"x": 2}, stream_mode="updates")) == [{"double": 4}, {"node": {"x": 4}}]
            assert list(graph.stream({"x": 2}, stream_mode="updates", subgraphs=True)) == [
                ((), {"double": 4}),
                ((), {"node": {"x": 4}}),
            ]
    finally:
        close_task_graphs()  # with no entrypoint open, a task's actors go when its function does


@ON_THREADS
def test_an_entrypoint_as_a_vertex_streams_its_tasks_and_value_in_its_namespace() -> None:
    @entrypoint()
    def inner(state: XState) -> XState:
        return {"x": double(state["x"]).result() + 1}

    with inner, one_vertex("inner", inner).compile() as graph:
        assert list(graph.stream({"x": 2}, stream_mode="updates")) == [{"inner": {"x": 5}}]
        items = list(graph.stream({"x": 2}, stream_mode=["updates", "values"], subgraphs=True))
    # LangGraph names the namespace ("inner:<task id>",); ours ("inner@1~<digest>",)
    assert [(len(ns), mode, item) for ns, mode, item in items] == [
        (0, "values", {"x": 2}),
        (1, "updates", {"double": 4}),
        (1, "updates", {"inner": {"x": 5}}),
        (1, "values", {"x": 5}),
        (0, "updates", {"inner": {"x": 5}}),
        (0, "values", {"x": 5}),
    ]


@ON_THREADS
def test_a_graph_invoked_in_an_entrypoint_streams_with_subgraphs_only() -> None:
    with one_vertex("node", node).compile() as graph:

        @entrypoint()
        def outer(x: int) -> XState:
            return graph.invoke({"x": x}).state

        with outer:
            assert list(outer.stream(3, stream_mode="updates")) == [{"outer": {"x": 6}}]
            items = list(outer.stream(3, stream_mode="updates", subgraphs=True))
    assert [(len(ns), item) for ns, item in items] == [
        (1, {"double": 6}),
        (1, {"node": {"x": 6}}),
        (0, {"outer": {"x": 6}}),
    ]
