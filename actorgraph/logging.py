"""One-call logging set-up for applications and the examples.

The library itself configures nothing: call `configure()` in your program (not
in a library) to see actorgraph's events rendered by structlog.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import MutableMapping, Sequence
from typing import Any

import structlog

from actorgraph._api.text import printable

__all__ = ["configure"]

_MULTILINE = frozenset({"exception", "stack"})  # tracebacks: their lines are meant as lines
_NOISE = ("color_message",)  # uvicorn's records carry a coloured copy of their message


def _dropped(_logger: Any, _name: str, event: MutableMapping[str, Any]) -> MutableMapping[str, Any]:
    for key in _NOISE:
        event.pop(key, None)
    return event


def _printable(logger: Any, name: str, event: MutableMapping[str, Any]) -> MutableMapping[str, Any]:
    """Escape control characters in text fields, newlines too but in tracebacks: one field, one line."""
    for key, value in _dropped(logger, name, event).items():
        if isinstance(value, str):
            event[key] = printable(value, lines=key in _MULTILINE)
    return event


def configure(
    *,
    json: bool | None = None,
    level: int | str = logging.INFO,
    loggers: Sequence[str] = ("actorgraph",),
) -> logging.Handler:
    """Render actorgraph's events on stderr with structlog.

    Args:
        json: True for one JSON object per line, False for a console renderer;
            None picks the console renderer when stderr is a terminal, JSON otherwise.
            The console renderer escapes control characters in every field but a
            traceback, so one event is one line whatever a thread id or an error holds.
        level: the lowest level shown.
        loggers: the standard library loggers rendered (and set to `level`):
            actorgraph's; add `"uvicorn"` to see a server's requests and errors the same way.

    Returns:
        The handler added to each of `loggers` (remove it to undo).
    """
    if json is None:
        json = not sys.stderr.isatty()
    renderer: structlog.types.Processor = (
        structlog.processors.JSONRenderer() if json else structlog.dev.ConsoleRenderer(colors=False)
    )
    formatter = structlog.stdlib.ProcessorFormatter(
        processors=[
            structlog.stdlib.ProcessorFormatter.remove_processors_meta,
            _dropped if json else _printable,
            renderer,
        ],
        foreign_pre_chain=[
            structlog.stdlib.add_log_level,
            structlog.stdlib.ExtraAdder(),
            structlog.processors.TimeStamper(fmt="iso"),
            structlog.processors.format_exc_info,
        ],
    )
    handler = logging.StreamHandler()
    handler.setFormatter(formatter)
    for name in loggers:
        logger = logging.getLogger(name)
        logger.addHandler(handler)
        logger.setLevel(level)
    return handler
