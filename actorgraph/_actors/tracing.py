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
attempt's span is a child of its superstep's and is the *current* span while
the vertex function runs, so spans the function makes are its children. A
subgraph task's attempt span is the parent of its subgraph's run span. On Ray
the attempt's span lives on the driver and its context travels to the worker
as a W3C `traceparent` carrier (`AttemptSpan.carrier`, `actorgraph.ray._tracing`).
"""

from __future__ import annotations

import contextvars
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from actorgraph._actors.setup import RunSetup
from actorgraph._model.records import ErrorInfo, Interrupt, SuperstepState, Task, VertexResult

__all__ = [
    "NO_SPAN",
    "OFF",
    "AttemptSpan",
    "NoSpan",
    "Parent",
    "RunTrace",
    "attempt_paused",
    "attempt_resumed",
    "attempt_span",
    "caller",
    "run_trace",
]

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
    tracer = _tracer()
    if tracer is None:
        return None
    from opentelemetry import context  # noqa: PLC0415 - loaded already: `_tracer` found it

    return Parent(tracer, context.get_current(), {})


def _attributes(run_id: str, thread_id: str | None, namespace: str) -> dict[str, Any]:
    attributes: dict[str, Any] = {"actorgraph.run_id": run_id}
    if thread_id is not None:
        attributes["actorgraph.thread_id"] = thread_id
    if namespace:
        attributes["actorgraph.namespace"] = namespace
    return attributes


def _failed(span: Any, error: ErrorInfo) -> None:
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


def _asked(span: Any, interrupts: tuple[Interrupt, ...]) -> None:
    for pending in interrupts:
        span.add_event(
            "actorgraph.interrupt",
            {
                "actorgraph.interrupt.id": pending.id,
                "actorgraph.vertex": pending.vertex,
                "actorgraph.kind": pending.kind,
            },
        )


class RunTrace:
    """The spans of one run, opened and closed on its coordinator's thread."""

    def __init__(self, parent: Parent, attributes: dict[str, Any], step: int) -> None:
        """Open the run's span as a child of `parent`'s context."""
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
        self._step = self._tracer.start_span(
            "actorgraph.superstep", context=self._context, attributes=attributes
        )
        self.tasks = Parent(
            self._tracer, self._trace.set_span_in_context(self._step, self._context), self._attributes
        )

    def superstep_ended(self, superstep: SuperstepState) -> None:
        """Close the superstep's span with its outcome: committed, interrupted or error (its failed tasks)."""
        span = self._step
        if span is None:
            return
        failed = superstep.failed
        if failed and failed[0].error is not None:
            first = failed[0]
            span.set_attribute("actorgraph.failed", [r.task_id for r in failed])
            _failed(span, first.error)  # type: ignore[arg-type] # checked above
        questions = superstep.questions
        if questions:  # the vertices' questions and `interrupt_before` breakpoints: on the run's span too
            _asked(span, questions)
            _asked(self._span, questions)
        outcome = "error" if failed else "interrupted" if questions else "committed"
        self._close_step(outcome)

    def finished(self, status: str, step: int, error: BaseException | None) -> None:
        """Close the run's span (and an open superstep's): `done`, `interrupted`, `error` or `cancelled`."""
        self._close_step(status)
        self._span.set_attribute("actorgraph.status", status)
        self._span.set_attribute("actorgraph.last_step", step)
        if error is not None:
            _failed(self._span, ErrorInfo.from_exception(error))
        self._span.end()

    def _close_step(self, outcome: str) -> None:
        if self._step is None:
            return
        self._step.set_attribute("actorgraph.outcome", outcome)
        self._step.end()
        self._step = None
        self.tasks = None


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
    """The spans of the run of `graph` that `setup` starts: `OFF` when it is not traced (`parent` None)."""
    if parent is None:
        return OFF
    attributes = _attributes(setup.run_id, setup.thread_id, setup.namespace)
    attributes["actorgraph.graph"] = graph
    return RunTrace(parent, attributes, setup.position.step)


class _Ordered(Protocol):
    """What an attempt's span reads of its order (`messages.Order`)."""

    @property
    def trace(self) -> Parent | None: ...
    @property
    def task(self) -> Task: ...
    @property
    def attempt(self) -> int: ...
    @property
    def failure(self) -> ErrorInfo | None: ...


