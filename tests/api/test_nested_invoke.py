"""A compiled graph invoked inside a vertex function nests in the invoking task's run (issue 27, item 4)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest

import actorgraph as ag
from actorgraph.checkpoint import MemoryCheckpointer, SqliteCheckpointer

pytestmark = pytest.mark.threads_only(
    "the counters live in this process; on Ray a vertex that invokes graphs is refused (tests/ray)"
)

Compile = Any


def _inner(runs: Counter[str]) -> ag.Graph:
    def bump(state: dict[str, Any]) -> dict[str, Any]:
        runs["bump"] += 1
        return {**state, "n": state["n"] + 1}

    def ask(state: dict[str, Any]) -> dict[str, Any]:
        runs["ask"] += 1
        return {**state, "n": state["n"] + ag.interrupt({"add to": state["n"]})}

    g = ag.Graph(name="inner")
    g.add_vertex("bump", bump)
    g.add_vertex("ask", ask)
    g.add_edge(ag.START, "bump")
    g.add_edge("bump", "ask")
    g.add_edge("ask", ag.END)
    return g


def _outer(inner: ag.CompiledGraph, runs: Counter[str], given: dict[str, Any] | None = None) -> ag.Graph:
    def outer(state: dict[str, Any]) -> dict[str, Any]:
        runs["outer"] += 1
        start = (given or {}).get("n", state["n"])
        return {**state, "n": inner.invoke({"n": start}).state["n"] * 10}

    g = ag.Graph(name="outer")
    g.add_vertex("outer", outer)
    g.add_edge(ag.START, "outer")
    g.add_edge("outer", ag.END)
    return g


def test_an_interrupt_inside_pauses_the_parent_and_the_parent_answers_it(compile_graph: Compile) -> None:
    runs: Counter[str] = Counter()
    inner = compile_graph(_inner(runs))
    app = compile_graph(_outer(inner, runs), checkpointer=MemoryCheckpointer())
    paused = app.invoke({"n": 1}, thread_id="t")
    assert paused.status == "interrupted"
    assert [(i.vertex, i.value) for i in paused.interrupts] == [("outer/ask", {"add to": 2})]
    done = app.invoke(ag.Command(resume=5), thread_id="t")
    assert done.state == {"n": 70}
    # the vertex's own code ran again; the nested run's finished vertex did not, and the one
    # that asked went on from its line when answered (the live path)
    assert runs == Counter({"outer": 2, "bump": 1, "ask": 1})


def test_the_nested_run_streams_into_the_parent_under_its_namespace(compile_graph: Compile) -> None:
    runs: Counter[str] = Counter()
    inner = compile_graph(_inner(runs))
    app = compile_graph(_outer(inner, runs), checkpointer=MemoryCheckpointer())
    app.invoke({"n": 1}, thread_id="s")
    items = list(app.stream(ag.Command(resume=1), thread_id="s", mode="updates", subgraphs=True))
    (path, inner_update), (top, outer_update) = items
    assert len(path) == 1
    assert path[0].startswith("outer@1~")
    assert path[0].endswith("#0")
    assert inner_update == {"ask": {"n": 3}}
    assert (top, outer_update) == ((), {"outer": {"n": 30}})


def test_a_vertex_retried_after_its_invocation_does_not_run_the_invoked_graph_again(
    compile_graph: Compile,
) -> None:
    runs: Counter[str] = Counter()

    def plain(state: dict[str, Any]) -> dict[str, Any]:
        runs["plain"] += 1
        return {**state, "n": state["n"] + 1}

    inner_graph = ag.Graph(name="plain")
    inner_graph.add_vertex("plain", plain)
    inner_graph.add_edge(ag.START, "plain")
    inner_graph.add_edge("plain", ag.END)
    inner = compile_graph(inner_graph)

    def flaky(state: dict[str, Any]) -> dict[str, Any]:
        runs["flaky"] += 1
        n = inner.invoke({"n": state["n"]}).state["n"]
        if runs["flaky"] == 1:
            raise ConnectionError("lost the connection after the invocation")
        return {**state, "n": n}

    g = ag.Graph()
    g.add_vertex("flaky", flaky, retry=ag.RetryPolicy(max_attempts=2, initial_interval=0))
    g.add_edge(ag.START, "flaky")
    g.add_edge("flaky", ag.END)
    app = compile_graph(g, checkpointer=MemoryCheckpointer())
    assert app.invoke({"n": 1}, thread_id="r").state == {"n": 2}
    assert runs == Counter({"flaky": 2, "plain": 1})


def test_a_resumed_vertex_invoking_with_another_input_is_refused_until_the_code_is_back(
    compile_graph: Compile,
) -> None:
    runs: Counter[str] = Counter()
    given: dict[str, Any] = {}
    inner = compile_graph(_inner(runs))
    app = compile_graph(_outer(inner, runs, given), checkpointer=MemoryCheckpointer())
    assert app.invoke({"n": 1}, thread_id="c").status == "interrupted"
    given["n"] = 100  # the code now invokes the graph with another input
    with pytest.raises(ag.ResumeError, match="invokes 'inner' with another input"):
        app.invoke(ag.Command(resume=5), thread_id="c")
    given.clear()  # put back: the thread was left as it was, and finishes with the answer given
    assert app.invoke(None, thread_id="c").state == {"n": 70}


def test_the_nested_run_is_kept_in_the_parent_thread_and_resumed_by_a_new_graph(
    compile_graph: Compile, tmp_path: Path
) -> None:
    runs: Counter[str] = Counter()
    checkpointer = SqliteCheckpointer(str(tmp_path / "nest.db"))
    inner = compile_graph(_inner(runs))
    first = compile_graph(_outer(inner, runs), checkpointer=checkpointer)
    assert first.invoke({"n": 1}, thread_id="k").status == "interrupted"
    again = compile_graph(_outer(inner, runs), checkpointer=checkpointer)
    assert again.invoke(ag.Command(resume=2), thread_id="k").state == {"n": 40}
    assert runs["bump"] == 1
    checkpointer.close()


def test_without_a_checkpointer_an_invocation_nests_for_its_events_only(compile_graph: Compile) -> None:
    def double(state: dict[str, Any]) -> dict[str, Any]:
        return {"n": state["n"] * 2}

    inner_graph = ag.Graph(name="double")
    inner_graph.add_vertex("double", double)
    inner_graph.add_edge(ag.START, "double")
    inner_graph.add_edge("double", ag.END)
    inner = compile_graph(inner_graph)

    def outer(state: dict[str, Any]) -> dict[str, Any]:
        return inner.invoke(state).state

    g = ag.Graph()
    g.add_vertex("outer", outer)
    g.add_edge(ag.START, "outer")
    g.add_edge("outer", ag.END)
    items = list(compile_graph(g).stream({"n": 2}, mode="updates", subgraphs=True))
    assert [update for _, update in items] == [{"double": {"n": 4}}, {"outer": {"n": 4}}]


def test_a_stateful_graph_invoked_in_a_vertex_keeps_its_state_across_the_threads_runs(
    compile_graph: Compile,
) -> None:
    from actorgraph.merge import append, by_key

    def note(state: dict[str, Any]) -> dict[str, Any]:
        return {"notes": [state["say"]]}

    memory_graph = ag.Graph(merge=by_key({"notes": append}), name="memory", returns="update")
    memory_graph.add_vertex("note", note)
    memory_graph.add_edge(ag.START, "note")
    memory_graph.add_edge("note", ag.END)
    memory = compile_graph(memory_graph, checkpointer=True)

    def chat(state: dict[str, Any]) -> dict[str, Any]:
        return {**state, "seen": memory.invoke({"say": state["say"]}).state["notes"]}

    g = ag.Graph()
    g.add_vertex("chat", chat)
    g.add_edge(ag.START, "chat")
    g.add_edge("chat", ag.END)
    app = compile_graph(g, checkpointer=MemoryCheckpointer())
    assert app.invoke({"say": "hi"}, thread_id="m").state["seen"] == ["hi"]
    assert app.invoke({"say": "again"}, thread_id="m").state["seen"] == ["hi", "again"]
    assert app.invoke({"say": "other"}, thread_id="n").state["seen"] == ["other"]
    with pytest.raises(ag.ConfigError, match="checkpointer=True"):
        memory.invoke({"say": "alone"})


# -- nested runs read by namespace, as subgraph runs are (issue 38, item 17) ----------------------


def test_a_nested_run_is_listed_by_get_state_and_read_by_its_namespace(compile_graph: Compile) -> None:
    runs: Counter[str] = Counter()
    inner = compile_graph(_inner(runs))
    app = compile_graph(_outer(inner, runs), checkpointer=MemoryCheckpointer())
    app.invoke({"n": 1}, thread_id="t")
    (namespace, inside), *others = app.get_state("t", subgraphs=True).subgraphs.items()
    assert not others
    assert namespace.startswith("outer@1~")
    assert namespace.endswith("#0")
    assert (inside.status, inside.next, inside.state) == ("interrupted", ("ask",), {"n": 2})
    assert [i.value for i in inside.interrupts] == [{"add to": 2}]
    assert app.get_state("t", namespace=namespace).state == {"n": 2}
    history = app.get_history("t", namespace=namespace)
    assert [(s.source, s.step) for s in history] == [("loop", 1), ("input", 0)]
    assert [s.state for s in history] == [{"n": 2}, {"n": 1}]


def test_a_nested_run_is_read_by_another_compiled_graph_that_names_the_same_graph(
    compile_graph: Compile, tmp_path: Path
) -> None:
    runs: Counter[str] = Counter()
    checkpointer = SqliteCheckpointer(str(tmp_path / "nest.db"))
    inner = compile_graph(_inner(runs))
    compile_graph(_outer(inner, runs), checkpointer=checkpointer).invoke({"n": 1}, thread_id="k")
    # a new vertex function that never ran: the graph is found in its code (its closure)
    reader = compile_graph(_outer(compile_graph(_inner(runs)), runs), checkpointer=checkpointer)
    (namespace,) = reader.get_state("k", subgraphs=True).subgraphs
    assert reader.get_state("k", namespace=namespace).next == ("ask",)
    checkpointer.close()


def test_a_nested_run_of_a_graph_its_reader_cannot_know_is_refused_saying_why(
    compile_graph: Compile,
) -> None:
    runs: Counter[str] = Counter()

    def outer(state: dict[str, Any]) -> dict[str, Any]:
        with _inner(runs).compile() as inner:  # built in the call: no code names it
            return {**state, "n": inner.invoke({"n": state["n"]}).state["n"]}

    def build(fn: Any) -> ag.Graph:
        g = ag.Graph(name="outer")
        g.add_vertex("outer", fn)
        g.add_edge(ag.START, "outer")
        g.add_edge("outer", ag.END)
        return g

    checkpointer = MemoryCheckpointer()
    app = compile_graph(build(outer), checkpointer=checkpointer)
    app.invoke({"n": 1}, thread_id="u")
    (namespace,) = app.get_state("u", subgraphs=True).subgraphs  # seen running in this process
    reader = compile_graph(build(lambda state: state), checkpointer=checkpointer)  # another program
    assert reader.get_state("u", subgraphs=True).subgraphs == {}
    unknown = r"made by graph 'inner', invoked in vertex 'outer'.*module-level"
    with pytest.raises(ag.ConfigError, match=unknown):
        reader.get_history("u", namespace=namespace)


def test_a_stateful_graph_invoked_in_a_vertex_is_read_by_its_namespace(compile_graph: Compile) -> None:
    from actorgraph.merge import append, by_key

    memory_graph = ag.Graph(merge=by_key({"notes": append}), name="memory", returns="update")
    memory_graph.add_vertex("note", lambda state: {"notes": [state["say"]]})
    memory_graph.add_edge(ag.START, "note")
    memory_graph.add_edge("note", ag.END)
    memory = compile_graph(memory_graph, checkpointer=True)

    def chat(state: dict[str, Any]) -> dict[str, Any]:
        heard = memory.invoke({"say": state["say"]}).state["notes"]
        return {**state, "seen": heard, "more": ag.interrupt("more?")}

    g = ag.Graph()
    g.add_vertex("chat", chat)
    g.add_edge(ag.START, "chat")
    g.add_edge("chat", ag.END)
    app = compile_graph(g, checkpointer=MemoryCheckpointer())
    app.invoke({"say": "hi"}, thread_id="m")
    assert app.get_state("m", subgraphs=True).subgraphs["chat~memory"].state["notes"] == ["hi"]
    assert app.invoke(ag.Command(resume="no"), thread_id="m").state["seen"] == ["hi"]
    assert app.get_state("m", namespace="chat~memory").state["notes"] == ["hi"]
    assert app.get_state("m", subgraphs=True).subgraphs == {}  # the thread is done: nothing runs next


# -- two stateful graphs invoked in one vertex keep two states (issue 38, item 22) ----------------


def _notes(tag: str, compile_graph: Compile, name: str | None = None) -> ag.CompiledGraph:
    """A stateful graph that appends `tag:said` to its notes; left unnamed unless `name` is given."""
    from actorgraph.merge import append, by_key

    g = ag.Graph(merge=by_key({"notes": append}), name=name, returns="update")
    g.add_vertex("note", lambda state: {"notes": [f"{tag}:{state['say']}"]})
    g.add_edge(ag.START, "note")
    g.add_edge("note", ag.END)
    return compile_graph(g, checkpointer=True)


def test_two_stateful_graphs_of_one_name_invoked_in_one_vertex_keep_a_state_each(
    compile_graph: Compile,
) -> None:
    first, second = _notes("a", compile_graph), _notes("b", compile_graph)

    def chat(state: dict[str, Any]) -> dict[str, Any]:
        a = first.invoke({"say": state["say"]}).state["notes"]
        b = second.invoke({"say": state["say"]}).state["notes"]
        again = first.invoke({"say": "twice"}).state["notes"]  # the same graph continues its own
        return {**state, "a": a, "b": b, "again": again}

    g = ag.Graph()
    g.add_vertex("chat", chat)
    g.add_edge(ag.START, "chat")
    g.add_edge("chat", ag.END)
    app = compile_graph(g, checkpointer=MemoryCheckpointer())
    app.invoke({"say": "hi"}, thread_id="m")
    done = app.invoke({"say": "bye"}, thread_id="m").state
    assert done["a"] == ["a:hi", "a:twice", "a:bye"]
    assert done["b"] == ["b:hi", "b:bye"]
    assert done["again"] == ["a:hi", "a:twice", "a:bye", "a:twice"]
    assert app.get_state("m", namespace="chat~graph").state["notes"] == done["again"]
    assert app.get_state("m", namespace="chat~graph~1").state["notes"] == done["b"]
