"""Finding TARGET: a YAML file, `package.module:graph` or `path/to/file.py:graph`."""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import os
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

from actorgraph import CompiledGraph, Graph, load
from actorgraph.cli._codes import FAILED
from actorgraph.cli._exits import CommandError
from actorgraph.cli._options import allowed_modules
from actorgraph.func import Entrypoint

__all__ = ["Found", "alone", "find"]

_FORMS = "a YAML file (flow.yaml), package.module:graph or path/to/file.py:graph"

Found = Graph[Any] | CompiledGraph[Any] | Entrypoint[Any]
"""What TARGET names: a graph, a compiled graph, or an `@entrypoint` (whose graph shows the
function's return value as the thread's state; see `opened` for the store it runs on)."""


def find(target: str) -> Found:
    """The graph or the `@entrypoint` TARGET names (a function there taking no arguments is called for it).

    Raises:
        CommandError: TARGET names nothing (exit 2), or its code fails (exit 1).
        GraphValidationError: a YAML file is not a valid graph.
    """
    if target.endswith((".yaml", ".yml")):
        return _from_yaml(Path(target))
    where, _, attribute = target.rpartition(":")
    if not where or not attribute:
        raise CommandError(f"TARGET {target!r} names no graph; give {_FORMS}")
    is_file = where.endswith(".py") or "/" in where or os.sep in where
    module = _import_file(Path(where)) if is_file else _import_module(where)
    return _graph_of(_attribute(module, attribute, where), target)


def _from_yaml(path: Path) -> Graph[Any]:
    if not path.is_file():
        raise CommandError(f"no graph file {str(path)!r}: it does not exist or is not a file")
    return load(path, allow_modules=allowed_modules())  # PyYAML and pydantic are imported now


def _import_module(name: str) -> ModuleType:
    here = str(Path.cwd())
    if "" not in sys.path and here not in sys.path:
        sys.path.insert(0, here)  # as `python -m` does: modules next to the user are found
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name is not None and (name == exc.name or name.startswith(f"{exc.name}.")):
            msg = (
                f"no module {name!r} (no module named {exc.name!r}); run from the folder that holds "
                "it, add that folder to PYTHONPATH, or give the file: path/to/file.py:graph"
            )
            raise CommandError(msg) from exc
        raise _failed(f"importing module {name!r}", exc) from exc
    except Exception as exc:
        raise _failed(f"importing module {name!r}", exc) from exc


def _import_file(path: Path) -> ModuleType:
    if not path.is_file():
        raise CommandError(f"no Python file {str(path)!r}: it does not exist or is not a file")
    name = path.stem
    known = sys.modules.get(name)
    if known is not None and Path(getattr(known, "__file__", "") or "").resolve() != path.resolve():
        msg = f"the file {str(path)!r} has the name of the module {name!r} already loaded; rename the file"
        raise CommandError(msg)
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise CommandError(f"{str(path)!r} cannot be imported as Python code")
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(path.resolve().parent))  # its own imports of the modules beside it work
    sys.modules[name] = module  # pickling and dataclasses look the module up by name
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        del sys.modules[name]
        raise _failed(f"importing {str(path)!r}", exc) from exc
    return module


def _attribute(module: ModuleType, attribute: str, where: str) -> Any:
    value: Any = module
    for part in attribute.split("."):
        try:
            value = getattr(value, part)
        except AttributeError:
            graphs = [n for n, v in vars(module).items() if isinstance(v, Graph | CompiledGraph | Entrypoint)]
            listed = f"; the graphs in it: {', '.join(sorted(graphs))}" if graphs else ""
            raise CommandError(f"{where!r} has no attribute {attribute!r}{listed}") from None
    return value


def _graph_of(value: Any, target: str) -> Found:
    if inspect.isfunction(value):
        try:
            value = value()
        except Exception as exc:
            raise _failed(f"calling {target}()", exc) from exc
    if isinstance(value, Graph | CompiledGraph | Entrypoint):
        return value
    kind = type(value).__name__
    raise CommandError(
        f"{target} is not a Graph, a CompiledGraph or an @entrypoint (nor a function returning one): "
        f"it is {kind}"
    )


def alone(found: Found) -> CompiledGraph[Any]:
    """What TARGET names, compiled without a store (an entrypoint's or a compiled graph's own, if any)."""
    if isinstance(found, Entrypoint):
        return found.graph
    return found if isinstance(found, CompiledGraph) else found.compile()


def _failed(what: str, exc: Exception) -> CommandError:
    return CommandError(f"{what} failed: {type(exc).__name__}: {exc}", code=FAILED)
