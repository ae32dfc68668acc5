"""The span of a task attempt: current while its vertex runs, so the spans the vertex makes are its children.

An attempt's span is a child of its superstep's span (`tracing.RunTrace`). On
threads it is the *current* span while the vertex function runs; a subgraph
task's span is the parent of its subgraph's run span; on Ray it lives on the
driver and its context travels to the worker as a W3C `traceparent` carrier
(`actorgraph.ray._tracing`). A vertex waiting live for its answer ends its span
when it asks and goes on in a span of the resumed run's attempt.

Every call into OpenTelemetry is contained (`tracing.lost`): a span processor
that raises costs the attempt its span, never its outcome.
"""

from __future__ import annotations

import contextvars
from typing import Any, Protocol

from actorgraph._actors.tracing import Parent, asked, end_span, failed, lost
from actorgraph._model.records import ErrorInfo, Task, VertexResult

__all__ = ["NO_SPAN", "AttemptSpan", "NoSpan", "attempt_paused", "attempt_resumed", "attempt_span"]

_WHERE = "a task attempt's span"


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
        """Open the span; with `current`, make it the current span of this thread (or coroutine).

        Raises:
            Exception: whatever OpenTelemetry raised opening it (`attempt_span` contains it).
        """
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
        try:
            self.span.set_attribute("actorgraph.outcome", result.status)
            if result.error is not None and result.status == "error":
                failed(self.span, result.error)
            elif result.interrupt is not None:
                asked(self.span, (result.interrupt,))
        except Exception as exc:  # noqa: BLE001 - tracing observes a run, it never decides one
            lost(_WHERE, exc)

    def pause(self, result: VertexResult) -> None:
        """The vertex reports `result` (its question) and waits in its actor: the span ends here."""
        self.outcome(result)
        self._end()

    def resume(self, order: _Ordered) -> None:
        """The waiting vertex goes on as `order`'s attempt: a span of its own, current from here."""
        if self.span is None and order.trace is not None:
            try:
                self._open(order.trace, order)
            except Exception as exc:  # noqa: BLE001 - tracing observes a run, it never decides one
                lost(_WHERE, exc)  # it goes on without a span

    def close(self) -> None:
        """Stop being current, and end the span (without an outcome, its actor died or it was given up)."""
        if self._tokens:
            from opentelemetry import context  # noqa: PLC0415 - loaded with the span

            while self._tokens:
                try:
                    context.detach(self._tokens.pop())
                except Exception as exc:  # noqa: BLE001 - tracing observes a run, it never decides one
                    lost(_WHERE, exc)
        if self._mine is not None:
            _ATTEMPT.reset(self._mine)
            self._mine = None
        self._end()

    def _end(self) -> None:
        span, self.span = self.span, None
        if span is not None:
            end_span(span, _WHERE, None if self._outcome else ("actorgraph.outcome", "none"))

    def runs(self) -> Parent:
        """The parent of the runs this attempt starts (a subgraph task's run)."""
        return Parent(self._parent.tracer, self.context, {})

    def carrier(self) -> dict[str, str] | None:
        """This span's context as W3C trace-context headers (`traceparent`), for a Ray worker.

        None when the propagator failed: the worker's spans then have no parent here.
        """
        from opentelemetry import propagate  # noqa: PLC0415 - Ray runs only, once traced

        carrier: dict[str, str] = {}
        try:
            propagate.inject(carrier, context=self.context)
        except Exception as exc:  # noqa: BLE001 - tracing observes a run, it never decides one
            lost("a task attempt's trace context, for its worker", exc)
            return None
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
    """The span of `order`'s attempt, opened now (`NO_SPAN` when its run is not traced, or it failed to open).

    Args:
        order: the attempt's order.
        current: make it this thread's (or coroutine's) current span until `close()`:
            where the vertex function runs here. Not for a subgraph task or a Ray call.
    """
    parent = order.trace
    if parent is None:
        return NO_SPAN
    try:
        return AttemptSpan(parent, order, current=current)
    except Exception as exc:  # noqa: BLE001 - tracing observes a run, it never decides one
        lost(_WHERE, exc)  # the attempt runs without a span
        return NO_SPAN
