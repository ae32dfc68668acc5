"""Mermaid and DOT pictures of graphs, and PNG rendering through Graphviz."""

from __future__ import annotations

import itertools
import pathlib

import pytest

import actorgraph as ag
from actorgraph._build.validate import build_spec
from actorgraph._model.spec import GraphSpec
from actorgraph.draw import render_png, to_dot, to_mermaid


def same(state):
    return state


def line() -> GraphSpec:
    graph = ag.Graph(name="line")
    graph.add_vertex("a", same)
    graph.add_edge(ag.START, "a")
    graph.add_edge("a", ag.END)
    return build_spec(graph)


def loop() -> GraphSpec:
    graph = ag.Graph(name="loop")
    graph.add_vertex("write", same)
    graph.add_vertex("review", same)
    graph.add_edge(ag.START, "write")
    graph.add_edge("write", "review")
    graph.add_conditional_edges("review", lambda s: "accept", {"revise": "write", "accept": ag.END})
    return build_spec(graph)


def fan_out() -> GraphSpec:
    graph = ag.Graph(name="fan")
    for name in ("plan", "a", "b", "merge", "worker"):
        graph.add_vertex(name, same)
    graph.add_edge(ag.START, "plan")
    graph.add_edge("plan", "a")
    graph.add_edge("plan", "b")
    graph.add_edge(["a", "b"], "merge")
    graph.add_conditional_edges("merge", lambda s: [ag.Send("worker", s)])
    graph.add_edge("worker", ag.END)
    with pytest.warns(ag.GraphValidationWarning, match="'worker'"):
        return build_spec(graph)


def goto() -> GraphSpec:
    graph = ag.Graph(name="goto")
    graph.add_vertex("triage", same, destinations=["human", ag.END])
    graph.add_vertex("human", same)
    graph.add_edge(ag.START, "triage")
    graph.add_edge("human", ag.END)
    return build_spec(graph)


LINE_MERMAID = """\
flowchart TD
    __start__(["START"])
    v0["a"]
    __end__(["END"])
    __start__ --> v0
    v0 --> __end__
"""

LINE_DOT = """\
digraph "line" {
    rankdir=TB;
    "__start__" [label="START", shape=ellipse];
    "v0" [label="a", shape=box];
    "__end__" [label="END", shape=doublecircle];
    "__start__" -> "v0";
    "v0" -> "__end__";
}
"""

LOOP_MERMAID = """\
flowchart TD
    __start__(["START"])
    v0["write"]
    v1["review"]
    __end__(["END"])
    __start__ --> v0
    v0 --> v1
    v1 -.->|"revise"| v0
    v1 -.->|"accept"| __end__
"""

LOOP_DOT = """\
digraph "loop" {
    rankdir=TB;
    "__start__" [label="START", shape=ellipse];
    "v0" [label="write", shape=box];
    "v1" [label="review", shape=box];
    "__end__" [label="END", shape=doublecircle];
    "__start__" -> "v0";
    "v0" -> "v1";
    "v1" -> "v0" [style=dashed, label="revise"];
    "v1" -> "__end__" [style=dashed, label="accept"];
}
"""

FAN_MERMAID = """\
flowchart TD
    __start__(["START"])
    v0["plan"]
    v1["a"]
    v2["b"]
    v3["merge"]
    v4["worker"]
    __end__(["END"])
    __start__ --> v0
    v0 --> v1
    v0 --> v2
    v4 --> __end__
    v3 -.-> v0
    v3 -.-> v1
    v3 -.-> v2
    v3 -.-> v3
    v3 -.-> v4
    v3 -.-> __end__
    v1 ==>|"join"| v3
    v2 ==>|"join"| v3
"""

