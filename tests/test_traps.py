"""The traps a new user falls into, as they wrote them: each ends with the right result or a clear error.

Each test here failed on the engine before issue 24: it lost data without a
word, or failed far from the mistake.
"""

from __future__ import annotations

import operator
from typing import Annotated, Any, TypedDict

import pytest

import actorgraph as ag
from actorgraph.merge import add, append, by_key, replace

# -- 1. reducers compose ---------------------------------------------------------------------------


class Squares(TypedDict):
    n: int
    items: Annotated[list[int], operator.add]


def squares(merge: Any) -> ag.Graph[Any]:
    g: ag.Graph[Any] = ag.Graph(state=Squares, merge=merge)
    g.add_vertex("work", lambda s: {**s, "items": [*s["items"], s["n"] ** 2]})
    g.add_conditional_edges(ag.START, lambda s: [ag.Send("work", {**s, "n": i}) for i in range(5)], ["work"])
    g.add_edge("work", ag.END)
    return g


def test_an_explicit_merge_keeps_the_schema_reducers(compile_graph: Any) -> None:
    state = compile_graph(squares(by_key({"n": replace}))).invoke({"n": 0, "items": []}).state
    assert sorted(state["items"]) == [0, 1, 4, 9, 16] and state["n"] == 4


def test_one_key_with_two_reducers_is_refused_when_the_graph_is_built() -> None:
    with pytest.raises(ag.GraphValidationError, match=r"'items' has two different reducers.*add.*replace"):
        squares(by_key({"items": replace})).compile()
    squares(by_key({"items": add})).compile().close()  # the same reducer twice is fine


def test_a_custom_merge_function_beside_schema_reducers_is_refused() -> None:
    with pytest.raises(ag.GraphValidationError, match=r"\['items'\].*custom merge function"):
        squares(lambda base, states: states[-1]).compile()


def test_a_merge_conflict_lists_every_value_and_suggests_a_reducer_that_keeps_them_all(
    compile_graph: Any,
) -> None:
    g: ag.Graph[Any] = ag.Graph()
    g.add_vertex("work", lambda s: {**s, "items": [s["n"] ** 2]})
    g.add_conditional_edges(ag.START, lambda s: [ag.Send("work", {**s, "n": i}) for i in range(25)], ["work"])
    g.add_edge("work", ag.END)
    g2 = ag.Graph(merge=by_key({"n": replace}))
    g2.add_vertex("work", lambda s: {**s, "items": [s["n"] ** 2]})
    g2.add_conditional_edges(
        ag.START, lambda s: [ag.Send("work", {**s, "n": i}) for i in range(25)], ["work"]
    )
    g2.add_edge("work", ag.END)
    with pytest.raises(ag.MergeConflictError) as caught:
        compile_graph(g2).invoke({"n": 0, "items": []})
    text = str(caught.value)
    assert caught.value.key == "items" and len(caught.value.values) == 25
    assert "[16]" in text and "[361]" in text and "and 5 more" in text  # 20 listed, and a count
    assert text.index("append") < text.index("replace")  # the reducer that keeps all comes first
    assert "keeps only the last" in text


# -- 2. a partial return never deletes the rest ------------------------------------------------------


def test_a_vertex_returning_part_of_the_state_is_told_instead_of_deleting_the_rest(
    compile_graph: Any,
) -> None:
    g: ag.Graph[Any] = ag.Graph()
    g.add_vertex("a", lambda s: {"b": 1})
    g.add_edge(ag.START, "a")
    g.add_edge("a", ag.END)
    with pytest.raises(ag.InvalidUpdateError) as caught:
        compile_graph(g).invoke({"x": 1, "y": 2})
    text = str(caught.value)
    assert "'x', 'y'" in text and "{**state" in text and "returns='update'" in text


def test_returns_update_keeps_the_rest_and_returns_state_deletes_on_purpose(compile_graph: Any) -> None:
    for returns, expected in (("update", {"x": 1, "y": 2, "b": 1}), ("state", {"b": 1})):
        g: ag.Graph[Any] = ag.Graph()
        g.add_vertex("a", lambda s: {"b": 1}, returns=returns)
        g.add_edge(ag.START, "a")
        g.add_edge("a", ag.END)
        assert compile_graph(g).invoke({"x": 1, "y": 2}).state == expected
    g = ag.Graph(returns="state")  # said for the whole graph
    g.add_vertex("a", lambda s: {"b": 1})
    g.add_edge(ag.START, "a")
    g.add_edge("a", ag.END)
    assert compile_graph(g).invoke({"x": 1}).state == {"b": 1}


# -- 4. interrupt() and breakpoints need a checkpointer ------------------------------------------------


def test_interrupt_without_a_checkpointer_is_refused_at_the_call(compile_graph: Any) -> None:
    g: ag.Graph[Any] = ag.Graph()
    g.add_vertex("ask", lambda s: {**s, "answer": ag.interrupt("ok?")})
    g.add_edge(ag.START, "ask")
    g.add_edge("ask", ag.END)
    with pytest.raises(ag.ConfigError, match=r"vertex 'ask'.*checkpointer.*thread_id"):
        compile_graph(g).invoke({})


def test_breakpoints_without_a_checkpointer_are_refused_when_the_run_starts(compile_graph: Any) -> None:
    g: ag.Graph[Any] = ag.Graph()
    g.add_vertex("a", lambda s: s)
    g.add_edge(ag.START, "a")
    g.add_edge("a", ag.END)
    for key in ("interrupt_before", "interrupt_after"):
        with pytest.raises(ag.ConfigError, match=rf"{key}.*checkpointer"):
            compile_graph(g).invoke({}, **{key: ["a"]})
        with pytest.raises(ag.ConfigError, match=rf"{key}.*checkpointer"):
            compile_graph(g, **{key: ["a"]}).invoke({})


# -- builder arguments -------------------------------------------------------------------------------


@pytest.mark.parametrize("bad", [123, None, "", b"a", ["a"]])
def test_a_vertex_name_that_is_not_a_string_is_refused_naming_the_call(bad: Any) -> None:
    g: ag.Graph[Any] = ag.Graph()
    g.add_vertex("a", lambda s: s)
    if not isinstance(bad, list):  # a list of sources is a join
        with pytest.raises(ag.GraphValidationError, match=r"add_edge.*source"):
            g.add_edge(bad, "a")
    with pytest.raises(ag.GraphValidationError, match=r"add_edge.*target"):
        g.add_edge("a", bad)
    with pytest.raises(ag.GraphValidationError, match=r"add_vertex.*name"):
        g.add_vertex(bad, lambda s: s)
    with pytest.raises(ag.GraphValidationError, match=r"add_conditional_edges.*source"):
        g.add_conditional_edges(bad, lambda s: "a")


def test_a_join_with_a_bad_source_is_refused_naming_the_call() -> None:
    g: ag.Graph[Any] = ag.Graph()
    g.add_vertex("a", lambda s: s)
    with pytest.raises(ag.GraphValidationError, match=r"add_edge.*source"):
        g.add_edge(["a", 7], "a")


# keep names used only in some tests referenced, for linters
_ = (append,)
