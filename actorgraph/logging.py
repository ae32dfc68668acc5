"""One-call logging set-up for applications and the examples.

The library itself configures nothing: call `configure()` in your program (not
in a library) to see actorgraph's events rendered by structlog.
"""

from __future__ import annotations

import logging
import sys

import structlog

from actorgraph._actors.log import stdlib_logger

__all__ = ["configure"]


def configure(*, json: bool | None = None, level: int | str = logging.INFO) -> logging.Handler:
    """Render actorgraph's events on stderr with structlog.

    Args:
        json: True for one JSON object per line, False for a console renderer;
            None picks the console renderer when stderr is a terminal, JSON otherwise.
        level: the lowest level shown.

    Returns:
        The handler added to the `"actorgraph"` logger (remove it to undo).
    """
    if json is None:
        json = not sys.stderr.isatty()
    renderer: structlog.types.Processor = (
        structlog.processors.JSONRenderer() if json else structlog.dev.ConsoleRenderer(colors=False)
    )
    formatter = structlog.stdlib.ProcessorFormatter(
        processor=renderer,
        foreign_pre_chain=[
            structlog.stdlib.add_log_level,
            structlog.stdlib.ExtraAdder(),
            structlog.processors.TimeStamper(fmt="iso"),
            structlog.processors.format_exc_info,
        ],
    )
    handler = logging.StreamHandler()
    handler.setFormatter(formatter)
    stdlib_logger.addHandler(handler)
    stdlib_logger.setLevel(level)
    return handler
