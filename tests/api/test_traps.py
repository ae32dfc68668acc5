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


# -- 5. schemas keep their meaning ---------------------------------------------------------------------


def test_a_schema_annotation_that_cannot_be_resolved_is_refused_naming_the_field(
    tmp_path: Any, monkeypatch: Any
) -> None:
    (tmp_path / "user_schema.py").write_text(  # a module written as users write it: postponed annotations
        "from __future__ import annotations\n"
        "import operator\n"
        "from typing import Annotated, TypedDict\n"
        "class S(TypedDict):\n"
        "    items: Annotated[list, operator.add]\n"
        "    other: Nope\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    import user_schema  # type: ignore[import-not-found]

    g: ag.Graph[Any] = ag.Graph(state=user_schema.S)
    g.add_vertex("a", lambda s: s)
    g.add_edge(ag.START, "a")
    g.add_edge("a", ag.END)
    with pytest.raises(ag.GraphValidationError, match=r"field 'other'.*cannot be resolved.*Nope"):
        g.compile()


def test_a_pydantic_validator_runs_once_per_value() -> None:
    import pydantic

    class Person(pydantic.BaseModel):
        name: str
        visits: int = 0

        @pydantic.field_validator("name")
        @classmethod
        def title(cls, value: str) -> str:
            return f"Validated {value}"

    g: ag.Graph[Any] = ag.Graph(state=Person, returns="update")
    g.add_vertex("a", lambda s: {"visits": s.visits + 1})
    g.add_vertex("b", lambda s: s.model_copy(update={"visits": s.visits + 1}), returns="state")
    g.add_edge(ag.START, "a")
    g.add_edge("a", "b")
    g.add_edge("b", ag.END)
    from actorgraph.checkpoint import MemoryCheckpointer, PickleSerializer

    with g.compile(checkpointer=MemoryCheckpointer(PickleSerializer())) as app:
        state = app.invoke({"name": "John"}, thread_id="p").state
        assert state.name == "Validated John" and state.visits == 2
        app.update_state("p", {"visits": 5})
        assert app.get_state("p").state.name == "Validated John"
        app.update_state("p", {"name": "Ann"})  # a new value enters: validated once
        assert app.get_state("p").state.name == "Validated Ann"


# -- 6. results say what the store says -----------------------------------------------------------------


def test_a_result_lists_every_question_of_a_subgraph_task(compile_graph: Any, store: Any) -> None:
    inner: ag.Graph[Any] = ag.Graph(merge=by_key({"answers": append}))
    for name in ("left", "right"):
        inner.add_vertex(name, lambda s, n=name: {**s, "answers": [ag.interrupt(f"{n}?")]})
        inner.add_edge(ag.START, name)
        inner.add_edge(name, ag.END)
    outer: ag.Graph[Any] = ag.Graph()
    outer.add_vertex("ask", inner)
    outer.add_edge(ag.START, "ask")
    outer.add_edge("ask", ag.END)
    app = compile_graph(outer, checkpointer=store)
    result = app.invoke({"answers": []}, thread_id="q")
    assert sorted(i.value for i in result.interrupts) == ["left?", "right?"]
    assert result.interrupts == app.get_state("q").interrupts


def test_durability_exit_labels_the_final_checkpoint_as_the_loop_s(compile_graph: Any, store: Any) -> None:
    g: ag.Graph[Any] = ag.Graph()
    g.add_vertex("a", lambda s: {**s, "n": 1})
    g.add_vertex("b", lambda s: {**s, "n": 2})
    g.add_edge(ag.START, "a")
    g.add_edge("a", "b")
    g.add_edge("b", ag.END)
    app = compile_graph(g, checkpointer=store)
    app.invoke({"n": 0}, thread_id="e", durability="exit")
    assert [(s.source, s.step) for s in app.get_history("e")] == [("loop", 2)]


def test_two_snapshots_of_one_checkpoint_compare_equal(compile_graph: Any, store: Any) -> None:
    g: ag.Graph[Any] = ag.Graph()
    g.add_vertex("x", lambda s: s)
    g.add_vertex("ask", lambda s: {**s, "a": ag.interrupt("q")})
    for name in ("x", "ask"):
        g.add_edge(ag.START, name)
        g.add_edge(name, ag.END)
    app = compile_graph(g, checkpointer=store)
    app.invoke({"n": 1}, thread_id="s")
    assert app.get_state("s") == app.get_state("s")
    assert app.get_history("s") == app.get_history("s")
