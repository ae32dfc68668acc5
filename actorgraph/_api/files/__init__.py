"""`load` and `load_string`: graphs from YAML files, importing YAML and pydantic only when called.

PyYAML and pydantic come with the `cli` extra: without them, a call raises
`MissingDependencyError` naming it, and `import actorgraph` works as before.

Part of the facade (`actorgraph._api`): may import the layers below it (building, engine, records).
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from actorgraph._api.graph import Graph
from actorgraph._model.errors import MissingDependencyError

__all__ = ["load", "load_string"]

# What graph files need beyond the engine (the `cli` extra): module name -> the name pip installs it by.
_EXTRA = {"yaml": "PyYAML", "pydantic": "pydantic"}


def load(path: str | Path, *, allow_modules: Iterable[str] | None = None) -> Graph[Any]:
    """The `Graph` a YAML graph file describes; compile it as any graph.

    A graph file is code: it names the Python callables its vertices run, and
    loading it imports their modules. To load a file you did not write, list
    the modules you trust in `allow_modules`. The format:
    `docs/reference/configuration.md` (or `actorgraph schema`); the bounds and the
    allowlist: `docs/security.md`.

    Args:
        path: the graph file (at most 1 MB of UTF-8).
        allow_modules: when given, the only modules the file may import: each name
            allows that module and the modules under it (`myapp` allows `myapp.flows`).
            None (the default) imports whatever the file names.

    Raises:
        ConfigFileError: the file is missing, not YAML, too large or too deeply
            nested, expands aliases too far, is not the format, names a module outside
            `allow_modules`, or names something that does not import; with the file,
            line and column.
        ConfigError: `allow_modules` is a string, or holds something that is not a module name.
        MissingDependencyError: PyYAML or pydantic is not installed (the `cli` extra).
    """
    _check_extra()
    from actorgraph._api.files.loading import load as load_file  # noqa: PLC0415 - YAML and pydantic on demand

    return load_file(path, allow_modules=allow_modules)


def load_string(
    text: str, *, file: str = "<string>", allow_modules: Iterable[str] | None = None
) -> Graph[Any]:
    """The `Graph` a YAML text describes; `file` names it in errors.

    Raises:
        ConfigFileError: as `load`.
        ConfigError: as `load`.
        MissingDependencyError: as `load`.
    """
    _check_extra()
    from actorgraph._api.files.loading import load_string as load_text  # noqa: PLC0415 - YAML and pydantic on demand

    return load_text(text, file=file, allow_modules=allow_modules)


def _check_extra() -> None:
    """Raise `MissingDependencyError`, naming the `cli` extra, unless PyYAML and pydantic are installed."""
    missing = [package for module, package in _EXTRA.items() if importlib.util.find_spec(module) is None]
    if missing:
        names = ", ".join(missing)
        msg = f'graph files need the cli extra ({names} not installed): pip install "actorgraph[cli]"'
        raise MissingDependencyError(msg)
