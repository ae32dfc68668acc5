"""A vertex's code on its way to Ray workers: pickled once, by value when workers could not import it."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType

import cloudpickle

from actorgraph._api.invoked import invocables
from actorgraph._engine.call import VertexCode
from actorgraph._model.errors import GraphValidationError
from actorgraph._model.spec import VertexSpec

__all__ = ["pickled_code", "refuse_invocations", "search_path"]


def search_path() -> list[str]:
    """This process's `sys.path` as folders: what Ray workers started here are given to import from."""
    return [str(Path(p or ".").resolve()) for p in sys.path if Path(p or ".").is_dir()]


def pickled_code(path: str, vertex: VertexSpec, shipped: frozenset[str]) -> bytes:
    """`vertex`'s functions pickled for a worker.

    A function from a module outside the folders the workers import from (a
    module next to a graph file, loaded after Ray started) travels by value.

    Raises:
        GraphValidationError: the functions cannot be pickled (naming the vertex path).
    """
    code = VertexCode.of(vertex)
    modules = {_module(fn) for fn in (code.fn, code.on_error) if fn is not None}
    strangers = [m for m in modules if m is not None and not _importable(m, shipped)]
    try:
        with _by_value(strangers):
            blob: bytes = cloudpickle.dumps(code)
    except Exception as exc:
        msg = (
            f"vertex {path!r} cannot run on the Ray backend: its function (or on_error handler) "
            f"cannot be pickled ({type(exc).__name__}: {exc}); a lock, a client or an open file "
            "in a closure cannot travel: create it inside the function, or pass it in context="
        )
        raise GraphValidationError(msg) from exc
    return blob


def refuse_invocations(path: str, vertex: VertexSpec) -> None:
    """Refuse a vertex whose code names a graph or a task it may invoke: on Ray, none of them could nest.

    A vertex runs in a worker process, away from its run's coordinator and
    checkpointer: a graph it invoked (a `@task` it called) would run there
    unrecorded. The code is read as `_api/invoked.invocables` reads it; a graph it
    reaches only at run time is refused when invoked (`_engine/nesting.NoNest`).

    Raises:
        GraphValidationError: naming the vertex path and what its code invokes.
    """
    if vertex.child is not None:  # a subgraph vertex: its own vertices are checked
        return
    found = invocables(vertex.fn) + (invocables(vertex.on_error) if vertex.on_error is not None else [])
    if not found:
        return
    named = ", ".join(sorted({f"{type(o).__name__} {getattr(o, 'name', '?')!r}" for o in found}))
    msg = (
        f"vertex {path!r} cannot run on the Ray backend: its code invokes {named}, and a vertex runs "
        "in a Ray worker, where a graph it invokes (a task it calls) cannot nest in the task's run: "
        "it would run unrecorded, so a resumed run would call it again; add the graph as a subgraph "
        "vertex (add_vertex(name, graph): it runs on Ray, nested and recorded), or compile this "
        "graph on threads (backend=None)"
    )
    raise GraphValidationError(msg)


def _module(fn: object) -> ModuleType | None:
    return sys.modules.get(getattr(fn, "__module__", "") or "")


def _importable(module: ModuleType, shipped: frozenset[str]) -> bool:
    """Whether workers find `module` where they look: a folder of the search path they were given."""
    file = getattr(module, "__file__", None)
    if file is None or module.__name__ == "__main__":
        return True  # builtins; cloudpickle sends __main__'s functions by value anyway
    top = module.__name__.split(".")[0]
    depth = module.__name__.count(".") + (Path(file).name == "__init__.py")
    root = Path(file).resolve().parents[depth]
    return str(root) in shipped or top in sys.stdlib_module_names or "site-packages" in root.parts


@contextmanager
def _by_value(modules: list[ModuleType]) -> Iterator[None]:
    for module in modules:
        cloudpickle.register_pickle_by_value(module)
    try:
        yield
    finally:
        for module in modules:
            cloudpickle.unregister_pickle_by_value(module)
