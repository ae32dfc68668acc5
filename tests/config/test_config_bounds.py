"""Graph files from someone else: bounded in time and memory, located when refused, importing what is allowed.

Each attack is written as an attacker would write it; each must end quickly (the test's
own timeout enforces it) in a `ConfigFileError` naming the file, line and column, or, for
an expression that builds too much at run time, in a `RoutingError` naming the expression.
"""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest
from cli_shell import Shell

import actorgraph as ag
from actorgraph._api.files.reading import MAX_ALIASED, MAX_BYTES, MAX_DEPTH, MAX_NODES

TAIL = "edges:\n  - {source: __start__, target: v}\n  - {source: v, target: __end__}\n"

LAUGHS = "".join(
    [
        'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n',
        *(f"{b}: &{b} [{','.join([f'*{a}'] * 9)}]\n" for a, b in zip("abcdefgh", "bcdefghi", strict=True)),
    ]
)

# name: (text, line, column, what the message says)
ATTACKS: dict[str, tuple[str, int, int, str]] = {
    "billion laughs": (LAUGHS, 5, 8, f"aliases expand to more than {MAX_ALIASED:,} values"),
    "a recursive alias": ("a: &a [*a]\n", 1, 8, "recursive alias"),
    "a recursive alias in a mapping": ("a: &a {b: *a}\n", 1, 11, "recursive alias"),
    "10,000 nested brackets": (
        "x: " + "[" * 10_000 + "]" * 10_000 + "\n",
        1,
        4 + MAX_DEPTH - 1,
        f"nested too deeply: at most {MAX_DEPTH} levels",
    ),
    "10,000 nested mappings": (
        "x: " + "{a: " * 10_000 + "1" + "}" * 10_000 + "\n",
        1,
        4 + 4 * (MAX_DEPTH - 2) + 1,  # the key of the 100th mapping is the 101st level
        f"nested too deeply: at most {MAX_DEPTH} levels",
    ),
    "nesting in blocks": (
        "".join(f"{'  ' * level}k:\n" for level in range(MAX_DEPTH + 5)),
        MAX_DEPTH,
        2 * MAX_DEPTH - 1,
        "nested too deeply",
    ),
    "an alias that nests too deeply once expanded": (
        "a: &a " + "[" * 60 + "]" * 60 + "\nb: " + "[" * 50 + "*a" + "]" * 50 + "\n",
        2,
        54,
        "nested too deeply with this alias expanded",
    ),
    "os.system by apply": (
        'vertices: !!python/object/apply:os.system ["echo owned"]\n' + TAIL,
        1,
        11,
        "the tag !!python/object/apply:os.system is not allowed: a graph file holds plain values",
    ),
    "a python name": (
        "vertices:\n  - id: v\n    fn: !!python/name:os.system\n" + TAIL,
        3,
        9,
        "the tag !!python/name:os.system is not allowed",
    ),
    "a python object": ("x: !!python/object:subprocess.Popen {args: [ls]}\n", 1, 4, "tag !!python/object"),
    "a local tag": ("x: !secret value\n", 1, 4, "the tag !secret is not allowed"),
    "a merge key": ("a: &a {x: 1}\nb:\n  <<: *a\n", 3, 3, "merge keys (<<) are not supported"),
    "a control character": ("name: a\x07b\n", 1, 8, "the character U+0007 is not allowed in YAML"),
    "an integer of 5,000 digits": ("name: " + "9" * 5_000 + "\n", 1, 7, "cannot read this value"),
    "a date that is not one": ("name: 2024-13-45\n", 1, 7, "cannot read this value: month must be in 1..12"),
    "a duplicate anchor": ("a: &x 1\nb: &x 2\n", 2, 4, "not valid YAML: second occurrence"),
    "an undefined alias": ("a: *nowhere\n", 1, 4, "found undefined alias 'nowhere'"),
    "two documents": ("a: 1\n---\nb: 2\n", 2, 1, "expected a single document"),
    "too many values": (
        "x: [" + ",".join(["0"] * (MAX_NODES + 1)) + "]\n",
        1,
        5 + 2 * (MAX_NODES - 1),  # the key x was the first value
        f"more than {MAX_NODES:,} values",
    ),
}


