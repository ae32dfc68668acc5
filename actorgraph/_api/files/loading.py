"""Graphs from configuration: `load("flow.yaml")` and `load_string(text)` return a `Graph`.

A graph file names its vertices by import path, its edges, joins, conditional
edges (expressions in `actorgraph._api.files.expr`'s safe language), sends, reducers,
retry / timeout / concurrency per vertex, breakpoints, an optional state schema,
read-only `global:` constants and each vertex's explicit `inputs`/`outputs`. It
is checked against `GraphFile` (unknown fields are errors) and every problem is a
`ConfigFileError` with the file, line and column. Reading is bounded (`_yaml`: size,
nesting, aliases, plain values only) and `allow_modules` limits what a file imports.
`json_schema()` is the format as JSON Schema (`actorgraph schema` prints it).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from actorgraph._api.files.allow import Allowlist
from actorgraph._api.files.build import build_graph
from actorgraph._api.files.model import GraphFile
from actorgraph._api.files.positions import KEY, Located, combined, read_yaml
from actorgraph._api.files.reading import read_file
from actorgraph._api.graph import Graph
from actorgraph._model.errors import ConfigFileError

__all__ = ["json_schema", "load", "load_string"]

_SHOWN = 60  # characters of a wrong value quoted in an error


def load(path: str | Path, *, allow_modules: Iterable[str] | None = None) -> Graph[Any]:
    """The `Graph` a YAML file describes (compile it as any graph).

    Modules in the file's folder are importable by name (the folder is added to `sys.path`).

    Args:
        path: the graph file (at most 1 MB of UTF-8).
        allow_modules: when given, the only modules (and packages, with the modules
            under them) the file may import; None imports whatever it names.

    Raises:
        ConfigFileError: the file is missing, not YAML, too large or nested, not the
            format, names a module outside `allow_modules`, or names something that
            does not import; with the file, line and column.
        ConfigError: `allow_modules` is not a list of module names.
    """
    allow = Allowlist(allow_modules)
    text = read_file(path)
    folder = str(Path(path).resolve().parent)
    if folder not in sys.path:  # modules next to the file are importable by their names
        sys.path.append(folder)
    return _parse(text, str(path), allow)


def load_string(
    text: str, *, file: str = "<string>", allow_modules: Iterable[str] | None = None
) -> Graph[Any]:
    """The `Graph` a YAML text describes; `file` names it in errors.

    Raises:
        ConfigFileError: as `load`.
        ConfigError: as `load`.
    """
    return _parse(text, file, Allowlist(allow_modules))


def _parse(text: str, file: str, allow: Allowlist) -> Graph[Any]:
    located = read_yaml(text, file)
    if not isinstance(located.data, dict):
        raise located.error("a graph file is a mapping with `vertices:` and `edges:`", ())
    try:
        model = GraphFile.model_validate(located.data)
    except ValidationError as exc:
        raise _problems(exc, located) from None
    return build_graph(model, located, allow)


def json_schema() -> dict[str, Any]:
    """The graph file format as JSON Schema (draft 2020-12), for editors that validate and complete YAML."""
    schema = GraphFile.model_json_schema(by_alias=True)
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "actorgraph graph file"
    return json.loads(json.dumps(schema))  # type: ignore[no-any-return]


def _problems(exc: ValidationError, located: Located) -> ConfigFileError:
    """One `ConfigFileError` at the first problem, listing every problem with its place."""
    return combined([_problem(error, located) for error in _relevant(exc.errors(), located.data)])


def _relevant(errors: list[Any], data: Any) -> list[Any]:
    """Pydantic's errors without the noise of unions.

    When a value fits no member of a union, the errors inside the member it came
    closest to are reported, else one error naming every member.
    """
    kept: list[Any] = []
    unions: dict[tuple[Any, ...], list[tuple[Any, str]]] = {}
    for error in errors:
        loc = error["loc"]
        tag_at = next((i for i, part in enumerate(loc) if _is_tag(part)), None)
        if tag_at is None:
            kept.append(error)
        else:
            unions.setdefault(_data_path(loc[:tag_at], data), []).append((error, loc[tag_at]))
    for base, members in unions.items():
        deeper = [e for e, _ in members if len(_data_path(e["loc"], data)) > len(base)]
        if deeper:
            kept.extend(deeper)
        else:
            expected = " or ".join(dict.fromkeys(_readable(tag) for _, tag in members))
            kept.append({**members[0][0], "type": "union", "msg": f"expected {expected}"})
    return kept


def _is_tag(part: Any) -> bool:
    """Whether a part of pydantic's `loc` names a union member (a type) rather than a key."""
    return isinstance(part, str) and ("[" in part or part[:1].isupper() or part in _TYPES_NAMES)


_TYPES_NAMES = frozenset({"str", "int", "float", "bool", "list", "dict", "none"})


def _readable(tag: str) -> str:
    return {"RetryFile": "a retry mapping", "StateKey": "a {type, reducer} mapping"}.get(tag, tag)


def _problem(error: Any, located: Located) -> ConfigFileError:
    path = _data_path(error["loc"], located.data)
    kind, message = error["type"], error["msg"]
    if kind == "extra_forbidden":
        field = path[-1]
        return located.error(f"unknown field {field!r} (`actorgraph schema` prints the format)", (*path, KEY))
    if kind == "missing":
        return located.error(f"missing required field {error['loc'][-1]!r}", path)
    where = ".".join(str(p) for p in path) or "the file"
    if kind == "union":
        message = error["msg"]
    shown = repr(error.get("input"))
    shown = shown if len(shown) <= _SHOWN else shown[: _SHOWN - 3] + "..."
    return located.error(
        f"{where}: {message.rstrip('.')[:1].lower()}{message.rstrip('.')[1:]} (got {shown})", path
    )


def _data_path(loc: tuple[Any, ...], data: Any) -> tuple[Any, ...]:
    """The path in the data that pydantic's `loc` names (skipping the union members it adds)."""
    path: list[Any] = []
    node = data
    for part in loc:
        if (isinstance(node, dict) and part in node) or (
            isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node)
        ):
            path.append(part)
            node = node[part]
        elif isinstance(node, dict) and part == loc[-1] and isinstance(part, str) and not _is_tag(part):
            path.append(part)  # a missing or unknown field of this mapping
            break
    return tuple(path)
