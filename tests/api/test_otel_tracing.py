"""Runs as OpenTelemetry traces: spans of runs, supersteps and attempts, read with the SDK's memory exporter.

The spans that the driver records (runs, supersteps, attempts) are the same on
every backend; the tests that look at spans a vertex function makes itself run
on threads only (on Ray those are made in the worker, by the worker's provider:
tests/ray/test_ray_tracing.py checks that they nest there).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest
from children import report_of
from lines import in_a_line
from otel_spans import Spans, is_child, recording, trace

import actorgraph as ag
from actorgraph.checkpoint import MemoryCheckpointer


@pytest.fixture
def spans() -> Iterator[Spans]:
    yield from recording()


def bump(state: dict[str, Any]) -> dict[str, Any]:
    return {**state, "n": state["n"] + 1}


def test_a_run_is_a_trace_of_its_supersteps_and_task_attempts_under_the_callers_span(
    spans: Spans, compile_graph
) -> None:
    app = compile_graph(in_a_line(("a", bump), ("b", bump)), checkpointer=MemoryCheckpointer())
    with spans.tracer.start_as_current_span("request") as request:
        assert app.invoke({"n": 0}, thread_id="t1").state == {"n": 2}
    caller = spans.one("request")
    run = spans.one("actorgraph.run")
    assert is_child(run, caller) and request.get_span_context().trace_id == run.context.trace_id
    assert run.attributes["actorgraph.thread_id"] == "t1"
    assert run.attributes["actorgraph.status"] == "done"
    assert run.attributes["actorgraph.graph"] == app.name
    steps = {s.attributes["actorgraph.step"]: s for s in spans.named("actorgraph.superstep")}
    assert sorted(steps) == [1, 2] and all(is_child(s, run) for s in steps.values())
    assert {s.attributes["actorgraph.outcome"] for s in steps.values()} == {"committed"}
    for step, vertex in ((1, "a"), (2, "b")):
        task = spans.one("actorgraph.task", vertex=vertex)
        assert is_child(task, steps[step])
        assert task.attributes["actorgraph.step"] == step
        assert task.attributes["actorgraph.task_id"] == vertex
        assert task.attributes["actorgraph.attempt"] == 1
        assert task.attributes["actorgraph.outcome"] == "ok"
        assert task.attributes["actorgraph.thread_id"] == "t1"
        assert task.status.status_code == trace.StatusCode.UNSET


def test_a_run_started_outside_any_span_is_the_root_of_its_own_trace(spans: Spans, compile_graph) -> None:
    app = compile_graph(in_a_line(("a", bump)))
    app.invoke({"n": 0})
    app.invoke({"n": 1})
    runs = spans.named("actorgraph.run")
    assert len(runs) == 2 and all(r.parent is None for r in runs)
    assert runs[0].context.trace_id != runs[1].context.trace_id


def test_compiled_with_tracing_false_a_run_makes_no_span(spans: Spans, compile_graph) -> None:
    async def abump(state: dict[str, Any]) -> dict[str, Any]:
        return bump(state)

    inner = in_a_line(("fetch", bump))  # a subgraph's runs follow their parent's
    app = compile_graph(in_a_line(("a", bump), ("inner", inner), ("b", abump)), tracing=False)
    with spans.tracer.start_as_current_span("request"):
        assert app.invoke({"n": 0}).state == {"n": 3}
    assert [s.name for s in spans.all()] == ["request"]


def test_each_retry_is_a_span_of_its_own_and_a_failed_attempt_records_its_error(
    spans: Spans, compile_graph
) -> None:
    def flaky(state: dict[str, Any], ctx: ag.Context) -> dict[str, Any]:
        if ctx.attempt < 3:
            msg = f"attempt {ctx.attempt} fails"
            raise ValueError(msg)
        return state

    graph = ag.Graph()
    graph.add_vertex(
        "flaky", flaky, retry=ag.RetryPolicy(initial_interval=0, jitter=False, retry_on=ValueError)
    )
    graph.add_edge(ag.START, "flaky").add_edge("flaky", ag.END)
    compile_graph(graph).invoke({"n": 0})
    attempts = sorted(
        spans.named("actorgraph.task", vertex="flaky"), key=lambda s: s.attributes["actorgraph.attempt"]
    )
    assert [s.attributes["actorgraph.attempt"] for s in attempts] == [1, 2, 3]
    assert [s.attributes["actorgraph.outcome"] for s in attempts] == ["error", "error", "ok"]
    step = spans.one("actorgraph.superstep", step=1)
    assert all(is_child(s, step) for s in attempts)
    for number, failed in enumerate(attempts[:2], start=1):
        assert failed.status.status_code == trace.StatusCode.ERROR
        assert f"attempt {number} fails" in (failed.status.description or "")
        (event,) = [e for e in failed.events if e.name == "exception"]
        assert event.attributes["exception.type"] == "builtins.ValueError"
        assert "in flaky" in event.attributes["exception.stacktrace"]
    assert attempts[2].status.status_code == trace.StatusCode.UNSET


def test_a_run_that_fails_marks_its_task_superstep_and_run_spans_as_errors(
    spans: Spans, compile_graph
) -> None:
    def broken(state: dict[str, Any]) -> dict[str, Any]:
        msg = "no luck"
        raise RuntimeError(msg)

    app = compile_graph(in_a_line(("broken", broken)))
    with pytest.raises(ag.VertexError):
        app.invoke({"n": 0})
    run = spans.one("actorgraph.run")
    assert run.attributes["actorgraph.status"] == "error"
    assert run.status.status_code == trace.StatusCode.ERROR
    step = spans.one("actorgraph.superstep")
    assert step.attributes["actorgraph.outcome"] == "error"
    assert step.attributes["actorgraph.failed"] == ("broken",)
    assert step.status.status_code == trace.StatusCode.ERROR
    task = spans.one("actorgraph.task")
    assert task.status.status_code == trace.StatusCode.ERROR and "no luck" in task.status.description


@pytest.mark.parametrize("live", [None, 60.0], ids=["fallback", "live"])
def test_a_question_is_an_event_and_the_answer_goes_on_in_the_resumed_runs_trace(
    spans: Spans, compile_graph, live: float | None
) -> None:
    def ask(state: dict[str, Any]) -> dict[str, Any]:
        return {**state, "answer": ag.interrupt("ok?")}

    app = compile_graph(in_a_line(("ask", ask)), checkpointer=MemoryCheckpointer(), live_interrupts=live)
    paused = app.invoke({"n": 0}, thread_id="t")
    (question,) = paused.interrupts
    first = spans.one("actorgraph.run")
    assert first.attributes["actorgraph.status"] == "interrupted"
    asked = spans.one("actorgraph.task")
    for span in (asked, spans.one("actorgraph.superstep"), first):
        (event,) = [e for e in span.events if e.name == "actorgraph.interrupt"]
        assert event.attributes["actorgraph.interrupt.id"] == question.id
        assert event.attributes["actorgraph.vertex"] == "ask"
    assert asked.attributes["actorgraph.outcome"] == "interrupt"
    assert app.invoke(ag.Command(resume="yes"), thread_id="t").state["answer"] == "yes"
    (second,) = [r for r in spans.named("actorgraph.run") if r.attributes["actorgraph.status"] == "done"]
    (answered,) = [t for t in spans.named("actorgraph.task") if t is not asked]
    assert answered.attributes["actorgraph.outcome"] == "ok"
    assert any(is_child(answered, s) for s in spans.children(second))


def test_a_subgraphs_run_supersteps_and_tasks_sit_under_its_parent_task_span(
    spans: Spans, compile_graph
) -> None:
    inner = in_a_line(("fetch", bump), ("parse", bump))
    outer = in_a_line(("research", inner), ("write", bump))
    app = compile_graph(outer, checkpointer=MemoryCheckpointer())
    assert app.invoke({"n": 0}, thread_id="t").state == {"n": 3}
    runs = spans.named("actorgraph.run")
    (top,) = [r for r in runs if "actorgraph.namespace" not in r.attributes]
    (nested,) = [r for r in runs if "actorgraph.namespace" in r.attributes]
    research = spans.one("actorgraph.task", vertex="research")
    assert is_child(research, spans.one("actorgraph.superstep", step=1, namespace=None))
    assert is_child(nested, research) and nested.context.trace_id == top.context.trace_id
    assert research.attributes["actorgraph.outcome"] == "ok"
    inner_steps = [s for s in spans.named("actorgraph.superstep") if is_child(s, nested)]
    assert len(inner_steps) == 2
    for vertex in ("fetch", "parse"):
        task = spans.one("actorgraph.task", vertex=vertex)
        assert any(is_child(task, s) for s in inner_steps)
        assert task.attributes["actorgraph.namespace"] == nested.attributes["actorgraph.namespace"]


@pytest.mark.threads_only("the vertex's own spans are recorded by this process's provider only on threads")
def test_spans_a_vertex_makes_are_children_of_its_attempt_span(spans: Spans, compile_graph) -> None:
    tracer = spans.tracer

    def work(state: dict[str, Any]) -> dict[str, Any]:
        with tracer.start_as_current_span("model call"), tracer.start_as_current_span("http"):
            return bump(state)

    async def awork(state: dict[str, Any]) -> dict[str, Any]:
        with tracer.start_as_current_span("async model call"):
            await asyncio.sleep(0)
            return bump(state)

    app = compile_graph(in_a_line(("work", work), ("awork", awork)))
    app.invoke({"n": 0})
    model, http = spans.one("model call"), spans.one("http")
    assert is_child(model, spans.one("actorgraph.task", vertex="work")) and is_child(http, model)
    assert is_child(spans.one("async model call"), spans.one("actorgraph.task", vertex="awork"))


@pytest.mark.threads_only("the graph is invoked inside a vertex: nested runs are not on Ray yet")
def test_a_graph_invoked_inside_a_vertex_is_traced_under_that_vertexs_attempt(
    spans: Spans, compile_graph
) -> None:
    helper = compile_graph(in_a_line(("inner", bump)))

    def outer(state: dict[str, Any]) -> dict[str, Any]:
        return helper.invoke(state).state

    compile_graph(in_a_line(("outer", outer))).invoke({"n": 0})
    task = spans.one("actorgraph.task", vertex="outer")
    runs = [r for r in spans.named("actorgraph.run") if is_child(r, task)]
    assert len(runs) == 1
    assert any(is_child(spans.one("actorgraph.task", vertex="inner"), s) for s in spans.children(runs[0]))


@pytest.mark.slow  # two fresh interpreters
@pytest.mark.parametrize("how", ["blocked", "unused"])
def test_without_opentelemetry_a_run_imports_none_of_it(how: str) -> None:
    """Not installed (`blocked`), or installed and never imported by the program (`unused`)."""
    assert report_of("otel_free_child.py", how) == []


@pytest.mark.threads_only("the vertex's own spans are recorded by this process's provider only on threads")
def test_a_vertex_answered_live_goes_on_in_the_resumed_runs_attempt_span(spans: Spans, compile_graph) -> None:
    tracer = spans.tracer

    def ask(state: dict[str, Any]) -> dict[str, Any]:
        with tracer.start_as_current_span("before"):
            pass
        answer = ag.interrupt("ok?")
        with tracer.start_as_current_span("after"):
            return {**state, "answer": answer}

    app = compile_graph(in_a_line(("ask", ask)), checkpointer=MemoryCheckpointer(), live_interrupts=60.0)
    app.invoke({"n": 0}, thread_id="t")
    app.invoke(ag.Command(resume="yes"), thread_id="t")
    asked, answered = spans.named("actorgraph.task")  # in the order they ended
    assert asked.attributes["actorgraph.outcome"] == "interrupt"
    assert answered.attributes["actorgraph.outcome"] == "ok"
    assert is_child(spans.one("before"), asked) and is_child(spans.one("after"), answered)
    assert len(spans.named("before")) == 1  # the live path: the lines before the question ran once


def test_streamed_and_awaited_runs_are_children_of_the_callers_span(spans: Spans, compile_graph) -> None:
    app = compile_graph(in_a_line(("a", bump)))
    with spans.tracer.start_as_current_span("streaming"):
        assert list(app.stream({"n": 0}))[-1] == {"n": 1}

    async def awaited() -> None:
        with spans.tracer.start_as_current_span("awaiting"):
            await app.ainvoke({"n": 0})

    asyncio.run(awaited())
    streamed, awaited_run = spans.named("actorgraph.run")
    assert is_child(streamed, spans.one("streaming")) and is_child(awaited_run, spans.one("awaiting"))
