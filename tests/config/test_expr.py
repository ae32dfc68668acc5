"""Expressions in graph files: what they compute, what they refuse (and where), how they fail at run time.

The property test compares the module with Python itself: the oracle is Python's
`eval` of the same generated text (here, in the test only, on text the test wrote).
"""

from __future__ import annotations

import ast
import pickle
import warnings
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import actorgraph._api.files.expr
from actorgraph._api.files.expr import (
    MAX_DEPTH,
    MAX_NODES,
    MAX_SIZE,
    MAX_TEXT,
    Expression,
    compile_expression,
)
from actorgraph._model.errors import ConfigFileError, GraphValidationError, RoutingError

STATE: dict[str, Any] = {
    "score": 70,
    "blocked": False,
    "kind": "a",
    "next_action": "review",
    "used": 3,
    "ratio": 0.5,
    "zero": 0,
    "none": None,
    "items": [10, 20, 30],
    "doc": {"title": "x", "tags": ["t1", "t2"], "meta": {"pages": 4}},
    "with space": "spaced",
    "global": "a key named global",
    "text": "hello",
}
GLOBALS: dict[str, Any] = {"limit": 10, "name": "prod", "kinds": ["a", "b"]}


def compiled(text: str, flow_keys: frozenset[str] | None = None) -> Expression:
    return compile_expression(text, flow_keys=flow_keys, global_keys=frozenset(GLOBALS))


def value(text: str, state: dict[str, Any] | None = None) -> Any:
    return compiled(text).evaluate(STATE if state is None else state, GLOBALS)


def refusal(text: str, **keys: frozenset[str] | None) -> ConfigFileError:
    """The error of an expression placed at line 7, column 15 of graph.yaml."""
    with pytest.raises(ConfigFileError) as caught:
        compile_expression(
            text,
            flow_keys=keys.get("flow_keys", frozenset(STATE)),
            global_keys=keys.get("global_keys", frozenset(GLOBALS)),
            file="graph.yaml",
            line=7,
            column=15,
        )
    return caught.value


# -- what expressions compute ----------------------------------------------------------------------

EVALUATIONS: list[tuple[str, Any]] = [
    # the examples
    ("flow.next_action", "review"),
    ("flow.score > 60 and not flow.blocked", True),
    ('"pass" if flow.score > 60 else "reject"', "pass"),
    ('"pass" if flow.score > 80 else "reject"', "reject"),
    ('flow.kind in ["a", "b"]', True),
    ("global.limit - flow.used", 7),
    ("flow.items[0]", 10),
    ('flow.doc.title == "x"', True),
    # lookups
    ("flow.items[-1]", 30),
    ("flow.items[2]", 30),
    ('flow["with space"]', "spaced"),
    ('flow["doc"]["title"]', "x"),
    ("flow.doc.tags[1]", "t2"),
    ('flow.doc["meta"].pages', 4),
    ("flow.text[0]", "h"),
    ("flow.global", "a key named global"),
    ('global["name"]', "prod"),
    ("global.kinds[-1]", "b"),
    ("flow.kind in global.kinds", True),
    ("(flow.doc).title", "x"),
    # literals
    ("'single'", "single"),
    ('"double"', "double"),
    ('"global."', "global."),
    ("42", 42),
    ("1.5", 1.5),
    ("1_000", 1000),
    ("True", True),
    ("False", False),
    ("None", None),
    ("[]", []),
    ("()", ()),
    ("[1, 'a', None, [2]]", [1, "a", None, [2]]),
    ("(1,)", (1,)),
    ("1, 2", (1, 2)),
    ("[flow.used, global.limit]", [3, 10]),
    # arithmetic
    ("flow.used + 2", 5),
    ("flow.used - 5", -2),
    ("flow.used * 4", 12),
    ("7 / 2", 3.5),
    ("7 // 2", 3),
    ("-7 // 2", -4),
    ("7 % 3", 1),
    ("-7 % 3", 2),
    ("-flow.used", -3),
    ("+flow.used", 3),
    ("--flow.used", 3),
    ("1 + 2 * 3", 7),
    ("(1 + 2) * 3", 9),
    ("flow.ratio * 4", 2.0),
    ('"ab" + "cd"', "abcd"),
    ('"ab" * 3', "ababab"),
    ("3 * [0]", [0, 0, 0]),
    ("[1] + [2]", [1, 2]),
    ("True + True", 2),
    # comparisons
    ("flow.score == 70", True),
    ("flow.score != 70", False),
    ("flow.score < 70", False),
    ("flow.score <= 70", True),
    ("flow.score > 70", False),
    ("flow.score >= 70", True),
    ("0 < flow.used <= 10", True),
    ("0 < flow.used < 2", False),
    ("1 < 2 < 3 < 4", True),
    ("1 < 3 > 2 == 2", True),
    ('"x" in flow.doc', False),
    ('"title" in flow.doc', True),
    ('"ell" in flow.text', True),
    ('flow.kind not in ["a", "b"]', False),
    ("flow.none is None", True),
    ("flow.none is not None", False),
    ("flow.blocked is False", True),
    ("flow.blocked is not True", True),
    ('"a" < "b"', True),
    ("[1, 2] < [1, 3]", True),
    # boolean operators give one of their operands, like Python
    ("flow.used and flow.kind", "a"),
    ("flow.zero and flow.kind", 0),
    ("flow.zero or flow.kind", "a"),
    ("flow.none or flow.zero or 5", 5),
    ('"" or []', []),
    ("not flow.zero", True),
    ("not flow.items", False),
    ("not not flow.text", True),
    ("flow.blocked or flow.score > 60 and flow.used < 5", True),
    # conditional expressions, nested
    ("1 if flow.zero else 2 if flow.used else 3", 2),
    ('(flow.kind if flow.kind in global.kinds else "other") + "!"', "a!"),
    # layout: leading and trailing space, lines inside parentheses, comments
    ("  flow.used  ", 3),
    ("\n\nflow.used\n", 3),
    ("(flow.used +\n   flow.score)", 73),
    ("flow.used  # the count", 3),
]


