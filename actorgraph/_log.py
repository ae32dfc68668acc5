"""The library's structured logging, free when nobody listens.

actorgraph configures nothing globally and never prints. When the application
has configured structlog, events go through its configuration; otherwise they
go to the standard library logger `"actorgraph"`, which has a `NullHandler`, so
they appear only if the application configures logging
(`actorgraph.logging.configure()` does both in one call). structlog itself is
imported only when an event is actually emitted, which keeps `import
actorgraph` light.
"""

from __future__ import annotations

import logging
import sys
from typing import Any

__all__ = ["log"]

stdlib_logger = logging.getLogger("actorgraph")
stdlib_logger.addHandler(logging.NullHandler())

_LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "warning": logging.WARNING, "error": logging.ERROR}
_fallback: Any = None


def _structlog_configured() -> bool:
    module = sys.modules.get("structlog")
    return module is not None and bool(module.is_configured())


def _logger() -> Any:
    global _fallback  # noqa: PLW0603 - one lazily built wrapper per process
    import structlog  # noqa: PLC0415 - imported on first use, see the module docstring

    if structlog.is_configured():
        return structlog.get_logger("actorgraph")
    if _fallback is None:
        _fallback = structlog.wrap_logger(
            stdlib_logger,
            processors=[structlog.processors.KeyValueRenderer(key_order=["event"], sort_keys=True)],
            wrapper_class=structlog.stdlib.BoundLogger,
        )
    return _fallback


def log(level: str, event: str, **fields: Any) -> None:
    """Emit a structured event at `level` ("debug", "info", "warning", "error").

    Costs one level check when neither structlog nor the `"actorgraph"` logger
    would show it.
    """
    if not _structlog_configured() and not stdlib_logger.isEnabledFor(_LEVELS[level]):
        return
    exc_info = fields.pop("exc_info", None)
    method = getattr(_logger(), level)
    if exc_info is not None:
        method(event, exc_info=exc_info, **fields)
    else:
        method(event, **fields)
