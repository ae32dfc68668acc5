"""LangGraph's builder idioms as its guides write them: `Command[Literal[...]]`, `add_node(fn)`, sequences.

This module has no `from __future__ import annotations` on purpose: the guides
do not write it, so a return annotation `Command[Literal["b", "c"]]` is
evaluated when the function is defined (it was a `TypeError` at import).
Each graph is the guide's, with the one-line change `from-langgraph.md` names
(a vertex with no way out gets an edge to END).
"""

import random
from typing import Any

import pytest
from typing_extensions import Literal, TypedDict  # noqa: UP035 - as the guide imports them

import actorgraph as ag
from actorgraph import END, START, Command, Graph

# -- "How to combine control flow and state updates with Command" ---------------------------------


class State(TypedDict):
    foo: str


def node_a(state: State) -> Command[Literal["node_b", "node_c"]]:
    value = random.choice(["a", "b"])
    goto = "node_b" if value == "a" else "node_c"
    return Command(update={"foo": value}, goto=goto)


def node_b(state: State) -> dict[str, Any]:
    return {"foo": state["foo"] + "b"}


def node_c(state: State) -> dict[str, Any]:
    return {"foo": state["foo"] + "c"}


def command_graph() -> Graph[State]:
    builder: Graph[State] = Graph(state=State, returns="update")
    builder.add_edge(START, "node_a")
    builder.add_vertex(node_a)
    builder.add_vertex(node_b)
    builder.add_vertex(node_c)
    # NOTE: there are no edges between nodes A, B and C!
    builder.add_edge("node_b", END)  # the one-line difference: a vertex with no way out is refused
    builder.add_edge("node_c", END)
    return builder


def test_a_command_annotated_with_its_destinations_routes_without_edges(compile_graph: Any) -> None:
    graph = compile_graph(command_graph())
    for _ in range(6):
        assert graph.invoke({"foo": ""}).state["foo"] in ("ab", "bc")


def test_the_annotation_declares_the_destinations_for_validation_and_drawing(compile_graph: Any) -> None:
    graph = compile_graph(command_graph())
    assert graph.spec.vertices["node_a"].destinations == ("node_b", "node_c")
    drawn = graph.draw_mermaid()
    assert 'v0 -.->|"goto"| v1' in drawn and 'v0 -.->|"goto"| v2' in drawn


def test_command_is_generic_and_command_parent_is_parent() -> None:
    assert Command[Literal["a"]].__origin__ is Command  # type: ignore[attr-defined]
    assert Command.PARENT == ag.PARENT


def test_a_union_of_a_command_and_an_update_declares_the_command_s_destinations() -> None:
    def maybe(state: State) -> Command[Literal["node_b"]] | dict[str, Any]:
        return {}

    g: Graph[State] = Graph(state=State)
    g.add_vertex(maybe)
    assert g._vertices["maybe"].destinations == ("node_b",)


def test_destinations_given_win_over_the_annotation() -> None:
    g: Graph[State] = Graph(state=State)
    g.add_vertex(node_a, destinations=["node_b"])
    assert g._vertices["node_a"].destinations == ("node_b",)


def test_a_goto_outside_the_annotation_is_refused_at_run_time(compile_graph: Any) -> None:
    def wanders(state: State) -> Command[Literal["node_b"]]:
        return Command(goto="node_c")

    builder: Graph[State] = Graph(state=State, returns="update")
    builder.add_edge(START, "wanders")
    builder.add_sequence([wanders])
    builder.add_vertex(node_b).add_vertex(node_c)
    builder.add_edge("node_b", END).add_edge("node_c", END).add_edge(START, "node_c")
    refused = r"returned Command\(goto=.node_c.\), but its destinations are \[.node_b.\]"
    with pytest.raises(ag.RoutingError, match=refused):
        compile_graph(builder).invoke({"foo": ""})


# -- add_node(fn) and add_sequence (the Graph API guide) -------------------------------------------


def step_1(state: State) -> dict[str, Any]:
    return {"foo": state["foo"] + "1"}


def step_2(state: State) -> dict[str, Any]:
    return {"foo": state["foo"] + "2"}


def step_3(state: State) -> dict[str, Any]:
    return {"foo": state["foo"] + "3"}


def test_add_sequence_builds_a_chain_named_after_the_functions(compile_graph: Any) -> None:
    graph_builder: Graph[State] = Graph(state=State, returns="update").add_sequence([step_1, step_2, step_3])
    graph_builder.add_edge(START, "step_1")
    graph_builder.add_edge("step_3", END)  # the one-line difference
    graph = compile_graph(graph_builder)
    assert list(graph.spec.vertices) == ["step_1", "step_2", "step_3"]
    assert graph.invoke({"foo": ""}).state == {"foo": "123"}


def test_add_sequence_takes_name_and_function_pairs(compile_graph: Any) -> None:
    builder: Graph[State] = Graph(state=State, returns="update")
    builder.add_sequence([("first", step_1), ("again", step_1)])
    builder.add_edge(START, "first").add_edge("again", END)
    assert compile_graph(builder).invoke({"foo": ""}).state == {"foo": "11"}


def test_add_sequence_refuses_a_name_twice_and_says_how_to_name_them() -> None:
    with pytest.raises(ag.GraphValidationError, match=r"'step_1' exists already; name each step"):
        Graph().add_sequence([step_1, step_1])
    with pytest.raises(ag.GraphValidationError, match="non-empty list"):
        Graph().add_sequence([])


def test_a_compiled_graph_is_named_by_its_name_as_a_vertex(compile_graph: Any) -> None:
    inner: Graph[State] = Graph(state=State, returns="update", name="research_agent")
    inner.add_vertex(step_1).add_edge(START, "step_1").add_edge("step_1", END)
    outer: Graph[State] = Graph(state=State, returns="update")
    outer.add_vertex(inner.compile())
    outer.add_edge(START, "research_agent").add_edge("research_agent", END)
    assert compile_graph(outer).invoke({"foo": ""}).state == {"foo": "1"}


def test_a_lambda_without_a_name_is_a_clear_error() -> None:
    with pytest.raises(ag.GraphValidationError, match=r"a lambda has no name.*add_vertex\('name', lambda"):
        Graph().add_vertex(lambda state: state)
    with pytest.raises(ag.GraphValidationError, match="a lambda has no name"):
        Graph().add_sequence([lambda state: state])


def test_a_name_without_a_function_is_a_clear_error() -> None:
    with pytest.raises(ag.GraphValidationError, match=r"add_vertex\('alone'\) has no function"):
        Graph().add_vertex("alone")
