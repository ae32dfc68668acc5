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
from collections.abc import Iterator, Mapping
from typing import Final, NamedTuple

from actorgraph._model.errors import ActorGraphError, ConfigError
from actorgraph._model.records import END, START
from actorgraph._model.spec import GraphSpec

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

    A subgraph vertex is a `subgraph` block (id `v1`, say) holding its graph,
    whose ids are prefixed with the block's (`v1_start`, `v1_v0`, ..., `v1_end`);
    edges into the vertex go to its START, edges out of it leave from its END.

    Args:
        spec: the compiled graph's spec (`build_spec(graph)` or `CompiledGraph.spec`).
        statuses: vertex name (or path into a subgraph, `research/fetch`) ->
            `"ok"`, `"error"`, `"interrupt"` or `"pending"`; when given, a
            `classDef` per status and a `class` line per listed vertex are added
            (a `style` line for a subgraph block).

    Returns:
        The Mermaid text, one statement a line, ending with a newline.

    Raises:
        ValueError: `statuses` names an unknown vertex or an unknown status.
    """
    checked = _check_statuses(spec, statuses)
    lines = ["flowchart TD", *_mermaid_graph(spec, "", 1)]
    if checked is not None:
        for status, (fill, stroke, color, dashed) in _STYLES.items():
            dash = ",stroke-dasharray:5 5" if dashed else ""
            lines.append(f"{_INDENT}classDef {status} fill:{fill},stroke:{stroke},color:{color}{dash}")
        for node, status, cluster in checked:
            if cluster:
                _, stroke, color, dashed = _STYLES[status]
                dash = ",stroke-dasharray:5 5" if dashed else ""
                lines.append(f"{_INDENT}style {node} stroke:{stroke},color:{color}{dash}")
            else:
                lines.append(f"{_INDENT}class {node} {status}")
    return "\n".join(lines) + "\n"


def _mermaid_graph(spec: GraphSpec, prefix: str, depth: int) -> list[str]:
    """The nodes (subgraphs as blocks) and edges of one graph, its ids prefixed."""
    ids, pad = _ids(spec, prefix), _INDENT * depth
    lines = [f'{pad}{ids[START]}(["START"])']
    for name, vertex in spec.vertices.items():
        if vertex.child is None:
            lines.append(f'{pad}{ids[name]}["{_mermaid_text(name)}"]')
            continue
        lines.append(f'{pad}subgraph {ids[name]} ["{_mermaid_text(name)}"]')
        lines += _mermaid_graph(vertex.child.spec, ids[name], depth + 1)
        lines.append(f"{pad}end")
    lines.append(f'{pad}{ids[END]}(["END"])')
    arrows = {"plain": "-->", "cond": "-.->", "goto": "-.->", "join": "==>"}
    for edge in _edges(spec):
        label = f'|"{_mermaid_text(edge.label)}"|' if edge.label else ""
        src, dst = _exit(spec, ids, edge.src), _entry(spec, ids, edge.dst)
        lines.append(f"{pad}{src} {arrows[edge.kind]}{label} {dst}")
    return lines


def to_dot(spec: GraphSpec, statuses: Mapping[str, str] | None = None) -> str:
    r"""Draw the graph's structure as a Graphviz `digraph` (top to bottom).

    START is an ellipse, END a double circle and vertices boxes. Conditional
    edges are `style=dashed` with the `path_map` key as `label`, goto edges
    dashed and labelled `goto`, joins `style=bold` and labelled `join`. Every
    identifier and label is quoted, with `"` and `\` escaped. A subgraph vertex
    is a cluster (`cluster_v1`) holding its graph, ids prefixed as in `to_mermaid`.

    Args:
        spec: the compiled graph's spec (`build_spec(graph)` or `CompiledGraph.spec`).
        statuses: vertex name (or path, `research/fetch`) -> `"ok"`, `"error"`,
            `"interrupt"` or `"pending"`; listed vertices get `style=filled` (and
            dashed for pending) with a `fillcolor` and border `color`; a listed
            subgraph's cluster gets the border colour.

    Returns:
        The DOT text, ending with a newline; give it to `render_png` or `dot`.

    Raises:
        ValueError: `statuses` names an unknown vertex or an unknown status.
    """
    status_of = {node: status for node, status, _ in _check_statuses(spec, statuses) or ()}
    lines = [f"digraph {_dot_quote(spec.name)} {{", f"{_INDENT}rankdir=TB;"]
    lines += _dot_graph(spec, "", 1, status_of)
    lines.append("}")
    return "\n".join(lines) + "\n"


def _dot_graph(spec: GraphSpec, prefix: str, depth: int, status_of: Mapping[str, str]) -> list[str]:
    """The nodes (subgraphs as clusters) and edges of one graph, its ids prefixed."""
    ids, pad = _ids(spec, prefix), _INDENT * depth
    lines = [f'{pad}"{ids[START]}" [label="START", shape=ellipse];']
    for name, vertex in spec.vertices.items():
        status = _STYLES.get(status_of.get(ids[name], ""))
        if vertex.child is not None:
            lines.append(f'{pad}subgraph "cluster_{ids[name]}" {{')
            lines.append(f"{pad}{_INDENT}label={_dot_quote(name)};")
            if status is not None:
                style = "dashed" if status[3] else "solid"
                lines.append(f'{pad}{_INDENT}color="{status[1]}"; style="{style}";')
            lines += _dot_graph(vertex.child.spec, ids[name], depth + 1, status_of)
            lines.append(f"{pad}}}")
            continue
        attrs = f"label={_dot_quote(name)}, shape=box"
        if status is not None:
            fill, stroke, _, dashed = status
            attrs += (
                f', style="{"filled,dashed" if dashed else "filled"}", fillcolor="{fill}", color="{stroke}"'
            )
        lines.append(f'{pad}"{ids[name]}" [{attrs}];')
    lines.append(f'{pad}"{ids[END]}" [label="END", shape=doublecircle];')
    styles = {"plain": "", "cond": "style=dashed", "goto": "style=dashed", "join": "style=bold"}
    for edge in _edges(spec):
        attrs_list = [styles[edge.kind]] if styles[edge.kind] else []
        if edge.label:
            attrs_list.append(f"label={_dot_quote(edge.label)}")
        attrs = f" [{', '.join(attrs_list)}]" if attrs_list else ""
        src, dst = _exit(spec, ids, edge.src), _entry(spec, ids, edge.dst)
        lines.append(f'{pad}"{src}" -> "{dst}"{attrs};')
    return lines


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
    return render_with_dot(dot_text, path, "png", timeout=timeout)


def render_with_dot(
    dot_text: str, path: str | os.PathLike[str], fmt: str, *, timeout: float = 60.0
) -> pathlib.Path:
    """Render DOT text to a file in Graphviz output format `fmt` (`png`, `svg`, ...); see `render_png`."""
    import shutil  # noqa: PLC0415 - with subprocess, 2 MiB that `import actorgraph` need not load
    import subprocess  # noqa: PLC0415

    program = shutil.which("dot")
    if program is None:
        msg = (
            f"rendering {fmt.upper()} needs the Graphviz program 'dot', which is not on PATH; install "
            "Graphviz (e.g. `apt-get install graphviz`, `brew install graphviz`) or render "
            "the to_mermaid text instead"
        )
        raise ActorGraphError(msg)
    target = pathlib.Path(path)
    try:
        done = subprocess.run(  # noqa: S603 - a fixed program and arguments, no shell
            [program, f"-T{fmt}", "-o", str(target)],
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


def _ids(spec: GraphSpec, prefix: str = "") -> dict[str, str]:
    """Node ids safe in Mermaid and DOT: START/END keep theirs, vertices are v0, v1, ...

    Inside a subgraph drawn as block `prefix`, they are `prefix_start`,
    `prefix_v0`, ..., `prefix_end`.
    """
    if not prefix:
        return {START: START, END: END} | {name: f"v{i}" for i, name in enumerate(spec.vertices)}
    ids = {START: f"{prefix}_start", END: f"{prefix}_end"}
    return ids | {name: f"{prefix}_v{i}" for i, name in enumerate(spec.vertices)}


def _entry(spec: GraphSpec, ids: Mapping[str, str], name: str) -> str:
    """Where an edge into `name` ends: the vertex, or the START of its subgraph."""
    vertex = spec.vertices.get(name)
    return f"{ids[name]}_start" if vertex is not None and vertex.child is not None else ids[name]


def _exit(spec: GraphSpec, ids: Mapping[str, str], name: str) -> str:
    """Where an edge out of `name` starts: the vertex, or the END of its subgraph."""
    vertex = spec.vertices.get(name)
    return f"{ids[name]}_end" if vertex is not None and vertex.child is not None else ids[name]


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


def _check_statuses(
    spec: GraphSpec, statuses: Mapping[str, str] | None
) -> list[tuple[str, str, bool]] | None:
    """(node id, status, is a subgraph) for each listed vertex, in drawing order; None when not given."""
    if statuses is None:
        return None
    for name, status in statuses.items():
        _node_of(spec, name)
        if status not in _STYLES:
            msg = f"unknown status {status!r} for vertex {name!r}; use one of {', '.join(map(repr, _STYLES))}"
            raise ConfigError(msg)
    order = {path: index for index, path in enumerate(_paths(spec, ""))}
    out = []
    for path in sorted(statuses, key=order.__getitem__):
        node, cluster = _node_of(spec, path)
        out.append((node, statuses[path], cluster))
    return out


def _paths(spec: GraphSpec, prefix: str) -> Iterator[str]:
    """Every vertex path in drawing order (a subgraph vertex before its graph's)."""
    for name, vertex in spec.vertices.items():
        yield prefix + name
        if vertex.child is not None:
            yield from _paths(vertex.child.spec, f"{prefix}{name}/")


def _node_of(spec: GraphSpec, path: str) -> tuple[str, bool]:
    """The node id of a vertex path, and whether it is a subgraph.

    Raises:
        ConfigError: no vertex has that path.
    """
    node, graph, names, cluster = "", spec, path.split("/"), False
    for depth, name in enumerate(names):
        vertex = graph.vertices.get(name)
        if vertex is None or (depth < len(names) - 1 and vertex.child is None):
            msg = (
                f"statuses names unknown vertex {path!r}; the vertices of graph "
                f"{graph.name!r} are: {', '.join(map(repr, graph.vertices))}"
            )
            raise ConfigError(msg)
        node, cluster = _ids(graph, node)[name], vertex.child is not None
        if vertex.child is not None:
            graph = vertex.child.spec
    return node, cluster


def _mermaid_text(text: str) -> str:
    """Text for inside a quoted Mermaid label: entities for specials, spaces for control characters."""
    return "".join(_MERMAID_ESCAPES.get(c, c if c.isprintable() else " ") for c in text)


def _dot_quote(text: str) -> str:
    r"""A quoted DOT string showing `text` literally (`\` and `"` escaped, newlines as `\n`)."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    escaped = escaped.replace("\r\n", "\\n").replace("\n", "\\n").replace("\r", "\\n")
    return f'"{escaped}"'
