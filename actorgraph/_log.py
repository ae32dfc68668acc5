"""The library's structured logger.

actorgraph configures nothing globally and never prints. When the application
has configured structlog, events go through its configuration; otherwise they
go to the standard library logger `"actorgraph"`, which has a `NullHandler`, so
they appear only if the application configures logging
(`actorgraph.logging.configure()` does both in one call).
"""

from __future__ import annotations

import logging
from typing import Any

import structlog

__all__ = ["get_logger"]

_stdlib = logging.getLogger("actorgraph")
_stdlib.addHandler(logging.NullHandler())

_fallback = structlog.wrap_logger(
    _stdlib,
    processors=[
        structlog.stdlib.filter_by_level,
        structlog.processors.KeyValueRenderer(key_order=["event"], sort_keys=True),
    ],
    wrapper_class=structlog.stdlib.BoundLogger,
)


def get_logger(**bound: Any) -> Any:
    """A structlog logger for actorgraph, bound with `bound` (run id, vertex, ...)."""
    base = structlog.get_logger("actorgraph") if structlog.is_configured() else _fallback
    return base.bind(**bound) if bound else base
