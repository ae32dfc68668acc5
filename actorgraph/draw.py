"""Pictures of a compiled graph: Mermaid and Graphviz DOT text, and PNG through Graphviz.

`to_mermaid` and `to_dot` are pure functions of a `GraphSpec` (no threads, no
I/O); `render_png` runs the Graphviz `dot` program on DOT text.

Both texts draw the same things, with the same node ids:

- START (`__start__`) and END (`__end__`) as rounded terminals labelled START / END;
- every vertex, in the spec's order, with id `v0`, `v1`, ... and its real name
  as the (escaped) label, so any vertex name is safe;
- edges in this fixed order, each kind with its sources in the order START,
  then the vertices in the spec's order, and targets in declaration order:

  1. plain edges: solid (`-->`; DOT default style);
  2. conditional edges: dashed, labelled with their `path_map` key; a router
     without a `path_map` gets one dashed, unlabelled edge to every vertex and
     to END, since it could route to any of them;
  3. `destinations` (`Command(goto=...)` targets): dashed, labelled `goto`;
  4. joins, in the spec's order: a thick edge (Mermaid `==>`, DOT
     `style=bold`) labelled `join` from each source to the target.

`statuses` colours vertices by the outcome of their last task: `ok` green,
`error` red, `interrupt` amber, `pending` grey and dashed.
"""

from __future__ import annotations

import os
import pathlib
import shutil
import subprocess
from collections.abc import Iterator, Mapping
from typing import Final, NamedTuple

from actorgraph._errors import ActorGraphError, ConfigError
from actorgraph._spec import GraphSpec
from actorgraph._types import END, START

__all__ = ["render_png", "to_dot", "to_mermaid"]

_INDENT: Final = "    "

# status -> (fill, border, text colour, dashed border)
_STYLES: Final[Mapping[str, tuple[str, str, str, bool]]] = {
    "ok": ("#d4edda", "#2e7d32", "#1b5e20", False),
    "error": ("#f8d7da", "#c62828", "#b71c1c", False),
    "interrupt": ("#ffe8b3", "#ff8f00", "#7a4f00", False),
    "pending": ("#eeeeee", "#9e9e9e", "#616161", True),
}

# Mermaid decodes `#name;` / `#nn;` entities in labels; everything that could end
# a label or be read as markup or an escape is written as one.
_MERMAID_ESCAPES: Final[Mapping[str, str]] = {
    "#": "#35;",
    '"': "#quot;",
    "&": "#amp;",
    "<": "#lt;",
    ">": "#gt;",
    "\\": "#92;",
    "|": "#124;",
}


class _Edge(NamedTuple):
    """One drawn edge: `kind` is plain, cond, goto or join; `label` may be empty."""

    src: str
    dst: str
    kind: str
    label: str


def to_mermaid(spec: GraphSpec, statuses: Mapping[str, str] | None = None) -> str:
    r"""Draw the graph's structure as a Mermaid `flowchart TD`.

    Plain edges are `-->`, conditional edges `-.->|"key"|` (unlabelled for a
    router without `path_map`), goto edges `-.->|"goto"|` and joins one
    `==>|"join"|` edge from each source. Labels are quoted; `"`, `#`, `&`, `<`,
    `>`, `|` and `\` in them are written as Mermaid entities (`#quot;`, ...).

    Args:
        spec: the compiled graph's spec (`build_spec(graph)` or `CompiledGraph.spec`).
        statuses: vertex name -> `"ok"`, `"error"`, `"interrupt"` or `"pending"`;
            when given, a `classDef` per status and a `class` line per listed vertex
            are added.

    Returns:
        The Mermaid text, one statement a line, ending with a newline.

    Raises:
        ValueError: `statuses` names an unknown vertex or an unknown status.
    """
    checked = _check_statuses(spec, statuses)
    ids = _ids(spec)
    lines = ["flowchart TD", f'{_INDENT}{ids[START]}(["START"])']
    lines += [f'{_INDENT}{ids[name]}["{_mermaid_text(name)}"]' for name in spec.vertices]
    lines.append(f'{_INDENT}{ids[END]}(["END"])')
    arrows = {"plain": "-->", "cond": "-.->", "goto": "-.->", "join": "==>"}
    for edge in _edges(spec):
        label = f'|"{_mermaid_text(edge.label)}"|' if edge.label else ""
        lines.append(f"{_INDENT}{ids[edge.src]} {arrows[edge.kind]}{label} {ids[edge.dst]}")
    if checked is not None:
        for status, (fill, stroke, color, dashed) in _STYLES.items():
            dash = ",stroke-dasharray:5 5" if dashed else ""
            lines.append(f"{_INDENT}classDef {status} fill:{fill},stroke:{stroke},color:{color}{dash}")
        lines += [f"{_INDENT}class {ids[name]} {status}" for name, status in checked]
    return "\n".join(lines) + "\n"


