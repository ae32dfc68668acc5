"""The configuration reference page, generated from the graph file's schema.

`python tests/config_reference.py` rewrites docs/reference/configuration.md;
tests/config/test_config.py fails when the page and the schema differ.
"""

from __future__ import annotations

import json
import sys
import types
import typing
from pathlib import Path
from typing import Any

from actorgraph._api.files.model import EdgeFile, GraphFile, RetryFile, SendFile, StateKey, VertexFile

PAGE = Path(__file__).resolve().parent.parent / "docs" / "reference" / "configuration.md"

INTRO = """\
# Graph files (YAML): the reference

Generated from the schema (`actorgraph._api.files.model`) by `tests/config_reference.py`; a
test fails when they differ. `actorgraph schema` prints the same format as JSON Schema, for
editors that validate and complete YAML. `actorgraph.load("flow.yaml")` reads a file and
returns a `Graph`; every problem is a `ConfigFileError` naming the file, line and column.
Unknown fields are errors. Vertex names `__start__` and `__end__` (or `START`, `END`) are
the ends of the graph. Conditions use the expression language of
[expressions](expressions.md).

A graph file is code: `fn`, `on_error` and `retry_on` name Python callables, and
loading the file imports their modules. To load a file you did not write, list the
modules it may import: `actorgraph.load("flow.yaml", allow_modules=["myapp"])` (also
`load_string`), or `--allow-module myapp` (`$ACTORGRAPH_ALLOW_MODULES`) on the command
line; a module outside the list is refused at the line that names it. A file is at most
1,000,000 bytes of UTF-8, nests at most 100 levels, holds at most 100,000 values with
its aliases expanded (aliases add at most 10,000) and only plain values (no `!!python`
tags, no merge keys). See [Graph files are code](../security.md#graph-files-are-code).

Graph files need the `cli` extra: `pip install "actorgraph[cli]"` (PyYAML and pydantic).
Types are written as in Python: `str | None` is text or nothing (`null` in YAML),
`list[str]` a list of texts, `Literal["state", "update"]` one of those words.
"""


def type_text(kind: Any) -> str:
    """A field's type as a reader writes it: `str`, `int | None`, `list[str]`, `dict[str, Any]`."""
    args = typing.get_args(kind)
    match typing.get_origin(kind):
        case typing.Union | types.UnionType:
            return " | ".join(type_text(arg) for arg in args)
        case typing.Literal:
            return f"Literal[{', '.join(json.dumps(arg) for arg in args)}]"
        case None:
            return "None" if kind is type(None) else "Any" if kind is Any else kind.__name__
        case origin:
            return f"{origin.__name__}[{', '.join(type_text(arg) for arg in args)}]"


def cell(text: str) -> str:
    r"""Text for a table cell, read alike on GitHub and by mkdocs.

    A `|` ends a cell unless escaped, but `\|` inside a code span shows its backslash in
    mkdocs (not on GitHub): so a code span holding `|` is cut around an escaped `|`.
    """
    pieces = text.split("`")
    for i, piece in enumerate(pieces):  # odd pieces are inside code spans
        if i % 2:
            pieces[i] = "` \\| `".join(part.strip() for part in piece.split("|"))
        else:
            pieces[i] = piece.replace("|", "\\|")
    return "`".join(pieces)


def _default(field: Any) -> str:
    if field.is_required():
        return "required"
    value = field.get_default(call_default_factory=True)
    return f"`{json.dumps(value) if isinstance(value, str) else repr(value)}`"


def _table(model: Any, title: str) -> list[str]:
    lines = [f"## {title}", "", (model.__doc__ or "").strip(), "", "| field | type | default | meaning |"]
    lines.append("| --- | --- | --- | --- |")
    for name, field in model.model_fields.items():
        row = [
            f"`{field.alias or name}`",
            f"`{type_text(field.annotation)}`",
            _default(field),
            field.description or "",
        ]
        lines.append(f"| {' | '.join(cell(text) for text in row)} |")
    return [*lines, ""]


def render() -> str:
    """The page's text."""
    parts = [INTRO]
    for model, title in (
        (GraphFile, "The file"),
        (VertexFile, "vertices[]"),
        (EdgeFile, "edges[]"),
        (SendFile, "edges[].send"),
        (RetryFile, "retry"),
        (StateKey, "state.KEY"),
    ):
        parts.append("\n".join(_table(model, title)))
    return "\n".join(parts).rstrip() + "\n"


if __name__ == "__main__":
    PAGE.write_text(render())
    sys.exit(0)
