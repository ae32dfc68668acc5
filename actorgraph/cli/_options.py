"""The options commands share (the store, the graph, the output), each bundled into a record."""

from __future__ import annotations

import functools
import shlex
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import click
from click.core import ParameterSource

from actorgraph.checkpoint import Checkpointer
from actorgraph.cli._codes import EXIT_CODES

__all__ = [
    "DEFAULT_DB",
    "GraphChoice",
    "Output",
    "StoreChoice",
    "allow_modules_option",
    "allowed_modules",
    "command",
    "command_line",
    "graph_option",
    "output_options",
    "store_options",
]

DEFAULT_DB = "actorgraph.db"

Callback = Callable[..., int]


@dataclass(frozen=True, slots=True)
class Output:
    """How a command reports: JSON on stdout (`--json`), tracebacks (`--debug`)."""

    json: bool = False
    debug: bool = False


@dataclass(frozen=True, slots=True)
class StoreChoice:
    """The store chosen with `--db` / `--dsn`, and whether they were given on the command line."""

    db: str = DEFAULT_DB
    dsn: str | None = None
    given: bool = False

    def open(self, *, readonly: bool = False) -> Checkpointer:
        """Open the chosen store (PostgreSQL when a DSN is given, else the SQLite file)."""
        from actorgraph.checkpoint import PostgresCheckpointer, SqliteCheckpointer  # noqa: PLC0415

        if self.dsn:
            return PostgresCheckpointer(self.dsn)
        return SqliteCheckpointer(self.db, readonly=readonly)

    def words(self) -> list[str]:
        """The options that choose this store again in a printed command (none for the defaults)."""
        if not self.given:
            return []
        return ["--dsn", self.dsn] if self.dsn else ["--db", self.db]


@dataclass(frozen=True, slots=True)
class GraphChoice:
    """TARGET as given with `-g` / `--graph`, or `$ACTORGRAPH_GRAPH`, or recorded with the thread.

    The last two need no repeating in a printed command.
    """

    target: str
    from_env: bool = False
    recorded: bool = False

    def words(self) -> list[str]:
        """The option that names this graph again in a printed command."""
        return [] if self.from_env or self.recorded else ["-g", self.target]


def command_line(*words: str) -> str:
    """A command to copy and paste, quoted for a POSIX shell."""
    return shlex.join(["actorgraph", *words])


def _given(name: str) -> bool:
    return click.get_current_context().get_parameter_source(name) is ParameterSource.COMMANDLINE


def output_options(fn: Callback) -> Callback:
    """Add `--json` and `--debug`, passed to the callback as `out: Output`."""

    @functools.wraps(fn)
    def callback(*args: Any, as_json: bool, debug: bool, **kwargs: Any) -> int:
        return fn(*args, out=Output(json=as_json, debug=debug), **kwargs)

    callback = click.option("--debug", is_flag=True, help="Show tracebacks of errors.")(callback)
    return click.option(
        "--json", "as_json", is_flag=True, help="Machine-readable JSON on stdout (the view goes to stderr)."
    )(callback)


def store_options(fn: Callback) -> Callback:
    """Add `--db` and `--dsn`, passed to the callback as `store: StoreChoice` (and `--allow-module`).

    Every command that opens a store may load a graph file, so each takes `--allow-module` too.
    """

    @functools.wraps(fn)
    def callback(*args: Any, db: str, dsn: str | None, **kwargs: Any) -> int:
        db_given, dsn_given = _given("db"), _given("dsn")
        if db_given and dsn_given:  # which one is meant cannot be guessed
            msg = "give --db PATH (a SQLite store) or --dsn DSN (a PostgreSQL store), not both"
            raise click.UsageError(msg)
        if db_given:
            dsn = None  # a file typed on the command line wins over $ACTORGRAPH_DSN
        store = StoreChoice(db=db, dsn=dsn, given=db_given or dsn_given)
        return fn(*args, store=store, **kwargs)

    options = allow_modules_option(callback)
    options = click.option(
        "--dsn",
        envvar="ACTORGRAPH_DSN",
        metavar="DSN",
        help="A PostgreSQL store instead: postgresql://user@host/db ($ACTORGRAPH_DSN).",
    )(options)
    return click.option(
        "--db",
        envvar="ACTORGRAPH_DB",
        default=DEFAULT_DB,
        show_default=True,
        metavar="PATH",
        help="The SQLite store file ($ACTORGRAPH_DB).",
    )(options)


_ALLOWED = "actorgraph.allow_modules"  # where the command's context keeps the list


def allow_modules_option(fn: Callback) -> Callback:
    """Add `--allow-module MODULE` (repeatable, or `$ACTORGRAPH_ALLOW_MODULES`, comma-separated).

    When given, a graph file (TARGET.yaml) may import only these modules and those under them;
    `allowed_modules()` reads the list where the graph is loaded.
    """
    return click.option(
        "--allow-module",
        "allow_modules",
        multiple=True,
        envvar="ACTORGRAPH_ALLOW_MODULES",
        metavar="MODULE",
        expose_value=False,
        callback=_keep_allowed,
        help="A graph file may import only this module (and those under it); repeat for more "
        "($ACTORGRAPH_ALLOW_MODULES, comma-separated).",
    )(fn)


def _keep_allowed(context: click.Context, _option: click.Parameter, values: tuple[str, ...]) -> None:
    names = [name.strip() for value in values for name in value.split(",") if name.strip()]
    for name in names:
        if not all(part.isidentifier() for part in name.split(".")):
            raise click.BadParameter(f"{name!r} is not a module name: write package or package.module")
    context.meta[_ALLOWED] = tuple(names) if values else None


def allowed_modules() -> tuple[str, ...] | None:
    """The modules a graph file may import in this command (`--allow-module`), or None for any."""
    context = click.get_current_context(silent=True)
    return None if context is None else context.meta.get(_ALLOWED)


GRAPH_HELP = (
    "The graph (TARGET: flow.yaml, package.module:graph or file.py:graph), instead of the one "
    "`run` recorded with the thread; $ACTORGRAPH_GRAPH for a thread without one. A CompiledGraph "
    "with a checkpointer uses its own store (no --db/--dsn)."
)


def graph_option(*, required: bool = True) -> Callable[[Callback], Callback]:
    """Add `-g` / `--graph TARGET`, passed to the callback as `graph: GraphChoice` (None if absent)."""

    def decorate(fn: Callback) -> Callback:
        @functools.wraps(fn)
        def callback(*args: Any, graph: str | None, **kwargs: Any) -> int:
            source = click.get_current_context().get_parameter_source("graph")
            choice = None if graph is None else GraphChoice(graph, source is ParameterSource.ENVIRONMENT)
            return fn(*args, graph=choice, **kwargs)

        return click.option(
            "-g", "--graph", envvar="ACTORGRAPH_GRAPH", required=required, metavar="TARGET", help=GRAPH_HELP
        )(callback)

    return decorate


def command(name: str, *, examples: Sequence[str]) -> Callable[[Callback], click.Command]:
    """A command whose help ends with its examples and the exit codes."""
    shown = "\n".join(f"  {line}" for line in examples)
    epilog = f"\b\nExamples:\n{shown}\n\n{EXIT_CODES}"
    return click.command(name, epilog=epilog, context_settings={"max_content_width": 100})