class AttemptSpan:
    """The span of one task attempt: `outcome` records what happened, `close` ends it.

    A vertex that waits in its actor for an answer (a live interrupt) ends its
    span when it asks (`attempt_paused`) and goes on in a new span of the
    resumed run's attempt (`attempt_resumed`).
    """

    def __init__(self, parent: Parent, order: _Ordered, *, current: bool) -> None:
        """Open the span; with `current`, make it the current span of this thread (or coroutine)."""
        self._tokens: list[Any] = []  # OpenTelemetry context tokens, detached last first
        self._current = current
        self._mine: Any = None  # the token of `_ATTEMPT`
        self.span: Any = None
        self._open(parent, order)
        if current:
            self._mine = _ATTEMPT.set(self)

    def _open(self, parent: Parent, order: _Ordered) -> None:
        from opentelemetry import context, trace  # noqa: PLC0415 - only traced runs get here

        task = order.task
        attributes = {
            **parent.attributes,
            "actorgraph.step": task.step,
            "actorgraph.vertex": task.vertex,
            "actorgraph.task_id": task.id,
            "actorgraph.attempt": order.attempt,
        }
        if order.failure is not None:
            attributes["actorgraph.handler"] = True  # the vertex's on_error handler runs
        self.span = parent.tracer.start_span("actorgraph.task", context=parent.context, attributes=attributes)
        self.context = trace.set_span_in_context(self.span, parent.context)
        self._parent = parent
        self._outcome = False
        if self._current:
            self._tokens.append(context.attach(self.context))

    def outcome(self, result: VertexResult) -> None:
        """Record the attempt's outcome: its status, and its error or its question."""
        if self.span is None:
            return
        self._outcome = True
        self.span.set_attribute("actorgraph.outcome", result.status)
        if result.error is not None and result.status == "error":
            _failed(self.span, result.error)
        elif result.interrupt is not None:
            _asked(self.span, (result.interrupt,))

    def pause(self, result: VertexResult) -> None:
        """The vertex reports `result` (its question) and waits in its actor: the span ends here."""
        self.outcome(result)
        self._end()

    def resume(self, order: _Ordered) -> None:
        """The waiting vertex goes on as `order`'s attempt: a span of its own, current from here."""
        if self.span is None and order.trace is not None:
            self._open(order.trace, order)

    def close(self) -> None:
        """Stop being current, and end the span (without an outcome, its actor died or it was given up)."""
        if self._tokens:
            from opentelemetry import context  # noqa: PLC0415 - loaded with the span

            while self._tokens:
                context.detach(self._tokens.pop())
        if self._mine is not None:
            _ATTEMPT.reset(self._mine)
            self._mine = None
        self._end()

    def _end(self) -> None:
        if self.span is None:
            return
        if not self._outcome:
            self.span.set_attribute("actorgraph.outcome", "none")
        self.span.end()
        self.span = None

    def runs(self) -> Parent:
        """The parent of the runs this attempt starts (a subgraph task's run)."""
        return Parent(self._parent.tracer, self.context, {})

    def carrier(self) -> dict[str, str]:
        """This span's context as W3C trace-context headers (`traceparent`), for a Ray worker."""
        from opentelemetry import propagate  # noqa: PLC0415 - Ray runs only, once traced

        carrier: dict[str, str] = {}
        propagate.inject(carrier, context=self.context)
        return carrier


_ATTEMPT: contextvars.ContextVar[AttemptSpan | None] = contextvars.ContextVar(
    "actorgraph_attempt", default=None
)


def attempt_paused(result: VertexResult) -> None:
    """A live interrupt: the attempt running here reports `result` and waits; its span ends with it."""
    span = _ATTEMPT.get()
    if span is not None:
        span.pause(result)


def attempt_resumed(order: _Ordered) -> None:
    """A live interrupt answered: the vertex waiting here goes on as `order`'s attempt, in a new span."""
    span = _ATTEMPT.get()
    if span is not None:
        span.resume(order)


class NoSpan:
    """The span of an attempt of a run that is not traced: nothing."""

    def outcome(self, result: VertexResult) -> None:
        """Nothing."""

    def close(self) -> None:
        """Nothing."""

    def runs(self) -> Parent | None:
        """No parent: the runs it starts are not traced either."""
        return None

    def carrier(self) -> dict[str, str] | None:
        """No carrier: the worker attaches nothing."""
        return None


NO_SPAN = NoSpan()


def attempt_span(order: _Ordered, *, current: bool = True) -> AttemptSpan | NoSpan:
    """The span of `order`'s attempt, opened now (`NO_SPAN` when its run is not traced).

    Args:
        order: the attempt's order.
        current: make it this thread's (or coroutine's) current span until `close()`:
            where the vertex function runs here. Not for a subgraph task or a Ray call.
    """
    parent = order.trace
    if parent is None:
        return NO_SPAN
    return AttemptSpan(parent, order, current=current)