@pytest.mark.slow
@pytest.mark.timeout(10)
@pytest.mark.parametrize("name", sorted(ATTACKS))
def test_an_attack_in_yaml_is_a_located_config_file_error(name: str) -> None:
    text, line, column, message = ATTACKS[name]
    with pytest.raises(ag.ConfigFileError) as caught:
        ag.load_string(text, file="evil.yaml")
    error = caught.value
    assert (error.file, error.line, error.column) == ("evil.yaml", line, column), str(error)
    assert message in error.problem
    assert str(error).startswith(f"evil.yaml:{line}:{column}: ")


def test_the_billion_laughs_is_small() -> None:
    assert len(LAUGHS.encode()) < 1024


@pytest.mark.timeout(10)
def test_aliases_within_the_bound_still_work() -> None:
    text = textwrap.dedent("""\
        retry: &patient {max_attempts: 3, initial_interval: 0}
        vertices:
          - {id: v, fn: config_vertices:approve, retry: *patient}
          - {id: w, fn: config_vertices:review, retry: *patient}
        edges:
          - {source: __start__, target: v}
          - {source: v, target: w}
          - {source: w, target: __end__}
        """)
    with ag.load_string(text, file="flow.yaml").compile() as app:
        assert app.invoke({}).state["outcome"] == "manual review"


@pytest.mark.timeout(10)
def test_a_file_that_is_not_utf8_is_refused_where_its_bad_byte_is(tmp_path: Path) -> None:
    path = tmp_path / "latin1.yaml"
    path.write_bytes(b"name: ok\ndescription: caf\xe9\n" + TAIL.encode())
    with pytest.raises(ag.ConfigFileError) as caught:
        ag.load(path)
    assert (caught.value.file, caught.value.line, caught.value.column) == (str(path), 2, 17)
    assert "not UTF-8 text: byte 0xe9" in caught.value.problem


@pytest.mark.timeout(10)
def test_a_huge_file_is_refused_without_reading_it_all(tmp_path: Path) -> None:
    path = tmp_path / "huge.yaml"
    line = "# " + "x" * 98 + "\n"  # 101 bytes a line
    with path.open("w") as out:
        out.write("name: huge\n")
        for _ in range(200_000):  # 20 MB
            out.write(line)
    with pytest.raises(ag.ConfigFileError) as caught:
        ag.load(path)
    lines_before = (MAX_BYTES - len("name: huge\n")) // len(line)
    column = (MAX_BYTES - len("name: huge\n")) % len(line) + 1
    assert (caught.value.file, caught.value.line, caught.value.column) == (
        str(path),
        lines_before + 2,
        column,
    )
    assert f"larger than {MAX_BYTES:,} bytes" in caught.value.problem


@pytest.mark.timeout(10)
def test_a_huge_text_is_refused_too() -> None:
    with pytest.raises(ag.ConfigFileError, match=rf"big\.yaml:1:{MAX_BYTES + 1}: the text is longer"):
        ag.load_string("#" * (MAX_BYTES + 10), file="big.yaml")


@pytest.mark.parametrize(
    ("make", "problem"),
    [
        (lambda p: p.mkdir(), "cannot read the graph file: Is a directory"),
        (lambda p: None, "cannot read the graph file: No such file or directory"),
    ],
)
def test_a_path_that_is_no_file_is_a_config_file_error(tmp_path: Path, make: Any, problem: str) -> None:
    path = tmp_path / "flow.yaml"
    make(path)
    with pytest.raises(ag.ConfigFileError) as caught:
        ag.load(path)
    assert (caught.value.file, caught.value.line, caught.value.problem) == (str(path), None, problem)


# -- expressions that would build too much, in a real run ----------------------------------------

BOMBS = [
    "[[[0]*10000]*10000]*10000 == flow.x",
    "'a' * 1000000 == flow.x",
    "((flow.s * 2) * 2) * 2 * 2 * 2 * 2 * 2 * 2 * 2 * 2 * 2 * 2 * 2 * 2 * 2 * 2 * 2 * 2 * 2 * 2 == flow.x",
    "[flow.s] * 10000 + [flow.s] * 10000 == flow.x",
]


