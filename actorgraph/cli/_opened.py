"""Opening TARGET on its store: the compiled graph a command works with, closed afterwards."""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

from actorgraph import CompiledGraph, StuckVertexWarning
from actorgraph.checkpoint import Checkpointer
from actorgraph.cli._exits import CommandError
from actorgraph.cli._options import StoreChoice
from actorgraph.cli._target import find
from actorgraph.func import Entrypoint
from actorgraph.func._entrypoint import compiled_on

__all__ = ["close_quickly", "open_store", "opened"]


@contextmanager
def opened(target: str, store: StoreChoice, *, readonly: bool = False) -> Iterator[CompiledGraph[Any]]:
    """TARGET compiled on the chosen store, or with its own checkpointer if it is a compiled graph.

    An `@entrypoint` is compiled on the store `--db`/`--dsn` name, as a graph is;
    without them, on its own checkpointer if it has one, else on the default store.

    Raises:
        CommandError: a compiled graph without a checkpointer, or one given --db/--dsn.
    """
    found = find(target)
    with ExitStack() as stack:
        if isinstance(found, Entrypoint):
            own = found.graph.checkpointer
            if own is None or store.given:
                own = stack.enter_context(open_store(store, readonly=readonly))
            yield stack.enter_context(compiled_on(found, own))
            return
        if isinstance(found, CompiledGraph):
            stack.callback(found.close)
            yield _own_store(found, target, store)
            return
        checkpointer = stack.enter_context(open_store(store, readonly=readonly))
        yield stack.enter_context(found.compile(checkpointer))


def _own_store(app: CompiledGraph[Any], target: str, store: StoreChoice) -> CompiledGraph[Any]:
    if app.checkpointer is None:
        msg = (
            f"{target} is a CompiledGraph without a checkpointer, so its runs cannot be kept; "
            "compile it with one (SqliteCheckpointer(path)), or name the Graph itself and let "
            "--db/--dsn choose the store"
        )
        raise CommandError(msg)
    if store.given:
        msg = f"{target} is a CompiledGraph with its own checkpointer: --db/--dsn cannot change it"
        raise CommandError(msg)
    return app


@contextmanager
def open_store(store: StoreChoice, *, readonly: bool = False) -> Iterator[Checkpointer]:
    """The chosen store, closed afterwards; read-only refuses a SQLite file that does not exist."""
    if readonly and not store.dsn and not Path(store.db).is_file():
        msg = f"no store {store.db!r} here: run a graph first, or give the store with --db or --dsn"
        raise CommandError(msg)
    checkpointer = store.open(readonly=readonly)
    try:
        yield checkpointer
    finally:
        checkpointer.close()


def close_quickly(app: CompiledGraph[Any], timeout: float = 1.0) -> None:
    """Close after Ctrl-C without waiting long for a vertex still running (its outcome is dropped anyway)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", StuckVertexWarning)
        app.close(timeout)
