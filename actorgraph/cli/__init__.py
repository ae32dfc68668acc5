"""The `actorgraph` command line: run graphs, answer and resume their threads, list and draw them.

`actorgraph --help` lists the commands; `docs/reference/cli.md` is the reference.
Only the console script imports this package. It needs the `cli` extra (click,
rich, PyYAML, pydantic), which `pip install actorgraph` leaves out and
`import actorgraph` never loads: `main` checks for them before importing the
commands, so a slim install gets one line naming the extra, not a traceback.

Layer (docs/design.md): a front end, at the top. May import every layer below it, and
`actorgraph.web` and `actorgraph.server` only to serve them (`actorgraph serve`, `actorgraph server`).
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Sequence

from actorgraph.cli._codes import USAGE

__all__ = ["main"]

# The `cli` extra: module name -> the name pip installs it by.
_EXTRA = {"click": "click", "rich": "rich", "yaml": "PyYAML", "pydantic": "pydantic"}


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line with `argv` (default: the process's arguments); return the exit code.

    Without the `cli` extra it prints one line on stderr saying what to install, and returns 2.
    """
    missing = [package for module, package in _EXTRA.items() if importlib.util.find_spec(module) is None]
    if missing:
        args = sys.argv[1:] if argv is None else list(argv)
        extras = {"serve": "cli,web", "server": "cli,server", "crons": "cli,server"}.get(
            args[:1][0] if args else "", "cli"
        )
        sys.stderr.write(
            f"actorgraph: the command line needs the cli extra ({', '.join(missing)} not installed): "
            f'pip install "actorgraph[{extras}]"\n'
        )
        return USAGE
    from actorgraph.cli._main import main as run  # noqa: PLC0415 - only once the extra is known there

    return run(argv)
