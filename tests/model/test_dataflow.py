"""Explicit data flow: `add_vertex(inputs=, outputs=)` and `Graph(globals=)` (least privilege)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from shared import SharedList

import actorgraph as ag
from actorgraph.merge import append, by_key

Compile = Callable[..., ag.CompiledGraph]


def one(fn: Any, graph: ag.Graph | None = None, **options: Any) -> ag.Graph:
    g = graph if graph is not None else ag.Graph()
    g.add_vertex("v", fn, **options)
    g.add_edge(ag.START, "v")
    g.add_edge("v", ag.END)
    return g


def test_a_vertex_with_inputs_sees_only_those_keys_and_its_update_is_merged(compile_graph: Compile) -> None:
    seen = SharedList()

    def score(given: dict[str, Any]) -> dict[str, Any]:
        seen.append(given)
        return {"score": len(given["text"])}

    app = compile_graph(one(score, inputs=["text"]))
    result = app.invoke({"text": "hello", "secret": "s3cr3t", "score": 0})
    assert seen.copy() == [{"text": "hello"}]  # no `secret`, no `score`
    assert result.state == {"text": "hello", "secret": "s3cr3t", "score": 5}


def test_inputs_rename_and_read_globals_and_outputs_rename(compile_graph: Compile) -> None:
    seen = SharedList()

    def risk(given: dict[str, Any]) -> dict[str, Any]:
        seen.append(given)
        return {"verdict": "ok" if given["user"]["age"] >= given["rules"]["min_age"] else "too young"}

    graph = ag.Graph(globals={"rules": {"min_age": 18}})
    options = {"inputs": {"user": "flow.clean", "rules": "global.rules"}, "outputs": {"verdict": "risk"}}
    app = compile_graph(one(risk, graph, **options))
    result = app.invoke({"clean": {"age": 20}})
    assert seen.copy() == [{"user": {"age": 20}, "rules": {"min_age": 18}}]
    assert result.state == {"clean": {"age": 20}, "risk": "ok"}


def test_writing_an_undeclared_key_is_an_invalid_update_naming_the_vertex_and_key(
    compile_graph: Compile,
) -> None:
    app = compile_graph(one(lambda g: {"score": 1, "admin": True}, inputs=["text"], outputs=["score"]))
    with pytest.raises(
        ag.InvalidUpdateError, match=r"vertex 'v' wrote key 'admin', which its outputs do not"
    ):
        app.invoke({"text": "x"})


def test_a_command_update_goes_through_outputs_and_a_non_mapping_is_refused(compile_graph: Compile) -> None:
    def route(given: dict[str, Any]) -> ag.Command:
        return ag.Command(update={"label": given["n"] * 2}, goto=ag.END)

    app = compile_graph(
        one(route, inputs={"n": "count"}, outputs={"label": "doubled"}, destinations=[ag.END])
    )
    assert app.invoke({"count": 4}).state == {"count": 4, "doubled": 8}
    app = compile_graph(one(lambda g: "text", outputs=["x"]))
    with pytest.raises(ag.InvalidUpdateError, match=r"returns an update .* not a str"):
        app.invoke({})


def test_keys_the_state_lacks_are_left_out_and_reducers_apply(compile_graph: Compile) -> None:
    seen = SharedList()

    def add(given: dict[str, Any]) -> dict[str, Any]:
        seen.append(sorted(given))
        return {"log": [given.get("note", "none")]}

    graph = ag.Graph(merge=by_key({"log": append}))
    app = compile_graph(one(add, graph, inputs=["note", "log"], outputs=["log"]))
    assert app.invoke({"log": ["start"]}).state == {"log": ["start", "none"]}
    assert seen.copy() == [["log"]]


def test_an_on_error_handler_gets_the_same_view(compile_graph: Compile) -> None:
    seen = SharedList()

    def fail(given: dict[str, Any]) -> dict[str, Any]:
        raise ValueError("no")

    def fallback(given: dict[str, Any], error: BaseException) -> dict[str, Any]:
        seen.append(given)
        return {"out": "fallback"}

    app = compile_graph(one(fail, inputs=["a"], outputs=["out"], on_error=fallback))
    assert app.invoke({"a": 1, "b": 2}).state == {"a": 1, "b": 2, "out": "fallback"}
    assert seen.copy() == [{"a": 1}]


@pytest.mark.parametrize(
    ("options", "match"),
    [
        ({"inputs": {"r": "global.rules"}}, r"reads global.rules, which the graph does not define"),
        ({"inputs": "text"}, "inputs must be a list of keys or a mapping"),
        ({"inputs": {"a": "other.key"}}, "must be KEY, flow.KEY or global.KEY"),
        ({"outputs": {"a": "global.x"}}, "outputs write the run's state"),
        ({"outputs": [1]}, "entries must be strings"),
        (
            {"timout": 3},
            r"add_vertex has no option 'timout' \(did you mean 'timeout'\?\)",
        ),
    ],
)
def test_malformed_declarations_are_refused_when_added(options: dict[str, Any], match: str) -> None:
    with pytest.raises(ag.GraphValidationError, match=match):
        ag.Graph().add_vertex("v", lambda s: s, **options)


def test_a_subgraph_maps_its_state_with_input_and_output_not_inputs() -> None:
    inner = one(lambda s: s)
    with pytest.raises(ag.GraphValidationError, match="is a subgraph: map its state with input= and output="):
        ag.Graph().add_vertex("sub", inner, inputs=["a"])
