"""The log of the command line's long-running commands (`serve`, `worker`): one event a line, on stderr.

Each line is an event and its fields (thread, run, vertex, worker, error...):
text (`event  key=value ...`, control characters escaped) or, with
`--log-format json`, one JSON object a line. Tracebacks go into the log, never
into a page or an answer.
"""

from __future__ import annotations

import logging

import click

import actorgraph.logging
from actorgraph.cli._options import Callback

__all__ = ["LOG_FORMATS", "log_format_option", "log_to_stderr"]

LOG_FORMATS = ("text", "json")


def log_format_option(fn: Callback) -> Callback:
    """Add `--log-format text|json`, passed to the callback as `log_format`."""
    return click.option(
        "--log-format",
        "log_format",
        type=click.Choice(LOG_FORMATS),
        default="text",
        show_default=True,
        help="How the log on stderr reads: text lines (the event, then its fields as key=value), "
        "or one JSON object a line.",
    )(fn)


def log_to_stderr(log_format: str, *, server: bool = False) -> None:
    """Render actorgraph's events (and, for a server, uvicorn's requests and errors) on stderr."""
    loggers = ("actorgraph", "uvicorn") if server else ("actorgraph",)
    actorgraph.logging.configure(json=log_format == "json", level=logging.INFO, loggers=loggers)
