"""The OpenTelemetry SDK recording spans in memory for a test, and ways to read the tree they make."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

trace = pytest.importorskip(
    "opentelemetry.trace", reason='tracing needs OpenTelemetry: pip install -e ".[test]"'
)

from opentelemetry.sdk.trace import ReadableSpan, TracerProvider  # noqa: E402 - after the skip
from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: E402
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter  # noqa: E402
from opentelemetry.util._once import Once  # noqa: E402 - the API's own guard, reset as its test utilities do


class Spans:
    """The spans the SDK finished, in the order they ended."""

    def __init__(self, exporter: InMemorySpanExporter, provider: TracerProvider) -> None:
        self.exporter = exporter
        self.tracer = provider.get_tracer("tests")

    def all(self) -> list[ReadableSpan]:
        """Every finished span."""
        return list(self.exporter.get_finished_spans())

    def named(self, name: str, **attributes: Any) -> list[ReadableSpan]:
        """The finished spans called `name` whose `actorgraph.<key>` attributes have these values."""
        return [
            span
            for span in self.all()
            if span.name == name
            and all((span.attributes or {}).get(f"actorgraph.{k}") == v for k, v in attributes.items())
        ]

    def one(self, name: str, **attributes: Any) -> ReadableSpan:
        """The only finished span called `name` with these attributes."""
        found = self.named(name, **attributes)
        assert len(found) == 1, (
            f"{len(found)} spans {name} {attributes}: {[s.attributes for s in self.all()]}"
        )
        return found[0]

    def children(self, parent: ReadableSpan) -> list[ReadableSpan]:
        """The finished spans whose parent is `parent`."""
        assert parent.context is not None
        return [s for s in self.all() if s.parent is not None and s.parent.span_id == parent.context.span_id]


def is_child(span: ReadableSpan, parent: ReadableSpan) -> bool:
    """`span`'s parent is `parent` (same trace, parent's span id)."""
    assert parent.context is not None and span.context is not None
    return (
        span.parent is not None
        and span.parent.span_id == parent.context.span_id
        and span.context.trace_id == parent.context.trace_id
    )


def _reset_global_provider() -> None:
    """Forget the global tracer provider (the API sets it once per process; its test utilities reset it)."""
    trace._TRACER_PROVIDER_SET_ONCE = Once()
    trace._TRACER_PROVIDER = None


def recording() -> Iterator[Spans]:
    """An SDK tracer provider, global until the end, exporting to memory; the API's proxy again after it.

    A test module's `spans` fixture yields from it.
    """
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    _reset_global_provider()
    trace.set_tracer_provider(provider)
    try:
        yield Spans(exporter, provider)
    finally:
        _reset_global_provider()
        provider.shutdown()
