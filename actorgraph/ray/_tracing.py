"""The worker's side of a traced attempt on Ray: the driver's attempt span, current while the vertex runs.

The driver sends the attempt span's context as W3C trace-context headers
(`_actors/tracing.AttemptSpan.carrier`); spans the vertex function makes in
the worker are then its children, exported by the worker's own tracer
provider if it has one. An untraced run sends no carrier, and the worker
imports nothing of OpenTelemetry.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from typing import Any

__all__ = ["attached"]


class _Attached:
    """The context of a driver's attempt span, current in a Ray worker while its vertex runs."""

    def __init__(self, carrier: Mapping[str, str]) -> None:
        from opentelemetry import context, propagate  # noqa: PLC0415 - a traced run's attempt, in a worker

        self._context = context
        self._extracted = propagate.extract(carrier)
        self._token: Any = None

    def __enter__(self) -> None:
        self._token = self._context.attach(self._extracted)

    def __exit__(self, *exc: object) -> None:
        self._context.detach(self._token)


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