def to_dot(spec: GraphSpec, statuses: Mapping[str, str] | None = None) -> str:
    r"""Draw the graph's structure as a Graphviz `digraph` (top to bottom).

    START is an ellipse, END a double circle and vertices boxes. Conditional
    edges are `style=dashed` with the `path_map` key as `label`, goto edges
    dashed and labelled `goto`, joins `style=bold` and labelled `join`. Every
    identifier and label is quoted, with `"` and `\` escaped.

    Args:
        spec: the compiled graph's spec (`build_spec(graph)` or `CompiledGraph.spec`).
        statuses: vertex name -> `"ok"`, `"error"`, `"interrupt"` or `"pending"`;
            listed vertices get `style=filled` (and dashed for pending) with a
            `fillcolor` and border `color`.

    Returns:
        The DOT text, ending with a newline; give it to `render_png` or `dot`.

    Raises:
        ValueError: `statuses` names an unknown vertex or an unknown status.
    """
    status_of = dict(_check_statuses(spec, statuses) or ())
    ids = _ids(spec)
    lines = [
        f"digraph {_dot_quote(spec.name)} {{",
        f"{_INDENT}rankdir=TB;",
        f'{_INDENT}"{ids[START]}" [label="START", shape=ellipse];',
    ]
    for name in spec.vertices:
        attrs = f"label={_dot_quote(name)}, shape=box"
        if name in status_of:
            fill, stroke, _, dashed = _STYLES[status_of[name]]
            style = "filled,dashed" if dashed else "filled"
            attrs += f', style="{style}", fillcolor="{fill}", color="{stroke}"'
        lines.append(f'{_INDENT}"{ids[name]}" [{attrs}];')
    lines.append(f'{_INDENT}"{ids[END]}" [label="END", shape=doublecircle];')
    styles = {"plain": "", "cond": "style=dashed", "goto": "style=dashed", "join": "style=bold"}
    for edge in _edges(spec):
        attrs_list = [styles[edge.kind]] if styles[edge.kind] else []
        if edge.label:
            attrs_list.append(f"label={_dot_quote(edge.label)}")
        attrs = f" [{', '.join(attrs_list)}]" if attrs_list else ""
        lines.append(f'{_INDENT}"{ids[edge.src]}" -> "{ids[edge.dst]}"{attrs};')
    lines.append("}")
    return "\n".join(lines) + "\n"


def render_png(dot_text: str, path: str | os.PathLike[str], *, timeout: float = 60.0) -> pathlib.Path:
    """Render DOT text to a PNG file with Graphviz's `dot` program.

    Args:
        dot_text: a graph in DOT, e.g. from `to_dot`.
        path: the PNG file to write (its directory must exist).
        timeout: seconds `dot` may run.

    Returns:
        `path`, as a `pathlib.Path`.

    Raises:
        ActorGraphError: `dot` is not installed, fails, or runs longer than `timeout`.
    """
    program = shutil.which("dot")
    if program is None:
        msg = (
            "render_png needs the Graphviz program 'dot', which is not on PATH; install "
            "Graphviz (e.g. `apt-get install graphviz`, `brew install graphviz`) or render "
            "the to_mermaid text instead"
        )
        raise ActorGraphError(msg)
    target = pathlib.Path(path)
    try:
        done = subprocess.run(  # noqa: S603 - a fixed program and arguments, no shell
            [program, "-Tpng", "-o", str(target)],
            input=dot_text.encode(),
            capture_output=True,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        msg = f"Graphviz 'dot' did not finish rendering {target} within {timeout} seconds"
        raise ActorGraphError(msg) from exc
    except OSError as exc:
        msg = f"could not run Graphviz 'dot' ({program}): {exc}"
        raise ActorGraphError(msg) from exc
    if done.returncode != 0:
        stderr = done.stderr.decode(errors="replace").strip()
        msg = f"Graphviz 'dot' failed with exit code {done.returncode} rendering {target}: {stderr}"
        raise ActorGraphError(msg)
    return target


def _ids(spec: GraphSpec) -> dict[str, str]:
    """Node ids safe in Mermaid and DOT: START/END keep theirs, vertices are v0, v1, ..."""
    ids = {START: START, END: END}
    ids.update({name: f"v{i}" for i, name in enumerate(spec.vertices)})
    return ids


def _edges(spec: GraphSpec) -> Iterator[_Edge]:
    """Every edge to draw, in the documented order."""
    sources = (START, *spec.vertices)
    for src in sources:
        for dst in spec.edges.get(src, ()):
            yield _Edge(src, dst, "plain", "")
    for src in sources:
        yield from _conditional_edges(spec, src)
    for src, vertex in spec.vertices.items():
        for dst in vertex.destinations or ():
            yield _Edge(src, dst, "goto", "goto")
    for join in spec.joins:
        for src in join.sources:
            yield _Edge(src, join.target, "join", "join")


def _conditional_edges(spec: GraphSpec, src: str) -> Iterator[_Edge]:
    """The edges of `src`'s routers: one per path_map key, or to everything without one."""
    for router in spec.routers.get(src, ()):
        if router.path_map is None:
            for dst in (*spec.vertices, END):
                yield _Edge(src, dst, "cond", "")
        else:
            for key, dst in router.path_map.items():
                yield _Edge(src, dst, "cond", str(key))


def _check_statuses(spec: GraphSpec, statuses: Mapping[str, str] | None) -> list[tuple[str, str]] | None:
    """The (vertex, status) pairs in the spec's vertex order, or None when not given."""
    if statuses is None:
        return None
    for name, status in statuses.items():
        if name not in spec.vertices:
            msg = (
                f"statuses names unknown vertex {name!r}; the vertices of graph "
                f"{spec.name!r} are: {', '.join(map(repr, spec.vertices))}"
            )
            raise ConfigError(msg)
        if status not in _STYLES:
            msg = f"unknown status {status!r} for vertex {name!r}; use one of {', '.join(map(repr, _STYLES))}"
            raise ConfigError(msg)
    return [(name, statuses[name]) for name in spec.vertices if name in statuses]


def _mermaid_text(text: str) -> str:
    """Text for inside a quoted Mermaid label: entities for specials, spaces for control characters."""
    return "".join(_MERMAID_ESCAPES.get(c, c if c.isprintable() else " ") for c in text)


def _dot_quote(text: str) -> str:
    r"""A quoted DOT string showing `text` literally (`\` and `"` escaped, newlines as `\n`)."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    escaped = escaped.replace("\r\n", "\\n").replace("\n", "\\n").replace("\r", "\\n")
    return f'"{escaped}"'