@pytest.mark.timeout(10)
@pytest.mark.parametrize("bomb", BOMBS)
def test_a_condition_that_builds_too_much_fails_the_run_with_a_routing_error(bomb: str) -> None:
    text = f"""\
        vertices:
          - {{id: a, fn: config_vertices:passthrough}}
          - {{id: b, fn: config_vertices:approve}}
        edges:
          - {{source: __start__, target: a}}
          - source: a
            condition: {bomb!r}
            mappings: {{true: b, false: __end__}}
          - {{source: b, target: __end__}}
        """
    app = ag.load_string(textwrap.dedent(text), file="bomb.yaml").compile()
    with app, pytest.raises(ag.RoutingError) as caught:
        app.invoke({"x": 1, "s": "ab"})
    assert f"expression {bomb!r} failed" in str(caught.value)
    assert "items and characters, past the 100,000" in str(caught.value)


@pytest.mark.timeout(10)
def test_a_send_over_a_list_that_would_be_too_big_fails_the_run() -> None:
    text = """\
        vertices:
          - {id: a, fn: config_vertices:passthrough}
          - {id: w, fn: config_vertices:passthrough}
        edges:
          - {source: __start__, target: a}
          - source: a
            send: {to: w, each: '[flow.s] * 60000 + [flow.s] * 60000', as: item}
          - {source: w, target: __end__}
        """
    app = ag.load_string(textwrap.dedent(text), file="fan.yaml").compile()
    with app, pytest.raises(ag.RoutingError, match=r"\[flow\.s\] \* 60000"):
        app.invoke({"s": "x"})


# -- the allowlist ---------------------------------------------------------------------------------


def one(fn: str) -> str:
    """A graph file of one vertex, whose `fn` is at line 3, column 9."""
    return f"vertices:\n  - id: v\n    fn: {fn}\n{TAIL}"


def test_a_module_outside_the_allowlist_is_refused_where_the_file_names_it() -> None:
    with pytest.raises(ag.ConfigFileError) as caught:
        ag.load_string(one("subprocess:Popen"), file="flow.yaml", allow_modules=["config_vertices"])
    assert (caught.value.line, caught.value.column) == (3, 9)
    assert caught.value.problem == (
        "'subprocess:Popen' imports module 'subprocess', which is not allowed (allow_modules: "
        "config_vertices); add it to allow_modules (--allow-module) only if you trust it"
    )


def test_a_module_in_the_allowlist_or_under_a_listed_package_loads() -> None:
    graph = ag.load_string(one("config_vertices:approve"), allow_modules=["config_vertices"])
    with graph.compile() as app:
        assert app.invoke({}).state["outcome"] == "approved"
    under = ag.load_string(one("actorgraph.merge:replace"), allow_modules=["actorgraph"])
    with under.compile() as app:
        assert app.spec.vertices["v"].fn is ag.merge.replace


def test_a_listed_name_is_not_a_prefix_of_other_modules() -> None:
    with pytest.raises(ag.ConfigFileError, match="imports module 'config_vertices', which is not allowed"):
        ag.load_string(one("config_vertices:approve"), allow_modules=["config"])


@pytest.fixture
def handy(tmp_path: Path) -> Path:
    """A module an operator allows, which imported dangerous things for its own use."""
    (tmp_path / "handy_tools.py").write_text(
        "import os\nfrom subprocess import Popen\n\n\ndef tidy(state):\n    return state\n"
    )
    return tmp_path


@pytest.mark.parametrize(
    ("fn", "problem"),
    [
        ("handy_tools:os.system", "'handy_tools:os.system' reaches module 'os', which is not allowed"),
        ("handy_tools:Popen", "'handy_tools:Popen' is defined in module 'subprocess', which is not allowed"),
    ],
)
def test_an_allowed_module_does_not_lead_out_of_the_list(handy: Path, fn: str, problem: str) -> None:
    (handy / "flow.yaml").write_text(one(fn))
    with pytest.raises(ag.ConfigFileError) as caught:
        ag.load(handy / "flow.yaml", allow_modules=["handy_tools"])
    assert (caught.value.line, caught.value.column) == (3, 9)
    assert caught.value.problem.startswith(problem)
    (handy / "flow.yaml").write_text(one("handy_tools:tidy"))
    assert ag.load(handy / "flow.yaml", allow_modules=["handy_tools"]).name == "graph"