FAN_DOT = """\
digraph "fan" {
    rankdir=TB;
    "__start__" [label="START", shape=ellipse];
    "v0" [label="plan", shape=box];
    "v1" [label="a", shape=box];
    "v2" [label="b", shape=box];
    "v3" [label="merge", shape=box];
    "v4" [label="worker", shape=box];
    "__end__" [label="END", shape=doublecircle];
    "__start__" -> "v0";
    "v0" -> "v1";
    "v0" -> "v2";
    "v4" -> "__end__";
    "v3" -> "v0" [style=dashed];
    "v3" -> "v1" [style=dashed];
    "v3" -> "v2" [style=dashed];
    "v3" -> "v3" [style=dashed];
    "v3" -> "v4" [style=dashed];
    "v3" -> "__end__" [style=dashed];
    "v1" -> "v3" [style=bold, label="join"];
    "v2" -> "v3" [style=bold, label="join"];
}
"""

GOTO_MERMAID = """\
flowchart TD
    __start__(["START"])
    v0["triage"]
    v1["human"]
    __end__(["END"])
    __start__ --> v0
    v1 --> __end__
    v0 -.->|"goto"| v1
    v0 -.->|"goto"| __end__
"""

GOTO_DOT = """\
digraph "goto" {
    rankdir=TB;
    "__start__" [label="START", shape=ellipse];
    "v0" [label="triage", shape=box];
    "v1" [label="human", shape=box];
    "__end__" [label="END", shape=doublecircle];
    "__start__" -> "v0";
    "v1" -> "__end__";
    "v0" -> "v1" [style=dashed, label="goto"];
    "v0" -> "__end__" [style=dashed, label="goto"];
}
"""


@pytest.mark.parametrize(
    ("make", "mermaid", "dot"),
    [
        (line, LINE_MERMAID, LINE_DOT),
        (loop, LOOP_MERMAID, LOOP_DOT),
        (fan_out, FAN_MERMAID, FAN_DOT),
        (goto, GOTO_MERMAID, GOTO_DOT),
    ],
    ids=["line", "loop", "fan-out", "goto"],
)
def test_structure(make, mermaid, dot):
    spec = make()
    assert to_mermaid(spec) == mermaid
    assert to_dot(spec) == dot


CLASS_DEFS = """\
    classDef ok fill:#d4edda,stroke:#2e7d32,color:#1b5e20
    classDef error fill:#f8d7da,stroke:#c62828,color:#b71c1c
    classDef interrupt fill:#ffe8b3,stroke:#ff8f00,color:#7a4f00
    classDef pending fill:#eeeeee,stroke:#9e9e9e,color:#616161,stroke-dasharray:5 5
"""


def test_statuses():
    spec = fan_out()
    statuses = {"worker": "pending", "b": "interrupt", "plan": "ok", "a": "error"}
    assert to_mermaid(spec, statuses) == FAN_MERMAID + CLASS_DEFS + (
        "    class v0 ok\n    class v1 error\n    class v2 interrupt\n    class v4 pending\n"
    )
    assert to_dot(spec, statuses) == (
        FAN_DOT.replace(
            '"v0" [label="plan", shape=box]',
            '"v0" [label="plan", shape=box, style="filled", fillcolor="#d4edda", color="#2e7d32"]',
        )
        .replace(
            '"v1" [label="a", shape=box]',
            '"v1" [label="a", shape=box, style="filled", fillcolor="#f8d7da", color="#c62828"]',
        )
        .replace(
            '"v2" [label="b", shape=box]',
            '"v2" [label="b", shape=box, style="filled", fillcolor="#ffe8b3", color="#ff8f00"]',
        )
        .replace(
            '"v4" [label="worker", shape=box]',
            '"v4" [label="worker", shape=box, style="filled,dashed", fillcolor="#eeeeee", color="#9e9e9e"]',
        )
    )


def test_empty_statuses_add_only_the_class_definitions():
    assert to_mermaid(line(), {}) == LINE_MERMAID + CLASS_DEFS
    assert to_dot(line(), {}) == LINE_DOT


