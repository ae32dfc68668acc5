"""OpenTelemetry traces of runs: a span per run, per superstep and per task attempt.

A run is traced through the global tracer provider when the process has set
one that records (an SDK's `TracerProvider`), unless its graph was compiled
with `tracing=False`. Nothing here imports OpenTelemetry: the decision is made
once per run, on the caller's thread (`caller`), and costs a dictionary lookup
when nothing imported `opentelemetry.trace` (then no provider can be set), or a
type check when its provider is the API's proxy or no-op one. A run not traced
carries None where a traced one carries its spans' parent, so the vertex
actors check one attribute of their order.

The spans nest as the work does: the run's span is a child of the span that
was current where the run was started (for a graph invoked inside a vertex,
that vertex's task span); a superstep's span is a child of its run's; a task
attempt's span (`attempt_spans.py`) is a child of its superstep's.

Tracing observes a run, it never decides one: every call into OpenTelemetry is
contained (`lost`), so a span processor that raises in `on_start` or `on_end`
(or an exporter, a propagator) costs spans, logged once, never a run's outcome.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from actorgraph._actors.log import log
from actorgraph._actors.setup import RunSetup
from actorgraph._model.records import ErrorInfo, Interrupt, SuperstepState

__all__ = ["OFF", "Parent", "RunTrace", "asked", "caller", "end_span", "failed", "lost", "run_trace"]

_TRACER_NAME = "actorgraph"
_tracer_of: tuple[Any, Any] | None = None  # (provider, its tracer): the last one asked for


def _tracer() -> Any | None:
    """The tracer of the global provider when it records, else None (no import, no span)."""
    global _tracer_of  # noqa: PLW0603 - one cached pair, swapped whole (atomic)
    trace = sys.modules.get("opentelemetry.trace")
    if trace is None:  # nobody imported OpenTelemetry: no provider can have been set
        return None
    provider = trace.get_tracer_provider()
    if isinstance(provider, (trace.ProxyTracerProvider, trace.NoOpTracerProvider)):
        return None
    known = _tracer_of
    if known is not None and known[0] is provider:
        return known[1]
    tracer = provider.get_tracer(_TRACER_NAME, _version())
    _tracer_of = (provider, tracer)
    return tracer


def _version() -> str | None:
    """The installed version of actorgraph: its tracer's scope version (asked once per provider)."""
    from importlib import metadata  # noqa: PLC0415 - only when a provider records

    try:
        return metadata.version("actorgraph")
    except metadata.PackageNotFoundError:  # run from a source tree that was never installed
        return None


@dataclass(frozen=True, slots=True)
class Parent:
    """Where spans begin: the tracer, the OpenTelemetry context of their parent, attributes they share.

    Attributes:
        tracer: the global provider's tracer, taken when the run started.
        context: the OpenTelemetry `Context` whose span is the new spans' parent.
        attributes: the run's attributes every span of its tasks carries.
    """

    tracer: Any
    context: Any
    attributes: Mapping[str, Any]


def caller() -> Parent | None:
    """The parent of the span of a run started now, on this thread; None when nothing records."""
    try:
        tracer = _tracer()
        if tracer is None:
            return None
        from opentelemetry import context  # noqa: PLC0415 - loaded already: `_tracer` found it

        return Parent(tracer, context.get_current(), {})
    except Exception as exc:  # noqa: BLE001 - tracing observes a run, it never decides one
        lost("the tracer provider", exc)  # the run goes untraced
        return None


# -- containing what OpenTelemetry raises ------------------------------------------------

_REPORTED: set[tuple[str, str]] = set()  # (where, error type): logged as a warning already


def lost(where: str, error: Exception) -> None:
    """A call into OpenTelemetry raised (a span processor's `on_start` or `on_end`, say): note it, go on.

    The first failure of a kind at a place is logged as a warning with its
    traceback, later ones at debug level: a processor that always fails does not
    flood the log. The run is not told: its spans may be missing or unfinished.
    """
    key = (where, type(error).__name__)
    first = key not in _REPORTED
    _REPORTED.add(key)
    log(
        "warning" if first else "debug",
        "tracing failed; the run goes on, its spans may be incomplete",
        where=where,
        error=f"{type(error).__name__}: {error}",
        exc_info=error if first else None,
    )


def end_span(span: Any, where: str, attribute: tuple[str, Any] | None = None) -> None:
    """Set `attribute` on `span` and end it; what either raises is `lost`, and the other still happens."""
    if attribute is not None:
        try:
            span.set_attribute(*attribute)
        except Exception as exc:  # noqa: BLE001 - tracing observes a run, it never decides one
            lost(where, exc)
    try:
        span.end()  # the processors' on_end run here
    except Exception as exc:  # noqa: BLE001 - tracing observes a run, it never decides one
        lost(where, exc)


# -- the spans of a run and its supersteps --------------------------------------------


def _attributes(run_id: str, thread_id: str | None, namespace: str) -> dict[str, Any]:
    attributes: dict[str, Any] = {"actorgraph.run_id": run_id}
    if thread_id is not None:
        attributes["actorgraph.thread_id"] = thread_id
    if namespace:
        attributes["actorgraph.namespace"] = namespace
    return attributes


