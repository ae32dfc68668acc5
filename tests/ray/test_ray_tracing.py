"""Runs on Ray as OpenTelemetry traces: the driver's spans, and their context in the partition processes.

The run, superstep and attempt spans are the driver's (read here with the
SDK's memory exporter); the vertex runs in a partition process with the
attempt span's context current (carried as a W3C `traceparent`), so spans it
makes there, with the worker's own provider, are children of its attempt.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest
from otel_spans import Spans, is_child, recording, trace

import actorgraph as ag
from actorgraph.ray import RayBackend  # sets Ray's sandbox settings before Ray is imported

pytestmark = pytest.mark.slow  # a real Ray cluster

ray = pytest.importorskip("ray", reason='the Ray backend needs Ray: pip install -e ".[ray]"')


@pytest.fixture
def spans() -> Iterator[Spans]:
    yield from recording()


def seen_in_the_worker(state: dict[str, Any]) -> dict[str, Any]:
    """Record, in the partition, the current span's context and the parent of a span made there."""
    from opentelemetry import trace as api
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    current = api.get_current_span().get_span_context()
    exporter = InMemorySpanExporter()
    provider = TracerProvider()  # the worker's own SDK (a real deployment configures one per process)
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    with provider.get_tracer("vertex").start_as_current_span("model call"):
        pass
    (made,) = exporter.get_finished_spans()
    return {
        **state,
        "pid": os.getpid(),
        "trace_id": current.trace_id,
        "span_id": current.span_id,
        "made_parent": made.parent.span_id if made.parent else None,
        "made_trace": made.context.trace_id,
    }


def test_a_run_on_ray_is_one_trace_and_the_vertex_runs_under_its_attempt_span(
    spans: Spans, backend: RayBackend
) -> None:
    graph = ag.Graph()
    graph.add_vertex("remote", seen_in_the_worker).add_vertex("next", lambda s: {**s, "n": 1})
    graph.add_edge(ag.START, "remote").add_edge("remote", "next").add_edge("next", ag.END)
    with graph.compile(backend=backend) as app, spans.tracer.start_as_current_span("request"):
        state = app.invoke({"n": 0}).state
    assert state["pid"] != os.getpid()  # it ran in a partition process
    run = spans.one("actorgraph.run")
    assert is_child(run, spans.one("request"))
    steps = {s.attributes["actorgraph.step"]: s for s in spans.named("actorgraph.superstep")}
    assert sorted(steps) == [1, 2] and all(is_child(s, run) for s in steps.values())
    remote = spans.one("actorgraph.task", vertex="remote")
    assert is_child(remote, steps[1]) and is_child(spans.one("actorgraph.task", vertex="next"), steps[2])
    assert remote.attributes["actorgraph.outcome"] == "ok"
    assert (state["trace_id"], state["span_id"]) == (remote.context.trace_id, remote.context.span_id)
    assert (state["made_trace"], state["made_parent"]) == (remote.context.trace_id, remote.context.span_id)


def test_on_ray_each_attempt_is_a_span_that_records_its_error(spans: Spans, backend: RayBackend) -> None:
    def flaky(state: dict[str, Any], ctx: ag.Context) -> dict[str, Any]:
        if ctx.attempt < 2:
            msg = "the model timed out"
            raise TimeoutError(msg)
        return state

    graph = ag.Graph()
    graph.add_vertex("flaky", flaky, retry=ag.RetryPolicy(initial_interval=0, jitter=False))
    graph.add_edge(ag.START, "flaky").add_edge("flaky", ag.END)
    with graph.compile(backend=backend) as app:
        app.invoke({"n": 0})
    attempts = sorted(spans.named("actorgraph.task"), key=lambda s: s.attributes["actorgraph.attempt"])
    assert [(s.attributes["actorgraph.attempt"], s.attributes["actorgraph.outcome"]) for s in attempts] == [
        (1, "error"),
        (2, "ok"),
    ]
    assert attempts[0].status.status_code == trace.StatusCode.ERROR
    assert "the model timed out" in (attempts[0].status.description or "")
    assert all(is_child(s, spans.one("actorgraph.superstep")) for s in attempts)


def test_on_ray_with_tracing_false_no_span_is_made(spans: Spans, backend: RayBackend) -> None:
    graph = ag.Graph()
    graph.add_vertex("remote", seen_in_the_worker).add_edge(ag.START, "remote").add_edge("remote", ag.END)
    with graph.compile(backend=backend, tracing=False) as app:
        state = app.invoke({"n": 0}).state
    assert spans.all() == []
    assert state["trace_id"] == 0  # nothing was current in the worker


class RaisingPropagator:
    """A trace-context propagator that raises (a broken plugin): it costs the trace, never the run."""

    fields = frozenset({"traceparent"})

    def extract(self, carrier: Any, context: Any = None, getter: Any = None) -> Any:  # noqa: ARG002 - its API
        msg = "the propagator's extract is broken"
        raise RuntimeError(msg)

    def inject(self, carrier: Any, context: Any = None, setter: Any = None) -> None:  # noqa: ARG002 - its API
        msg = "the propagator's inject is broken"
        raise RuntimeError(msg)


def breaks_its_workers_propagator(state: dict[str, Any]) -> dict[str, Any]:
    """In the partition: set a raising propagator (or OpenTelemetry's default again), say what is current."""
    from opentelemetry import propagate
    from opentelemetry import trace as api
    from opentelemetry.baggage.propagation import W3CBaggagePropagator
    from opentelemetry.propagators.composite import CompositePropagator
    from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

    current = api.get_current_span().get_span_context().trace_id
    if state.get("restore"):
        default = CompositePropagator([TraceContextTextMapPropagator(), W3CBaggagePropagator()])
        propagate.set_global_textmap(default)
    else:
        propagate.set_global_textmap(RaisingPropagator())  # type: ignore[arg-type]
    return {**state, "pid": os.getpid(), "trace_id": current}


def test_on_ray_a_propagator_that_raises_in_the_worker_leaves_the_vertex_running_untraced(
    spans: Spans, backend: RayBackend
) -> None:
    graph = ag.Graph()
    graph.add_vertex("remote", breaks_its_workers_propagator)
    graph.add_edge(ag.START, "remote").add_edge("remote", ag.END)
    with graph.compile(backend=backend) as app:
        first = app.invoke({"n": 0}).state  # its worker's propagator raises from now on
        try:
            second = app.invoke({"n": 1}).state  # extract raises there
        finally:
            app.invoke({"n": 2, "restore": True})
    assert first["trace_id"] != 0  # traced while the propagator worked
    assert second["pid"] == first["pid"]  # the same worker, whose propagator raised
    assert second["trace_id"] == 0  # it ran, with no span current
    assert [s.attributes["actorgraph.outcome"] for s in spans.named("actorgraph.task")] == ["ok"] * 3


def test_on_ray_a_propagator_that_raises_on_the_driver_leaves_the_run_done(
    spans: Spans, backend: RayBackend
) -> None:
    from opentelemetry import propagate

    graph = ag.Graph()
    graph.add_vertex("remote", seen_in_the_worker).add_edge(ag.START, "remote").add_edge("remote", ag.END)
    default = propagate.get_global_textmap()
    propagate.set_global_textmap(RaisingPropagator())  # type: ignore[arg-type]
    try:
        with graph.compile(backend=backend) as app:
            state = app.invoke({"n": 0}).state
    finally:
        propagate.set_global_textmap(default)
    assert state["trace_id"] == 0  # no context went to the worker
    assert spans.one("actorgraph.task").attributes["actorgraph.outcome"] == "ok"
