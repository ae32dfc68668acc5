"""What a worker runs: a `Graph`, a `CompiledGraph`, an `@entrypoint`, or TARGET text as the CLI reads it."""

from __future__ import annotations

import importlib
import importlib.util
import sys
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

from actorgraph import CompiledGraph, ConfigError, Graph, load
from actorgraph.checkpoint import Checkpointer
from actorgraph.func import Entrypoint
from actorgraph.func._entrypoint import compiled_on

__all__ = ["Target", "compiled_on_store", "open_store"]

Runnable = Graph[Any] | CompiledGraph[Any] | Entrypoint[Any]
Target = str | Runnable | Callable[[], Runnable]
"""What a worker runs: a graph, a compiled graph with its own SQL store, an `@entrypoint`, a function
returning one of them, or TARGET text (`flow.yaml`, `package.module:graph`, `path/to/file.py:graph`)."""

_FORMS = "a YAML file (flow.yaml), package.module:graph or path/to/file.py:graph"


def _imported(where: str) -> Any:
    if where.endswith(".py") or "/" in where:
        path = Path(where)
        if not path.is_file():
            raise ConfigError(f"no Python file {where!r}: it does not exist or is not a file")
        spec = importlib.util.spec_from_file_location(path.stem, path)
        if spec is None or spec.loader is None:
            raise ConfigError(f"{where!r} cannot be imported as Python code")
        module = importlib.util.module_from_spec(spec)
        sys.path.insert(0, str(path.resolve().parent))
        sys.modules[path.stem] = module
        spec.loader.exec_module(module)
        return module
    if "" not in sys.path and str(Path.cwd()) not in sys.path:
        sys.path.insert(0, str(Path.cwd()))
    return importlib.import_module(where)


def _found(target: str) -> Any:
    """The object TARGET text names."""
    if target.endswith((".yaml", ".yml")):
        if not Path(target).is_file():
            raise ConfigError(f"no graph file {target!r}: it does not exist or is not a file")
        return load(target)
    where, _, attribute = target.rpartition(":")
    if not where or not attribute:
        raise ConfigError(f"TARGET {target!r} names no graph; give {_FORMS}")
    try:
        value = _imported(where)
        for part in attribute.split("."):
            value = getattr(value, part)
    except ConfigError:
        raise
    except Exception as exc:
        msg = f"loading {target} failed: {type(exc).__name__}: {exc}"
        raise ConfigError(msg) from exc
    return value


def _graph(target: Target) -> Runnable:
    value: Any = _found(target) if isinstance(target, str) else target
    if callable(value) and not isinstance(value, Graph | CompiledGraph | Entrypoint):
        value = value()
    if not isinstance(value, Graph | CompiledGraph | Entrypoint):
        kind = type(value).__name__
        msg = (
            f"a worker runs a Graph, a CompiledGraph or an @entrypoint (or a function returning one), "
            f"not {kind}"
        )
        raise ConfigError(msg)
    return value


def open_store(dsn: str | None, db: str | None) -> Checkpointer:
    """`PostgresCheckpointer(dsn)` or `SqliteCheckpointer(db)`, exactly one of them.

    Raises:
        ConfigError: both or neither given.
        CheckpointError: the database cannot be reached or opened.
    """
    from actorgraph.checkpoint import PostgresCheckpointer, SqliteCheckpointer  # noqa: PLC0415 - lazy stores

    if (dsn is None) == (db is None):
        msg = (
            "give the store the workers share: dsn='postgresql://...' (any machines) or db=PATH (one machine)"
        )
        raise ConfigError(msg)
    if dsn is not None:
        if not isinstance(dsn, str) or not dsn.strip():
            raise ConfigError(f"dsn={dsn!r}: give a PostgreSQL connection string, postgresql://...")
        return PostgresCheckpointer(dsn)
    return SqliteCheckpointer(str(db))


def _entrypoint_store(
    stack: ExitStack, entry: Entrypoint[Any], dsn: str | None, db: str | None
) -> Checkpointer:
    """The store an entrypoint's runs are taken from: `dsn`/`db` (closed with `stack`), else its own."""
    if dsn is not None or db is not None:
        store = open_store(dsn, db)
        stack.callback(store.close)
        return store
    if entry.graph.checkpointer is None:
        msg = (
            f"entrypoint {entry.name!r} has no checkpointer: give the store its runs are queued in "
            "(dsn='postgresql://...' or db=PATH)"
        )
        raise ConfigError(msg)
    return entry.graph.checkpointer


@contextmanager
def compiled_on_store(target: Target, dsn: str | None, db: str | None) -> Iterator[CompiledGraph[Any]]:
    """TARGET compiled on the chosen store (or with its own SQL checkpointer), closed afterwards.

    A `Graph` is compiled on the store `dsn`/`db` name, and so is an `@entrypoint`
    (without them, on its own checkpointer); a `CompiledGraph` keeps its own.

    Raises:
        ConfigError: TARGET names no graph, a compiled graph with its own store is given
            one, or neither it nor an entrypoint without one has a store.
    """
    graph = _graph(target)
    with ExitStack() as stack:
        if isinstance(graph, Entrypoint):
            yield stack.enter_context(compiled_on(graph, _entrypoint_store(stack, graph, dsn, db)))
            return
        if isinstance(graph, CompiledGraph):
            stack.callback(graph.close)
            if dsn is not None or db is not None:
                raise ConfigError(
                    "TARGET is a CompiledGraph with its own checkpointer: dsn/db cannot change it"
                )
            if graph.checkpointer is None:
                raise ConfigError(
                    "TARGET is a CompiledGraph without a checkpointer: workers need a shared store"
                )
            yield graph
            return
        store = open_store(dsn, db)
        stack.callback(store.close)
        yield stack.enter_context(graph.compile(checkpointer=store))
