"""The `actorgraph` command line: run graphs, answer and resume their threads, list and draw them.

`actorgraph --help` lists the commands; `docs/reference/cli.md` is the reference.
Only the console script imports this package (it needs click and rich, which
`import actorgraph` never loads).

Layer (docs/design.md): a front end, at the top. May import every layer below it, and
`actorgraph.web` only to serve it (`actorgraph serve`).
"""

from actorgraph.cli._main import main

__all__ = ["main"]
