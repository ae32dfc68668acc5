"""Turning whatever stopped a command into one line on stderr and an exit code (`_codes`)."""

from __future__ import annotations

import functools
import time
import traceback
from collections.abc import Callable
from typing import Any

import click

from actorgraph import (
    ActorGraphError,
    AlreadyAnsweredError,
    GraphValidationError,
    ResumeError,
    ThreadNotFoundError,
    VertexError,
)
from actorgraph.cli._codes import ANSWERED, FAILED, USAGE
from actorgraph.cli._console import print_json, safe, stderr, styled

__all__ = [
    "CommandError",
    "describe",
    "error_record",
    "guarded",
    "report",
    "when",
]


class CommandError(Exception):
    """A problem the command line reports in one line: what is wrong and what to do, with its exit code."""

    def __init__(self, message: str, *, code: int = USAGE) -> None:
        super().__init__(message)
        self.code = code


def _exit_code(exc: BaseException) -> int:
    match exc:
        case CommandError():
            return exc.code
        case AlreadyAnsweredError():
            return ANSWERED
        case ThreadNotFoundError() | ResumeError():
            return USAGE
        case _:
            return FAILED


def describe(exc: BaseException) -> str:
    """The one line shown for `exc` (without a traceback)."""
    match exc:
        case VertexError():
            kind = exc.error_type.removeprefix("builtins.")
            tries = "attempt" if exc.attempts == 1 else "attempts"
            return (
                f"vertex {exc.vertex!r} failed in superstep {exc.step} after {exc.attempts} {tries}: "
                f"{kind}: {exc.error_message}"
            )
        case GraphValidationError():
            return f"invalid graph: {exc}"
        case AlreadyAnsweredError():
            return (
                f"already answered by {exc.answered_by}, at {when(exc.answered_at)}: question "
                f"{exc.interrupt_id} of vertex {exc.vertex!r} in thread {exc.thread_id!r}; your answer "
                "was not applied and nothing ran with it"
            )
        case CommandError() | ActorGraphError():
            return str(exc)
        case _:
            return f"{type(exc).__name__}: {exc} (an unexpected error; --debug shows its traceback)"


def when(seconds: float) -> str:
    """`2025-01-31 14:02:11 CET`: a stored wall-clock time, local."""
    try:
        return time.strftime("%Y-%m-%d %H:%M:%S %Z", time.localtime(seconds))
    except (TypeError, ValueError, OverflowError, OSError):  # a forged time
        return repr(seconds)


def report(exc: BaseException, *, debug: bool) -> int:
    """Print `exc` as one line on stderr (with its traceback under --debug) and return its exit code."""
    if debug:
        stderr.print("".join(traceback.format_exception(exc)), soft_wrap=True)
    stderr.print(styled(("error:", "bold red"), " ", safe(describe(exc), lines=False)), soft_wrap=True)
    return _exit_code(exc)


def error_record(exc: BaseException, code: int) -> dict[str, Any]:
    """`exc` for --json: `{"error", "exit_code"}`, and who answered first when the answer was late."""
    record: dict[str, Any] = {"error": describe(exc), "exit_code": code}
    if isinstance(exc, AlreadyAnsweredError):
        record |= {
            "status": "already_answered",
            "thread_id": exc.thread_id,
            "interrupt_id": exc.interrupt_id,
            "vertex": exc.vertex,
            "answered_by": exc.answered_by,
            "answered_at": exc.answered_at,
        }
    return record


def guarded(command: Callable[..., int]) -> Callable[..., int]:
    """Wrap a command's callback: any exception becomes one line on stderr and an exit code.

    The callback's `out` keyword (an `Output`) says whether `--debug` asks for the traceback too,
    and whether `--json` wants `{"error": ..., "exit_code": ...}` on stdout as well.
    """

    @functools.wraps(command)
    def run(*args: Any, **kwargs: Any) -> int:
        try:
            return command(*args, **kwargs)
        except click.ClickException:
            raise  # click's own usage errors print themselves, with the usage line
        except Exception as exc:  # noqa: BLE001 - a command line reports every failure, not only ours
            out = kwargs.get("out")
            code = report(exc, debug=getattr(out, "debug", False))
            if getattr(out, "json", False):
                print_json(error_record(exc, code))
            return code

    return run
