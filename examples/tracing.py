"""Tracing with OpenTelemetry: each run is a trace of its supersteps and task attempts.

Needs `pip install "actorgraph[otel]" opentelemetry-sdk`. The application sets
up the SDK once (here with an exporter that keeps the spans in memory, so the
example can print them); actorgraph needs nothing more. Run it with
`python examples/tracing.py`; docs/how-to/tracing.md walks through it.
"""

from __future__ import annotations

from typing import Any

from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import actorgraph as ag

# --8<-- [start:setup]
exporter = InMemorySpanExporter()  # in a service: OTLPSpanExporter() behind a BatchSpanProcessor
provider = TracerProvider()
provider.add_span_processor(SimpleSpanProcessor(exporter))
trace.set_tracer_provider(provider)  # the global provider: every run is traced from now on
# --8<-- [end:setup]

tracer = trace.get_tracer("my-service")


# --8<-- [start:graph]
def search(state: dict[str, Any]) -> dict[str, Any]:
    with tracer.start_as_current_span("search engine call") as span:  # a child of this attempt's span
        span.set_attribute("query", state["topic"])
        return {**state, "hits": 3}


def write(state: dict[str, Any], ctx: ag.Context[Any]) -> dict[str, Any]:
    if ctx.attempt == 1:
        msg = "the model timed out"
        raise TimeoutError(msg)  # recorded on the first attempt's span, which is marked failed
    return {**state, "text": f"{state['hits']} sources on {state['topic']}"}


research: ag.Graph[dict[str, Any]] = ag.Graph()
research.add_vertex("search", search)
research.add_edge(ag.START, "search").add_edge("search", ag.END)

graph: ag.Graph[dict[str, Any]] = ag.Graph()
graph.add_vertex("research", research)  # a subgraph: its run's spans sit under this task's span
graph.add_vertex("write", write, retry=ag.RetryPolicy(initial_interval=0.01))
graph.add_edge(ag.START, "research").add_edge("research", "write").add_edge("write", ag.END)
# --8<-- [end:graph]


SHOWN = ("vertex", "step", "attempt", "outcome", "status")  # the attributes the outline shows


def tree(spans: list[ReadableSpan]) -> list[str]:
    """The spans as an indented outline, parents first, siblings in the order they started."""
    children: dict[int | None, list[ReadableSpan]] = {}
    for span in sorted(spans, key=lambda s: s.start_time or 0):
        children.setdefault(span.parent.span_id if span.parent else None, []).append(span)
    lines: list[str] = []

    def walk(parent: int | None, depth: int) -> None:
        for span in children.get(parent, []):
            attributes = span.attributes or {}
            shown = [
                f"{key}={attributes[f'actorgraph.{key}']!r}"
                for key in SHOWN
                if f"actorgraph.{key}" in attributes
            ]
            failed = " ERROR" if span.status.status_code == trace.StatusCode.ERROR else ""
            lines.append(f"{'  ' * depth}{span.name} {' '.join(shown)}{failed}".rstrip())
            assert span.context is not None
            walk(span.context.span_id, depth + 1)

    walk(None, 0)
    return lines


def main() -> None:
    # --8<-- [start:run]
    with graph.compile() as app, tracer.start_as_current_span("handle request"):
        result = app.invoke({"topic": "tides"})  # the run's span is a child of "handle request"
    # --8<-- [end:run]
    print(result.state["text"])
    for line in tree(list(exporter.get_finished_spans())):
        print(line)
    traces = {span.context.trace_id for span in exporter.get_finished_spans() if span.context}
    print(f"{len(exporter.get_finished_spans())} spans in {len(traces)} trace")


if __name__ == "__main__":
    main()