@pytest.mark.parametrize(("text", "expected"), EVALUATIONS)
def test_an_expression_computes_what_python_would(text: str, expected: Any) -> None:
    result = value(text)
    assert result == expected
    assert type(result) is type(expected)


SHORT_CIRCUITS = [
    ("flow.zero != 0 and 1 / flow.zero > 1", False),
    ("flow.zero == 0 or 1 / flow.zero > 1", True),
    ("False and flow.missing", False),
    ("True or flow.missing", True),
    ('"yes" if True else flow.missing', "yes"),
    ('flow.missing if False else "no"', "no"),
    ("1 > 2 < flow.missing", False),
    ("flow.zero and flow.missing.deeper[0]", 0),
]


@pytest.mark.parametrize(("text", "expected"), SHORT_CIRCUITS)
def test_and_or_conditionals_and_chains_evaluate_only_what_python_would(text: str, expected: Any) -> None:
    assert value(text) == expected


def test_comparisons_chain_evaluating_each_operand_once() -> None:
    reads: list[str] = []

    class Counting(dict[str, Any]):
        def __getitem__(self, key: str) -> Any:
            reads.append(key)
            return super().__getitem__(key)

    assert compiled("0 < flow.used <= 10").evaluate(Counting(STATE), GLOBALS) is True
    assert reads == ["used"]


def test_an_expression_evaluates_again_and_again_with_other_states() -> None:
    expression = compiled("flow.score > global.limit")
    assert [expression.evaluate({"score": n}, GLOBALS) for n in (5, 10, 11)] == [False, False, True]


def test_an_expression_pickles_and_evaluates_the_same() -> None:
    for text, expected in EVALUATIONS:
        copy = pickle.loads(pickle.dumps(compiled(text)))  # noqa: S301 - our own bytes
        assert copy == compiled(text)
        assert copy.evaluate(STATE, GLOBALS) == expected, text


def test_an_expression_checked_against_keys_pickles_without_them() -> None:
    expression = compile_expression(
        "flow.a + global.b", flow_keys=frozenset({"a"}), global_keys=frozenset("b")
    )
    copy = pickle.loads(pickle.dumps(expression))  # noqa: S301 - our own bytes
    assert copy.text == "flow.a + global.b"
    assert copy.evaluate({"a": 1}, {"b": 2}) == 3


# -- what expressions refuse, and where ----------------------------------------------------------

