"""A thread named on the command line: its id checked, and the graph `run` recorded with it.

`run` records its TARGET with the thread (`set_metadata(thread, {"graph": ...})`):
a graph file's path or a Python file's path made absolute, a module name as
given. `answer` and `resume` open that graph unless `-g` names another one;
`$ACTORGRAPH_GRAPH` names the graph of a thread that has none recorded (run
before it was recorded, or by the Python API). A recorded target is data from
the store: it is checked like one typed, and a target that cannot be found
says which one it was and how to give it with `-g`.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

from actorgraph import ActorGraphError, CompiledGraph, ConfigError
from actorgraph.checkpoint import Checkpointer
from actorgraph.checkpoint._store import check_thread_id
from actorgraph.cli._console import safe
from actorgraph.cli._exits import CommandError
from actorgraph.cli._opened import open_store, opened
from actorgraph.cli._options import GraphChoice, StoreChoice

__all__ = [
    "GRAPH_KEY",
    "checked_thread",
    "graph_for",
    "is_stored",
    "opened_graph",
    "record_graph",
    "recorded_form",
]

GRAPH_KEY = "graph"
"""The key of the thread metadata that holds its graph's TARGET."""

_LONGEST = 4096  # characters of a recorded TARGET: a path, or a module and a name


def checked_thread(thread: str, option: str = "THREAD") -> str:
    """`thread` if the API takes it as a thread id, else a usage error (exit 2) saying why.

    Raises:
        CommandError: empty, too long, control or invisible characters, `|`, spaces at an end.
    """
    try:
        return check_thread_id(thread)
    except ConfigError as exc:
        raise CommandError(f"{option}: {exc}") from None


def is_stored(checkpointer: Checkpointer, thread: str) -> bool:
    """Whether the store has `thread`; a head row too damaged to read counts (loading it tells why)."""
    try:
        return checkpointer.get(thread) is not None
    except ActorGraphError:
        raise
    except (TypeError, ValueError, KeyError, IndexError):  # a stored row of the wrong types: it is there
        return True


def recorded_form(target: str) -> str:
    """TARGET as recorded with a thread: a file's path made absolute, `module:graph` as given."""
    if target.endswith((".yaml", ".yml")):
        return str(Path(target).resolve())
    where, _, attribute = target.rpartition(":")
    if where.endswith(".py") or "/" in where or os.sep in where:
        return f"{Path(where).resolve()}:{attribute}"
    return target


def record_graph(app: CompiledGraph[Any], thread: str, target: str) -> None:
    """Record TARGET with `thread` in the graph's store, so `answer` and `resume` need no `-g`."""
    assert app.checkpointer is not None  # noqa: S101 - opened() gives only graphs with a store
    app.checkpointer.set_metadata(thread, {GRAPH_KEY: recorded_form(target)})


def graph_for(thread: str, graph: GraphChoice | None, store: StoreChoice) -> GraphChoice:
    """The graph of `thread`: `-g` if typed, else the one recorded with it, else `$ACTORGRAPH_GRAPH`.

    Raises:
        CommandError: no graph at all (exit 2), or the thread is not in the store.
    """
    if graph is not None and not graph.from_env:
        return graph
    try:
        recorded = _recorded(thread, store)
    except CommandError:
        if graph is None:
            raise
        return graph  # the store is not here: $ACTORGRAPH_GRAPH may name a graph with its own store
    if recorded is not None:
        return GraphChoice(recorded, recorded=True)
    if graph is not None:
        return graph
    msg = (
        f"thread {thread!r} has no graph recorded with it (it was run before graphs were recorded, "
        "or from Python); name its graph with -g TARGET or $ACTORGRAPH_GRAPH"
    )
    raise CommandError(msg)


def _recorded(thread: str, store: StoreChoice) -> str | None:
    """The TARGET recorded with `thread`, checked; None if there is none."""
    with open_store(store, readonly=True) as checkpointer:
        if not is_stored(checkpointer, thread):
            raise CommandError(f"thread {thread!r} has no stored checkpoint")
        target = checkpointer.get_metadata(thread).get(GRAPH_KEY)
    if target is None:
        return None
    typed = isinstance(target, str) and target.strip() and len(target) <= _LONGEST
    if not typed or safe(target, lines=False) != target:
        shown = safe(repr(target)[:200], lines=False)
        msg = f"the graph recorded with thread {thread!r} is not a TARGET ({shown}); name it with -g TARGET"
        raise CommandError(msg)
    return target


@contextmanager
def opened_graph(graph: GraphChoice, store: StoreChoice, thread: str) -> Iterator[CompiledGraph[Any]]:
    """`opened(graph.target, store)`; a recorded graph that cannot be opened says so, and how to give one.

    Raises:
        CommandError: a recorded TARGET is missing or moved (exit 2), or its code fails (exit 1).
    """
    with ExitStack() as stack:
        try:
            app = stack.enter_context(opened(graph.target, store))
        except CommandError as exc:
            if not graph.recorded:
                raise
            msg = (
                f"thread {thread!r} was run with the graph {graph.target!r} (recorded with the thread), "
                f"which cannot be opened here: {exc}; name the graph with -g TARGET"
            )
            raise CommandError(msg, code=exc.code) from exc
        yield app
