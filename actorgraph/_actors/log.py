"""The library's structured events, free when nobody listens.

actorgraph configures nothing globally and never prints: every event goes to
the standard library logger `"actorgraph"` (which has a `NullHandler`) with its
fields (run id, thread id, step, vertex, attempt, ...) attached to the log
record. Applications see them once they configure logging; structlog renders
them with its `ProcessorFormatter` and `ExtraAdder`, which is what
`actorgraph.logging.configure()` sets up in one call.
"""

from __future__ import annotations

import logging
from typing import Any

__all__ = ["log", "stdlib_logger"]

stdlib_logger = logging.getLogger("actorgraph")
stdlib_logger.addHandler(logging.NullHandler())

_LEVELS = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "warning": logging.WARNING,
    "error": logging.ERROR,
}


def log(level: str, event: str, **fields: Any) -> None:
    """Emit a structured event at `level` ("debug", "info", "warning", "error").

    Costs one level check when the `"actorgraph"` logger would not show it.
    """
    number = _LEVELS[level]
    if not stdlib_logger.isEnabledFor(number):
        return
    exc_info = fields.pop("exc_info", None)
    stdlib_logger.log(number, event, exc_info=exc_info, extra=fields, stacklevel=2)
