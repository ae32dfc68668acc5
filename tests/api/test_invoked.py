"""Which graphs a vertex's code invokes (`_api/invoked.py`), as reading nested runs and Ray's check need.

The graphs, tasks and entrypoints a function's code names are found (its
closure, the globals it names, default arguments, partials, the attributes of
`self` a method names, a callable object's), as LangGraph finds a node's
subgraphs; an object merely held, and a graph built in the call, are not.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from typing import Any

import pytest

import actorgraph as ag
from actorgraph._api.invoked import invocables, invoked_spec, remember
from actorgraph.func import task

Compile = Callable[..., ag.CompiledGraph[Any]]


@task
def shout(text: str) -> str:
    return text.upper()


def vertex_calling_a_module_task(state: dict[str, Any]) -> dict[str, Any]:
    return {"said": shout(state["text"]).result()}


@pytest.fixture
def inner() -> Iterator[ag.CompiledGraph[Any]]:
    g: ag.Graph = ag.Graph(name="inner")
    g.add_vertex("keep", lambda state: state)
    g.add_edge(ag.START, "keep")
    g.add_edge("keep", ag.END)
    with g.compile() as compiled:
        yield compiled


class Holder:
    """Holds a graph; `run` invokes it, `count` does not name it."""

    def __init__(self, graph: Any) -> None:
        self.graph = graph
        self.n = 1

    def run(self, state: dict[str, Any]) -> Any:
        return self.graph.invoke(state).state

    def count(self, state: dict[str, Any]) -> Any:
        return {**state, "n": self.n}

    def __call__(self, state: dict[str, Any]) -> Any:
        return self.graph.invoke(state).state


def test_what_a_function_names_is_found(inner: ag.CompiledGraph[Any]) -> None:
    graphs = [inner]

    def closure(state: Any) -> Any:
        return inner.invoke(state).state

    def default(state: Any, graph: Any = inner) -> Any:
        return graph.invoke(state).state

    def listed(state: Any) -> Any:
        return graphs[0].invoke(state).state

    def through_a_helper(state: Any) -> Any:
        return closure(state)

    cases = {
        "closure": closure,
        "default": default,
        "listed": listed,
        "helper": through_a_helper,
        "partial": functools.partial(default, graph=inner),
        "method": Holder(inner).run,
        "callable": Holder(inner),
    }
    assert {name: invocables(fn) for name, fn in cases.items()} == {name: [inner] for name in cases}
    assert invocables(vertex_calling_a_module_task) == [shout]


def test_what_a_function_does_not_name_is_not_found(inner: ag.CompiledGraph[Any]) -> None:
    def built_in_the_call(state: Any) -> Any:
        g: ag.Graph = ag.Graph(name="inner")
        g.add_vertex("keep", lambda s: s)
        with g.compile() as made:
            return made.invoke(state).state

    assert invocables(Holder(inner).count) == []  # the object holds a graph its method never names
    assert invocables(built_in_the_call) == []
    assert invocables(lambda state: {**state, "answer": ag.interrupt("?")}) == []


def test_the_graph_seen_running_comes_first_else_the_one_graph_of_that_name(
    compile_graph: Compile, inner: ag.CompiledGraph[Any]
) -> None:
    def invokes(state: Any) -> Any:
        return inner.invoke(state).state

    assert invoked_spec(invokes, "inner", "inner") is inner.spec  # found in its code
    assert invoked_spec(invokes, "inner", "inner~1") is None  # a second graph of that name: not this one
    assert invoked_spec(invokes, "other", "other") is None
    other = compile_graph(
        ag.Graph(name="inner").add_vertex("v", lambda s: s).add_edge(ag.START, "v").add_edge("v", ag.END)
    )
    remember(invokes, "inner~1", other.spec)  # seen running in this process
    assert invoked_spec(invokes, "inner", "inner~1") is other.spec