# (text, part of the problem, line, column) for an expression at line 7, column 15 of graph.yaml
REFUSALS: list[tuple[str, str, int, int]] = [
    ("len(flow.text)", "calls are not allowed", 7, 15),
    ('__import__("os")', "calls are not allowed", 7, 15),
    ("flow.used + len(flow.text)", "calls are not allowed", 7, 27),
    ("flow.doc.title.upper()", "calls are not allowed", 7, 15),
    ("flow.doc.__class__", "the key '__class__' is not allowed", 7, 15),
    ('flow["__class__"]', "the key '__class__' is not allowed", 7, 15),
    ("flow.__dict__", "the key '__dict__' is not allowed", 7, 15),
    ('"x".upper', "attribute 'upper' of a value: only flow.KEY and global.KEY name values", 7, 15),
    ("(flow.used + 1).real", "attribute 'real' of a value", 7, 15),
    ("[1, 2][0]", "subscript of a value", 7, 15),
    ("lambda: 1", "lambda is not allowed", 7, 15),
    ("[x for x in flow.items]", "comprehensions are not allowed", 7, 15),
    ("{x for x in flow.items}", "comprehensions are not allowed", 7, 15),
    ("{x: 1 for x in flow.items}", "comprehensions are not allowed", 7, 15),
    ("flow.used + sum(x for x in flow.items)", "calls are not allowed", 7, 27),
    ('f"{flow.kind}"', "f-strings are not allowed", 7, 15),
    ("(n := flow.used)", "the walrus operator := is not allowed", 7, 16),
    ("flow.used ** 2", "the operator ** is not allowed", 7, 25),
    ("(flow.used) ** 2", "the operator ** is not allowed", 7, 27),
    ("flow.used @ flow.used", "the operator @ is not allowed", 7, 25),
    ("flow.used | 1", "the operator | is not allowed", 7, 25),
    ("flow.used & 1", "the operator & is not allowed", 7, 25),
    ("flow.used ^ 1", "the operator ^ is not allowed", 7, 25),
    ("flow.used << 1", "the operator << is not allowed", 7, 25),
    ("flow.used >> 1", "the operator >> is not allowed", 7, 25),
    ("~flow.used", "the operator ~ is not allowed", 7, 15),
    ("[*flow.items]", "starred expressions (*x) are not allowed", 7, 16),
    ("os", "names other than flow and global are not allowed: 'os'", 7, 15),
    ("flow.kind == approve", "names other than flow and global are not allowed: 'approve'", 7, 28),
    ("x.y", "names other than flow and global are not allowed: 'x'", 7, 15),
    ("flow", "flow alone is not a value", 7, 15),
    ('"a" in global', "global alone is not a value", 7, 22),
    (
        "flow.nope",
        "unknown key 'nope' in flow (known: blocked, doc, global, items, kind, next_action,",
        7,
        15,
    ),
    ("flow.used + global.nope", "unknown key 'nope' in global (known: kinds, limit, name)", 7, 27),
    ('flow["nope"]', "unknown key 'nope' in flow", 7, 15),
    ("flow[0]", "the keys of flow are text", 7, 15),
    ("flow.items[flow.used]", "subscript with a non-constant index", 7, 26),
    ("flow.items[1 + 1]", "subscript with a non-constant index", 7, 26),
    ("flow.items[True]", "subscript with a non-constant index", 7, 26),
    ("flow.items[1:2]", "slices are not allowed", 7, 26),
    ("{1, 2}", "set displays are not allowed", 7, 15),
    ('{"a": 1}', "dict displays are not allowed", 7, 15),
    ('b"x"', "bytes literals are not allowed", 7, 15),
    ("1j", "complex numbers are not allowed", 7, 15),
    ("...", "Ellipsis is not allowed", 7, 15),
    ("flow.used is 3", "`is` compares identity", 7, 28),
    ("flow.used is not flow.score", "`is` compares identity", 7, 32),
    ("(yield)", "Yield is not allowed", 7, 16),
    ("await flow.used", "Await is not allowed", 7, 15),
    ("_glbl_", "the name '_glbl_' is reserved", 7, 15),
    ("flow._glbl_", "the name '_glbl_' is reserved", 7, 20),
    # syntax errors, where Python's parser puts them
    ("flow.used = 1", "invalid expression: invalid syntax", 7, 25),
    ("flow.used > > 1", "invalid expression: invalid syntax", 7, 27),
    ("flow.used (", "invalid expression: '(' was never closed", 7, 25),
    ("flow.used if flow.zero", "invalid expression: expected 'else' after 'if' expression", 7, 15),
    ("flow.class", "invalid expression: invalid syntax", 7, 20),
    ("global.limit +", "invalid expression: invalid syntax", 7, 15),
    ("", "empty expression", 7, 15),
    ("   ", "empty expression", 7, 18),
    # lines and columns: characters (not bytes), later lines unshifted, leading space skipped
    ('"é" + len(flow.text)', "calls are not allowed", 7, 21),
    ('"日本" + @', "invalid expression: invalid syntax", 7, 22),
    ("(flow.used +\n  len(flow.text))", "calls are not allowed", 8, 3),
    ("(flow.used,\n flow.score\n ** 2)", "the operator ** is not allowed", 9, 2),
    ("'''a\nb''' + len(flow.text)", "calls are not allowed", 8, 8),
    ("  len(flow.text)", "calls are not allowed", 7, 17),
    ("\n\n  len(flow.text)", "calls are not allowed", 9, 3),
    ("(flow.used +\n  ))", "invalid expression: unmatched ')'", 8, 4),
    ("flow.used and\nflow.score", "several lines must be in parentheses", 7, 28),
]