def failed(span: Any, error: ErrorInfo) -> None:
    """Record `error` on `span` as OpenTelemetry records an exception, and mark the span failed."""
    from opentelemetry.trace import Status, StatusCode  # noqa: PLC0415 - only traced runs get here

    span.add_event(
        "exception",
        {
            "exception.type": error.type,
            "exception.message": error.message,
            "exception.stacktrace": error.traceback,
        },
    )
    span.set_status(Status(StatusCode.ERROR, f"{error.type}: {error.message}"))


def asked(span: Any, interrupts: tuple[Interrupt, ...]) -> None:
    """Record each question on `span` as an event."""
    for pending in interrupts:
        span.add_event(
            "actorgraph.interrupt",
            {
                "actorgraph.interrupt.id": pending.id,
                "actorgraph.vertex": pending.vertex,
                "actorgraph.kind": pending.kind,
            },
        )


_RUN, _STEP = "a run's span", "a superstep's span"


class RunTrace:
    """The spans of one run, opened and closed on its coordinator's thread."""

    def __init__(self, parent: Parent, attributes: dict[str, Any], step: int) -> None:
        """Open the run's span as a child of `parent`'s context.

        Raises:
            Exception: whatever OpenTelemetry raised opening it (`run_trace` contains it).
        """
        from opentelemetry import trace  # noqa: PLC0415 - only traced runs get here

        self._trace = trace
        self._tracer = parent.tracer
        self._attributes = attributes
        self._span = parent.tracer.start_span(
            "actorgraph.run", context=parent.context, attributes={**attributes, "actorgraph.step": step}
        )
        self._context = trace.set_span_in_context(self._span, parent.context)
        self._step: Any = None  # the open superstep's span
        self.tasks: Parent | None = None  # what the orders of the open superstep carry

    def superstep(self, step: int, tasks: int) -> None:
        """Open the span of superstep `step` (of `tasks` tasks): its attempts' spans are its children."""
        self._close_step("abandoned")
        attributes = {**self._attributes, "actorgraph.step": step, "actorgraph.tasks": tasks}
        try:
            self._step = self._tracer.start_span(
                "actorgraph.superstep", context=self._context, attributes=attributes
            )
            self.tasks = Parent(
                self._tracer, self._trace.set_span_in_context(self._step, self._context), self._attributes
            )
        except Exception as exc:  # noqa: BLE001 - tracing observes a run, it never decides one
            lost(_STEP, exc)  # the superstep and its attempts go without spans

    def superstep_ended(self, superstep: SuperstepState) -> None:
        """Close the superstep's span with its outcome: committed, interrupted or error (its failed tasks)."""
        span = self._step
        if span is None:
            return
        errors, questions = superstep.failed, superstep.questions
        try:
            if errors and errors[0].error is not None:
                span.set_attribute("actorgraph.failed", [r.task_id for r in errors])
                failed(span, errors[0].error)
            if questions:  # the vertices' questions and `interrupt_before` breakpoints: on the run's span too
                asked(span, questions)
                asked(self._span, questions)
        except Exception as exc:  # noqa: BLE001 - tracing observes a run, it never decides one
            lost(_STEP, exc)
        self._close_step("error" if errors else "interrupted" if questions else "committed")

    def finished(self, status: str, step: int, error: BaseException | None) -> None:
        """Close the run's span (and an open superstep's): `done`, `interrupted`, `error` or `cancelled`."""
        self._close_step(status)
        try:
            self._span.set_attribute("actorgraph.status", status)
            self._span.set_attribute("actorgraph.last_step", step)
            if error is not None:
                failed(self._span, ErrorInfo.from_exception(error))
        except Exception as exc:  # noqa: BLE001 - tracing observes a run, it never decides one
            lost(_RUN, exc)
        end_span(self._span, _RUN)

    def _close_step(self, outcome: str) -> None:
        span, self._step, self.tasks = self._step, None, None
        if span is not None:
            end_span(span, _STEP, ("actorgraph.outcome", outcome))


class _Off:
    """A run that is not traced: every call does nothing, and its orders carry no parent."""

    tasks: Parent | None = None

    def superstep(self, step: int, tasks: int) -> None:
        """Nothing."""

    def superstep_ended(self, superstep: SuperstepState) -> None:
        """Nothing."""

    def finished(self, status: str, step: int, error: BaseException | None) -> None:
        """Nothing."""


OFF = _Off()


def run_trace(parent: Parent | None, graph: str, setup: RunSetup) -> RunTrace | _Off:
    """The spans of the run of `graph` that `setup` starts: `OFF` when it is not traced (`parent` None).

    `OFF` too when OpenTelemetry raised opening the run's span: the run goes untraced.
    """
    if parent is None:
        return OFF
    attributes = _attributes(setup.run_id, setup.thread_id, setup.namespace)
    attributes["actorgraph.graph"] = graph
    try:
        return RunTrace(parent, attributes, setup.position.step)
    except Exception as exc:  # noqa: BLE001 - tracing observes a run, it never decides one
        lost(_RUN, exc)
        return OFF