def test_odd_names_are_escaped():
    graph = ag.Graph(name='say "hi"')
    names = ['say "hi"', "my vertex", "a-b.c", "café ☕", "back\\slash", "#1 <b>&"]
    for name in names:
        graph.add_vertex(name, same)
    graph.add_edge(ag.START, names[0])
    for src, dst in itertools.pairwise(names):
        graph.add_edge(src, dst)
    graph.add_conditional_edges(names[-1], lambda s: 'a "b"', {'a "b"': ag.END, "c|d": names[0]})
    spec = build_spec(graph)
    assert to_mermaid(spec) == (
        "flowchart TD\n"
        '    __start__(["START"])\n'
        '    v0["say #quot;hi#quot;"]\n'
        '    v1["my vertex"]\n'
        '    v2["a-b.c"]\n'
        '    v3["café ☕"]\n'
        '    v4["back#92;slash"]\n'
        '    v5["#35;1 #lt;b#gt;#amp;"]\n'
        '    __end__(["END"])\n'
        "    __start__ --> v0\n"
        "    v0 --> v1\n"
        "    v1 --> v2\n"
        "    v2 --> v3\n"
        "    v3 --> v4\n"
        "    v4 --> v5\n"
        '    v5 -.->|"a #quot;b#quot;"| __end__\n'
        '    v5 -.->|"c#124;d"| v0\n'
    )
    dot = to_dot(spec)
    assert dot.startswith('digraph "say \\"hi\\"" {\n')
    assert '    "v0" [label="say \\"hi\\"", shape=box];\n' in dot
    assert '    "v1" [label="my vertex", shape=box];\n' in dot
    assert '    "v3" [label="café ☕", shape=box];\n' in dot
    assert '    "v4" [label="back\\\\slash", shape=box];\n' in dot
    assert '    "v5" [label="#1 <b>&", shape=box];\n' in dot
    assert '    "v5" -> "__end__" [style=dashed, label="a \\"b\\""];\n' in dot
    assert all(not row.endswith(" ") for text in (dot, to_mermaid(spec)) for row in text.splitlines())


@pytest.mark.needs_dot
def test_escaped_dot_is_valid_graphviz(tmp_path):
    graph = ag.Graph(name='quote " and \\')
    graph.add_vertex('say "hi" \\', same)
    graph.add_edge(ag.START, 'say "hi" \\')
    graph.add_conditional_edges('say "hi" \\', lambda s: "x", {'"\\': ag.END})
    out = render_png(to_dot(build_spec(graph)), tmp_path / "odd.png")
    assert out.read_bytes().startswith(b"\x89PNG")


@pytest.mark.parametrize("draw", [to_mermaid, to_dot])
def test_unknown_status_raises(draw):
    with pytest.raises(ValueError, match=r"unknown status 'done' for vertex 'a'; use one of 'ok', 'error'"):
        draw(line(), {"a": "done"})


@pytest.mark.parametrize("draw", [to_mermaid, to_dot])
def test_status_of_unknown_vertex_raises(draw):
    with pytest.raises(ValueError, match=r"unknown vertex 'b'; the vertices of graph 'line' are: 'a'"):
        draw(line(), {"b": "ok"})


@pytest.mark.needs_dot
def test_render_png(tmp_path):
    target = tmp_path / "fan.png"
    out = render_png(to_dot(fan_out()), str(target))
    assert out == target
    assert isinstance(out, pathlib.Path)
    assert target.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")


def test_render_png_without_graphviz(tmp_path, monkeypatch):
    empty = tmp_path / "empty"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    with pytest.raises(
        ag.ActorGraphError, match=r"'dot'.*install Graphviz \(e\.g\. `apt-get install graphviz`"
    ):
        render_png(to_dot(line()), tmp_path / "x.png")
    assert not (tmp_path / "x.png").exists()


@pytest.mark.needs_dot
def test_render_png_reports_dot_errors(tmp_path):
    with pytest.raises(ag.ActorGraphError, match=r"exit code 1 .*syntax error"):
        render_png("digraph { -> }", tmp_path / "bad.png")
