"""The worker's side of a traced attempt on Ray: the driver's attempt span, current while the vertex runs.

The driver sends the attempt span's context as W3C trace-context headers
(`_actors/attempt_spans.AttemptSpan.carrier`); spans the vertex function makes in
the worker are then its children, exported by the worker's own tracer
provider if it has one. An untraced run sends no carrier, and the worker
imports nothing of OpenTelemetry.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from typing import Any

from actorgraph._actors.tracing import lost

__all__ = ["attached"]

_WHERE = "a task attempt's trace context, in its worker"


class _Attached:
    """The context of a driver's attempt span, current in a Ray worker while its vertex runs."""

    def __init__(self, carrier: Mapping[str, str]) -> None:
        from opentelemetry import context, propagate  # noqa: PLC0415 - a traced run's attempt, in a worker

        self._context = context
        self._extracted = propagate.extract(carrier)
        self._token: Any = None

    def __enter__(self) -> None:
        try:
            self._token = self._context.attach(self._extracted)
        except Exception as exc:  # noqa: BLE001 - tracing observes a run, it never decides one
            lost(_WHERE, exc)

    def __exit__(self, *exc: object) -> None:
        if self._token is None:
            return
        try:
            self._context.detach(self._token)
        except Exception as error:  # noqa: BLE001 - tracing observes a run, it never decides one
            lost(_WHERE, error)


_NOTHING = contextlib.nullcontext()


def attached(carrier: Mapping[str, str] | None) -> contextlib.AbstractContextManager[None]:
    """Make the driver's attempt span (from its carrier) the current one meanwhile.

    Without a carrier (an untraced run), or without OpenTelemetry in the
    worker's environment, nothing is imported or attached.
    """
    if carrier is None:
        return _NOTHING
    try:
        return _Attached(carrier)
    except ImportError:  # the worker's environment lacks opentelemetry-api: its vertex runs untraced
        return _NOTHING
    except Exception as exc:  # noqa: BLE001 - a propagator that raises: the vertex runs, untraced
        lost(_WHERE, exc)
        return _NOTHING
