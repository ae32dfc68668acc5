"""The `actorgraph` command group, and `main`, the console script's entry point."""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import click

import actorgraph
from actorgraph.cli._codes import DONE, EXIT_CODES, STOPPED
from actorgraph.cli._console import safe, stderr, styled
from actorgraph.cli._crons import crons
from actorgraph.cli._exits import report
from actorgraph.cli._graphs import draw, schema, validate
from actorgraph.cli._running import answer, resume, run
from actorgraph.cli._serve import serve
from actorgraph.cli._server import server
from actorgraph.cli._show import show
from actorgraph.cli._threads import threads
from actorgraph.cli._worker import worker

__all__ = ["main"]

_EPILOG = f"""\b
Examples:
  actorgraph run flow.yaml --input '{{"topic": "release notes"}}' --thread notes-1
  actorgraph threads --status interrupted
  actorgraph answer notes-1 yes
  actorgraph resume notes-1
  actorgraph draw flow.yaml -o flow.svg
  actorgraph serve flow.yaml --db runs.db
  actorgraph worker flow.yaml --dsn postgresql://app@db/runs
  actorgraph server --config langgraph.json
  actorgraph crons add agent '0 9 * * *' --input '{{"topic": "news"}}'

{EXIT_CODES}"""


@click.group(
    epilog=_EPILOG,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)
@click.version_option(actorgraph.__version__, prog_name="actorgraph")
def cli() -> None:
    """Run actorgraph graphs from the shell, answer the questions they wait for, resume them.

    TARGET is a graph file (flow.yaml), package.module:graph or path/to/file.py:graph.
    Threads live in a store: the SQLite file ./actorgraph.db unless --db PATH or
    --dsn postgresql://... says otherwise. `run` records its TARGET with the thread, so
    answer and resume find the graph themselves (-g TARGET overrides it; $ACTORGRAPH_GRAPH
    names it for threads without one); threads and show read the store alone.
    """


for _command in (run, answer, resume, threads, show, draw, validate, schema, serve, server, worker, crons):
    cli.add_command(_command)


def _show_warning(message: Warning | str, *_where: object, **_more: object) -> None:
    """A warning as one line on stderr, not Python's two lines of source location."""
    stderr.print(styled(("warning:", "yellow"), " ", str(message)))


def _usage_line(exc: click.ClickException) -> str:
    """Click's own error (an unknown option, a missing argument) in one line, with where to read more.

    It may quote what was typed: escaped like everything else.
    """
    message = exc.format_message()
    if isinstance(exc, click.UsageError) and exc.ctx is not None:
        message = f"{message} ({exc.ctx.command_path} --help shows how to use it)"
    return safe(message, lines=False)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line with `argv` (default: the process's arguments); return the exit code."""
    shown = warnings.showwarning
    warnings.showwarning = _show_warning
    try:
        code = cli.main(args=argv, prog_name="actorgraph", standalone_mode=False)
    except click.Abort:  # Ctrl-C outside a run: while importing the graph, say
        stderr.print("stopped", highlight=False)
        return STOPPED
    except click.ClickException as exc:
        stderr.print(styled(("error:", "bold red"), " ", _usage_line(exc)))
        return exc.exit_code
    except Exception as exc:  # noqa: BLE001 - one line, never a traceback (commands take --debug)
        return report(exc, debug=False)
    finally:
        warnings.showwarning = shown
    return code if isinstance(code, int) else DONE
