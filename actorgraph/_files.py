"""`load` and `load_string`: graphs from YAML files, importing YAML and pydantic only when called."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from actorgraph._graph import Graph

__all__ = ["load", "load_string"]


def load(path: str | Path) -> Graph[Any]:
    """The `Graph` a YAML graph file describes; compile it as any graph.

    The format: `docs/reference/configuration.md` (or `actorgraph schema`).

    Raises:
        ConfigFileError: the file is missing, not YAML, not the format, or names
            something that does not import; with the file, line and column.
    """
    from actorgraph._config import load as load_file  # noqa: PLC0415 - YAML and pydantic on demand

    return load_file(path)


def load_string(text: str, *, file: str = "<string>") -> Graph[Any]:
    """The `Graph` a YAML text describes; `file` names it in errors.

    Raises:
        ConfigFileError: as `load`.
    """
    from actorgraph._config import load_string as load_text  # noqa: PLC0415 - YAML and pydantic on demand

    return load_text(text, file=file)