@pytest.mark.parametrize(("text", "problem", "line", "column"), REFUSALS)
def test_a_refused_construct_is_reported_where_it_is_in_the_file(
    text: str, problem: str, line: int, column: int
) -> None:
    error = refusal(text)
    assert problem in error.problem
    assert (error.file, error.line, error.column) == ("graph.yaml", line, column)
    assert str(error).startswith(f"graph.yaml:{line}:{column}: ")
    assert isinstance(error, GraphValidationError)


def test_unknown_state_keys_are_accepted_when_the_state_is_not_known() -> None:
    expression = compile_expression("flow.anything.at_all", flow_keys=None, global_keys=frozenset())
    assert expression.evaluate({"anything": {"at_all": 7}}, {}) == 7
    assert "unknown key 'x' in global (known: none)" in refusal("global.x", global_keys=frozenset()).problem


def test_limits_on_size_and_nesting_are_errors_with_a_place() -> None:
    too_long = refusal("1 + " * (MAX_TEXT // 4) + "1")
    assert f"the limit is {MAX_TEXT:,}" in too_long.problem
    assert (too_long.line, too_long.column) == (7, 15)
    too_big = refusal("[" + ",".join(["1"] * MAX_NODES) + "]")
    assert f"more than {MAX_NODES} values and operations" in too_big.problem
    too_deep = refusal("not " * (MAX_DEPTH + 5) + "flow.used")
    assert f"at most {MAX_DEPTH} levels" in too_deep.problem
    assert (too_deep.line, too_deep.column) == (7, 15 + 4 * MAX_DEPTH)
    assert value("not " * (MAX_DEPTH - 2) + "flow.used") is True


def test_deep_or_huge_input_never_crashes_the_parser() -> None:
    for text in ["-" * 1999 + "1", "(" * 250 + "1" + ")" * 250, "[" * 300 + "]" * 300, "\x00"]:
        with pytest.raises(ConfigFileError):
            compile_expression(text, flow_keys=None, global_keys=frozenset())


def test_the_module_never_hands_text_to_python_to_run() -> None:
    tree = ast.parse(Path(actorgraph._api.files.expr.__file__).read_text())
    called = {
        node.func.id
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
    }
    assert not called & {"eval", "exec", "compile", "__import__", "breakpoint", "open"}
    attributes = {node.attr for node in ast.walk(tree) if isinstance(node, ast.Attribute)}
    assert "literal_eval" not in attributes


# -- how expressions fail at run time ---------------------------------------------------------------


class Ambiguous:
    """Like a numpy array: no truth value, and comparisons give another such value."""

    def __bool__(self) -> bool:
        raise ValueError("ambiguous")

    def __lt__(self, other: object) -> Ambiguous:
        return self


# (text, state, parts of the message after "expression 'text' failed: ")
RUNTIME_ERRORS: list[tuple[str, dict[str, Any], str]] = [
    ("flow.a > 1", {"a": "text"}, "`flow.a > 1` raised TypeError: '>' not supported"),
    ("flow.a / flow.b", {"a": 1, "b": 0}, "`flow.a / flow.b` raised ZeroDivisionError"),
    ("flow.a // 0", {"a": 1}, "raised ZeroDivisionError"),
    ("flow.a % 0", {"a": 1}, "raised ZeroDivisionError"),
    ("flow.b", {"a": 1}, "`flow` has no key 'b' (its keys: 'a')"),
    ("flow.a.b", {"a": {"c": 1}}, "`flow.a` has no key 'b' (its keys: 'c')"),
    ("flow.a.b", {"a": 1}, "`flow.a` is not a mapping (its type is int)"),
    ("flow.a[5]", {"a": [1, 2]}, "`flow.a` has no item 5 (its length is 2)"),
    ("flow.a[0]", {"a": 3}, "`flow.a` is not a mapping or a list (its type is int)"),
    ('flow.a["k"]', {"a": [1]}, "`flow.a` is not a mapping (its type is list)"),
    ("flow.a.x", {"a": SimpleNamespace(x=1)}, "`flow.a` is not a mapping (its type is SimpleNamespace)"),
    ("flow.a + 1", {"a": None}, "raised TypeError: unsupported operand"),
    ("-flow.a", {"a": "text"}, "`-flow.a` raised TypeError"),
    ("1 in flow.a", {"a": 5}, "raised TypeError"),
    (
        "flow.a * 100001",
        {"a": "x"},
        f"raised ValueError: it would build 100,001 items and characters, past the {MAX_SIZE:,}",
    ),
    ("50001 * flow.a", {"a": [1, 2]}, "it would build 100,002 items and characters"),
    ("(flow.a * 1000) * 101", {"a": "x"}, "it would build 101,000 items and characters"),
    (
        "flow.a * 60000 + flow.a * 60000",
        {"a": "x"},
        "`flow.a * 60000` raised ValueError: it would build 60,000",
    ),
    ("flow.a % 1", {"a": "%d"}, "% with a str formats text, which expressions do not do"),
    ("flow.a and 1", {"a": Ambiguous()}, "`flow.a and 1` raised ValueError: ambiguous"),
    ("flow.a if flow.a else 1", {"a": Ambiguous()}, "raised ValueError: ambiguous"),
    ("not flow.a", {"a": Ambiguous()}, "`not flow.a` raised ValueError: ambiguous"),
    ("flow.a < 1 < 2", {"a": Ambiguous()}, "`flow.a < 1 < 2` raised ValueError: ambiguous"),
]


@pytest.mark.parametrize(("text", "state", "message"), RUNTIME_ERRORS)
def test_a_failure_at_run_time_is_a_routing_error_naming_the_expression(
    text: str, state: dict[str, Any], message: str
) -> None:
    with pytest.raises(RoutingError) as caught:
        compile_expression(text, flow_keys=None, global_keys=frozenset()).evaluate(state, {})
    assert str(caught.value).startswith(f"expression {text!r} failed: ")
    assert message in str(caught.value)


def test_a_state_that_is_not_a_mapping_is_a_routing_error() -> None:
    with pytest.raises(RoutingError, match=r"`flow` is not a mapping \(its type is list\)"):
        compiled("flow.a").evaluate([1], GLOBALS)  # type: ignore[arg-type]


def test_repetition_up_to_the_limit_is_fine() -> None:
    assert len(value("flow.text * 20000")) == MAX_SIZE
    assert value("[0] * 99999", {}) == [0] * (MAX_SIZE - 1)  # the list [0] was built too: one item


def deep(levels: int) -> list[Any]:
    """A list nested `levels` deep, deeper than Python recurses."""
    nested: list[Any] = []
    for _ in range(levels):
        nested = [nested]
    return nested


# what an attacker writes to hang a run or fill its memory: each ends quickly in a RoutingError
BOMBS: list[tuple[str, dict[str, Any], str]] = [
    (
        "[[[0]*10000]*10000]*10000 == flow.x",
        {"x": 1},
        "`[[0]*10000]*10000` raised ValueError: it would build",
    ),
    ("'a' * 1000000 == flow.x", {"x": 1}, "it would build 1,000,000 items and characters"),
    ("flow.s * 1000000000000000000000", {"s": "ab"}, "it would build 2,000,000,000,000,000,000,000 items"),
    (
        "flow.x * 2 * 2 * 2 * 2 * 2 * 2 * 2 * 2 * 2 * 2 * 2 * 2 * 2 * 2 * 2 * 2 * 2",
        {"x": "ab"},
        "it would build",
    ),
    (
        "((flow.s + flow.s) + (flow.s + flow.s)) + ((flow.s + flow.s) + (flow.s + flow.s))",
        {"s": "a" * 20000},
        "",
    ),
    ("[flow.s] * 10000 + [flow.s] * 10000 + [flow.s] * 10000", {"s": "abcd"}, "`[flow.s] * 10000` raised"),
    (
        "[flow.big] == [flow.big]",
        {"big": list(range(10**6))},
        "`[flow.big]` raised ValueError: it would build",
    ),
    ("[flow.a, flow.a, flow.a, flow.a, flow.a, flow.a] == 1", {"a": "x" * 30000}, "it would build 120,006"),
    ("flow.a == flow.b", {"a": deep(10_000), "b": deep(10_000)}, "raised RecursionError"),
    ("[flow.a] == 1", {"a": deep(200_000)}, "it would build"),
    (
        " * ".join(["flow.n"] * 16),
        {"n": 10**4000},
        "items and characters, past",
    ),  # an integer counts its bytes
]


@pytest.mark.timeout(10)
@pytest.mark.parametrize(("text", "state", "message"), BOMBS)
def test_an_expression_that_would_build_too_much_is_a_routing_error_naming_it(
    text: str, state: dict[str, Any], message: str
) -> None:
    with pytest.raises(RoutingError) as caught:
        compile_expression(text, flow_keys=None, global_keys=frozenset()).evaluate(state, {})
    assert str(caught.value).startswith(f"expression {text!r} failed: ")
    assert message in str(caught.value)


@pytest.mark.timeout(10)
def test_what_one_evaluation_builds_is_counted_in_all() -> None:
    text = "flow.s + flow.s == flow.t"
    assert value(text, {"s": "a" * 40_000, "t": ""}) is False  # 80,000 built
    with pytest.raises(RoutingError, match="it would build 60,000 items and characters, past the 100,000"):
        value("(flow.s + flow.s) + (flow.s + flow.s)", {"s": "a" * 15_000})  # 30,000 + 30,000 + 60,000
    assert len(value("[flow.a]", {"a": deep(50_000)})[0]) == 1  # measured without recursion


@pytest.mark.timeout(10)
def test_exponentiation_and_deep_nesting_are_refused_when_loaded() -> None:
    power = refusal("'a' * 10**6 == flow.text")
    assert (power.line, power.column, power.problem) == (
        7,
        23,
        "the operator ** is not allowed (arithmetic is + - * / // %)",
    )
    assert refusal("[" * 900 + "]" * 900).problem.startswith("invalid expression: too many nested")


def test_a_lookup_never_reads_attributes() -> None:
    class Spy:
        def __getattr__(self, name: str) -> Any:
            raise AssertionError(f"read attribute {name}")

        def __getitem__(self, key: Any) -> Any:
            raise AssertionError(f"read item {key}")

    with pytest.raises(RoutingError, match="is not a mapping"):
        compiled("flow.spy.x").evaluate({"spy": Spy()}, GLOBALS)
    with pytest.raises(RoutingError, match="is not a mapping"):
        compiled('flow.spy["x"]').evaluate({"spy": Spy()}, GLOBALS)


# -- the same as Python, on random expressions ----------------------------------------------------

# Each strategy draws (our text, Python's text): they differ only in `global.` (a keyword for
# Python) against `G.` (a name Python's eval can look up).
Pair = tuple[str, str]


def _pair(ours: str, python: str | None = None) -> Pair:
    return ours, ours if python is None else python


def _join(parts: list[Pair], separator: str = "", wrap: bool = False) -> Pair:
    ours, python = separator.join(p[0] for p in parts), separator.join(p[1] for p in parts)
    return (f"({ours})", f"({python})") if wrap else (ours, python)


def _binary(parts: list[Pair], op: str, wrap: bool) -> Pair:
    return _join(parts, f" {op} ", wrap)


def _chain(parts: list[Pair], ops: list[str], wrap: bool) -> Pair:
    links = [
        _pair(f"{op} {ours}", f"{op} {python}") for op, (ours, python) in zip(ops, parts[1:], strict=False)
    ]
    return _join([parts[0], *links], " ", wrap)


def _prefix(child: Pair, op: str) -> Pair:
    return _join([_pair(op), child], wrap=True)


def _conditional(parts: list[Pair]) -> Pair:
    return _join([parts[0], _pair(" if "), parts[1], _pair(" else "), parts[2]], wrap=True)


def _suffix(child: Pair, op: str) -> Pair:
    return _join([child, _pair(op)], wrap=True)


def _list(parts: list[Pair]) -> Pair:
    return _join([_pair("["), _join(parts, ", "), _pair("]")])


def _tuple(parts: list[Pair]) -> Pair:
    return _join([_pair("("), _join(parts, ", "), _pair(",)")])


_texts = st.text(alphabet="ab ", max_size=3)
_paths = ["flow.i", "flow.j", "flow.s", "flow.b", "flow.n", "flow.items[0]", "flow.items[-1]"]
_leaves = st.one_of(
    st.integers(-5, 5).map(str).map(_pair),
    st.sampled_from(["True", "False", "None"]).map(_pair),
    _texts.map(repr).map(_pair),
    st.sampled_from(_paths).map(_pair),
    st.sampled_from(["n", "t"]).map(lambda key: _pair(f"global.{key}", f"G.{key}")),
)


def _extend(children: st.SearchStrategy[Pair]) -> st.SearchStrategy[Pair]:
    some = st.lists(children, min_size=2, max_size=4)
    return st.one_of(
        st.builds(
            _binary, st.lists(children, min_size=2, max_size=2), st.sampled_from(BINARY), st.booleans()
        ),
        st.builds(
            _chain, some, st.lists(st.sampled_from(COMPARISONS), min_size=3, max_size=3), st.booleans()
        ),
        st.builds(_binary, some, st.sampled_from(["and", "or"]), st.booleans()),
        st.builds(_prefix, children, st.sampled_from(["not ", "-", "+"])),
        st.builds(_conditional, st.lists(children, min_size=3, max_size=3)),
        st.builds(_suffix, children, st.sampled_from([" is None", " is not None"])),
        st.builds(_list, st.lists(children, max_size=3)),
        st.builds(_tuple, st.lists(children, min_size=1, max_size=2)),
    )


BINARY = ["+", "-", "*", "/", "//", "%"]
COMPARISONS = ["==", "!=", "<", "<=", ">", ">=", "in", "not in"]
_expressions = st.recursive(_leaves, _extend, max_leaves=10)
_states = st.fixed_dictionaries(
    {
        "i": st.integers(-5, 5),
        "j": st.integers(-5, 5),
        "s": _texts,
        "b": st.booleans(),
        "n": st.none(),
        "items": st.lists(st.integers(-3, 3), min_size=1, max_size=3),
    }
)


def _python(text: str, state: dict[str, Any], constants: dict[str, Any]) -> tuple[str, Any]:
    """Python's own result for the text: ("value", v), ("error", type) or ("syntax", None)."""
    names = {"flow": SimpleNamespace(**state), "G": SimpleNamespace(**constants)}
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "is" with a literal
            return "value", eval(text, {"__builtins__": {}}, names)  # noqa: S307 - the oracle, on text the test wrote
    except SyntaxError:
        return "syntax", None
    except Exception as error:
        return "error", type(error)


@pytest.mark.slow
@settings(max_examples=400, deadline=None)
@given(_expressions, _states, st.integers(-5, 5), _texts)
def test_expressions_agree_with_python(pair: Pair, state: dict[str, Any], n: int, t: str) -> None:
    ours_text, python_text = pair
    constants = {"n": n, "t": t}
    try:
        expression = compile_expression(
            ours_text, flow_keys=frozenset(state), global_keys=frozenset(constants)
        )
    except ConfigFileError:
        assert _python(python_text, state, constants)[0] == "syntax", ours_text
        return
    try:
        ours: tuple[str, Any] = ("value", expression.evaluate(state, constants))
    except RoutingError as error:
        if "items and characters, past" in str(error) or "formats text" in str(error):
            return  # the documented differences: no huge values built, no text formatting with %
        ours = ("error", RoutingError)
    kind, expected = _python(python_text, state, constants)
    assert kind == ours[0], (ours_text, ours, expected)
    if kind == "value":
        assert repr(ours[1]) == repr(expected), ours_text