def test_every_import_of_the_file_is_checked_but_builtin_exceptions_need_no_allowing() -> None:
    text = (
        "vertices:\n  - id: v\n    fn: config_vertices:approve\n"
        "    retry: {retry_on: [ConnectionError, builtins.TimeoutError]}\n"
        "    on_error: os:abort\n" + TAIL
    )
    with pytest.raises(ag.ConfigFileError) as caught:
        ag.load_string(text, file="flow.yaml", allow_modules=["config_vertices"])
    assert (caught.value.line, caught.value.column) == (5, 15)
    assert "'os:abort' imports module 'os', which is not allowed" in caught.value.problem


@pytest.mark.parametrize(
    ("allow", "problem"),
    [
        ("config_vertices", "allow_modules is a list of module names, not one string"),
        (["config vertices"], "allow_modules: 'config vertices' is not a module name"),
        ([3], "allow_modules: 3 is not a module name"),
    ],
)
def test_a_wrong_allowlist_is_a_config_error(allow: Any, problem: str) -> None:
    with pytest.raises(ag.ConfigError, match=problem):
        ag.load_string(one("config_vertices:approve"), allow_modules=allow)


@pytest.mark.parametrize(
    ("fn", "problem"),
    [
        (".relative:thing", "'.relative:thing' is not an import path"),
        ("'config_vertices:'", "'config_vertices:' is not an import path"),
        (
            "exploding_module_xyz:f",
            "importing module 'exploding_module_xyz' for 'exploding_module_xyz:f' raised",
        ),
    ],
)
def test_an_import_path_that_fails_is_located(tmp_path: Path, fn: str, problem: str) -> None:
    (tmp_path / "exploding_module_xyz.py").write_text("raise RuntimeError('boom at import')\n")
    (tmp_path / "flow.yaml").write_text(one(fn))
    with pytest.raises(ag.ConfigFileError) as caught:
        ag.load(tmp_path / "flow.yaml")
    assert (caught.value.line, caught.value.column) == (3, 9)
    assert problem in caught.value.problem


# -- the command line ------------------------------------------------------------------------------


@pytest.fixture
def sh(tmp_path: Path) -> Shell:
    return Shell(tmp_path)


@pytest.mark.slow
def test_allow_module_on_the_command_line_refuses_a_file_naming_another_module(sh: Shell) -> None:
    (sh.home / "flow.yaml").write_text(one("subprocess:Popen"))
    done = sh("validate", "flow.yaml", "--allow-module", "config_vertices", code=1)
    assert done.stderr == (
        "error: invalid graph: flow.yaml:3:9: 'subprocess:Popen' imports module 'subprocess', which "
        "is not allowed (allow_modules: config_vertices); add it to allow_modules (--allow-module) "
        "only if you trust it\n"
    )
    sh.env["ACTORGRAPH_ALLOW_MODULES"] = "config_vertices,cli_graphs"
    refused = sh.json("run", "flow.yaml", code=1)
    assert "(allow_modules: config_vertices, cli_graphs)" in refused["error"]


@pytest.mark.slow
def test_allow_module_lets_a_file_naming_allowed_modules_run(sh: Shell) -> None:
    (sh.home / "flow.yaml").write_text(one("config_vertices:approve"))
    done = sh.json("run", "flow.yaml", "--allow-module", "cli_graphs", "--allow-module", "config_vertices")
    assert done["state"] == {"outcome": "approved"}
    assert sh("validate", "flow.yaml", "--allow-module", "config_vertices").stdout.startswith("ok: flow.yaml")


def test_allow_module_refuses_a_name_that_is_not_a_module(sh: Shell) -> None:
    done = sh("validate", "flow.yaml", "--allow-module", "not a module", code=2)
    assert "'not a module' is not a module name" in done.stderr


@pytest.mark.slow
@pytest.mark.timeout(30)
def test_an_attack_on_the_command_line_is_one_located_line(sh: Shell) -> None:
    (sh.home / "evil.yaml").write_text(LAUGHS)
    done = sh("validate", "evil.yaml", code=1)
    assert done.stderr == (
        f"error: invalid graph: evil.yaml:5:8: aliases expand to more than {MAX_ALIASED:,} values "
        "(a billion laughs?): write the values out, or alias only small ones\n"
    )
