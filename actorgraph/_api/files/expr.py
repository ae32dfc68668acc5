"""Expressions in graph files: Python's syntax restricted to reading, computing and comparing values.

Checked when loaded, never run by Python; bounded when evaluated (`MAX_SIZE`): docs/reference/expressions.md.
"""

from __future__ import annotations

import ast
import io
import operator
import tokenize
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from itertools import islice
from typing import Any

from actorgraph._model.errors import ConfigFileError, RoutingError

__all__ = ["MAX_DEPTH", "MAX_NODES", "MAX_SIZE", "MAX_TEXT", "Expression", "compile_expression"]

MAX_TEXT = 2_000  # characters of an expression
MAX_NODES = 500  # values and operations in an expression
MAX_DEPTH = 50  # levels of nesting
MAX_SIZE = 100_000  # items and characters in all the values one evaluation builds, nested ones counted

_SCOPES = ("flow", "global")
_GLOBAL = "_glbl_"  # stands for the keyword `global` while Python parses: same length, same columns
_FAILURES = (TypeError, ValueError, ArithmeticError, KeyError, IndexError, RecursionError)
_Scopes = tuple[Mapping[str, Any], Mapping[str, Any], list[int]]  # flow, global, how much was built
_Run = Callable[[_Scopes], Any]  # a part of an expression, ready to evaluate
_Keys = frozenset[str] | None
_Build = Callable[[Any, int], _Run]
_SEQUENCES = (str, bytes, list, tuple)
_LIMIT = f"the {MAX_SIZE:,} that one evaluation may build in all (lists inside lists counted in full)"


def _guard(source: str, function: Callable[..., Any], *args: Any) -> Any:
    try:
        return function(*args)
    except _FAILURES as error:
        raise RoutingError(f"`{source}` raised {type(error).__name__}: {error}") from error


def _modulo(left: Any, right: Any) -> Any:
    if isinstance(left, (str, bytes)):
        raise TypeError(f"% with a {type(left).__name__} formats text, which expressions do not do")
    return left % right


def _size(value: Any, limit: int) -> int:
    """Items and characters in `value`, those inside it counted, stopping once past `limit`."""
    total, stack = 0, [value]  # a loop, not recursion: a state may nest deeper than Python recurses
    while stack and total <= limit:
        item = stack.pop()
        if isinstance(item, (str, bytes, list, tuple, set, frozenset, Mapping)):
            total += len(item)
            if total <= limit and not isinstance(item, (str, bytes)):  # never more than `limit` pushed
                stack.extend([*item.keys(), *item.values()] if isinstance(item, Mapping) else item)
    return total


def _growth(function: Callable[..., Any], limit: int, *values: Any) -> int:
    """Items and characters `function` would build from `values` (0 for numbers), refused past `limit`."""
    made, joined = 0, function is operator.add and all(isinstance(value, _SEQUENCES) for value in values)
    if function is operator.mul:
        seq, count = values if isinstance(values[1], int) else values[::-1]
        if isinstance(seq, _SEQUENCES) and isinstance(count, int):
            made = count * _size(seq, limit // count) if count > 0 else 0
        elif all(isinstance(value, int) for value in values):  # a product of integers counts its bytes
            made = sum(value.bit_length() for value in values) // 8
    elif joined or function in _DISPLAYS:
        made = 0 if joined else len(values)
        for value in values:
            made += _size(value, limit - made)
    if made > limit:  # refused before it is built
        raise ValueError(f"it would build {made:,} items and characters, past {_LIMIT}")
    return made


# -- evaluation: each part of an expression is a `partial` of one of these -------------------------


def _constant(value: Any, scopes: _Scopes) -> Any:  # noqa: ARG001 - every part takes the scopes
    return value


def _lookup(where: str, target: _Run, key: str | int, scopes: _Scopes) -> Any:
    owner = target(scopes)
    if isinstance(owner, Mapping) or (isinstance(key, int) and isinstance(owner, Sequence)):
        try:
            return owner[key]  # type: ignore[index]
        except (KeyError, IndexError):
            if isinstance(owner, Sequence):
                raise RoutingError(f"`{where}` has no item {key} (its length is {len(owner)})") from None
            keys = ", ".join(repr(k) for k in islice(owner, 10)) + (", ..." if len(owner) > 10 else "")  # noqa: PLR2004
            raise RoutingError(f"`{where}` has no key {key!r} (its keys: {keys or 'none'})") from None
    kind = "mapping" if isinstance(key, str) else "mapping or a list"
    raise RoutingError(f"`{where}` is not a {kind} (its type is {type(owner).__name__})")


def _operation(source: str, function: Callable[..., Any], operands: tuple[_Run, ...], scopes: _Scopes) -> Any:
    values, built = tuple(operand(scopes) for operand in operands), scopes[2]
    built[0] += _guard(source, _growth, function, MAX_SIZE - built[0], *values)
    return _guard(source, function, *values)


def _boolean(source: str, is_and: bool, values: tuple[_Run, ...], scopes: _Scopes) -> Any:
    value = None
    for part in values:
        value = part(scopes)
        if _guard(source, bool, value) != is_and:
            return value
    return value


def _compare(
    source: str, left: _Run, links: tuple[tuple[Callable[[Any, Any], Any], _Run], ...], scopes: _Scopes
) -> Any:
    value, result = left(scopes), True
    for number, (function, part) in enumerate(links, 1):
        right = part(scopes)
        result = _guard(source, function, value, right)
        if number < len(links) and not _guard(source, bool, result):
            return result
        value = right
    return result


def _conditional(source: str, test: _Run, body: _Run, orelse: _Run, scopes: _Scopes) -> Any:
    return body(scopes) if _guard(source, bool, test(scopes)) else orelse(scopes)


@dataclass(frozen=True)
class Expression:
    """A checked expression of a graph file, ready to evaluate; `compile_expression` makes one.

    Attributes:
        text: the expression as written.
    """

    text: str
    _root: _Run = field(repr=False, compare=False)

    def evaluate(self, flow: Mapping[str, Any], globals_: Mapping[str, Any]) -> Any:
        """The expression's value for a state (`flow`) and the file's constants (`globals_`).

        Raises:
            RoutingError: a part failed: a missing key, a wrong type, a division by zero, too much built.
        """
        try:
            return self._root((flow, globals_, [0]))
        except RoutingError as failure:
            raise RoutingError(f"expression {self.text!r} failed: {failure}") from failure.__cause__
        except _FAILURES as error:  # raised by a value of the state, e.g. a mapping that refuses a lookup
            raise RoutingError(f"expression {self.text!r} failed: {type(error).__name__}: {error}") from error

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickle as its text: unpickling compiles it again (without the key checks, done already)."""
        return (_compile, (self.text, None, None, ("<string>", 1, 1)))


def compile_expression(  # noqa: PLR0913 - the keys to check and the place to report
    text: str,
    *,
    flow_keys: frozenset[str] | None,
    global_keys: frozenset[str],
    file: str = "<string>",
    line: int = 1,
    column: int = 1,
) -> Expression:
    """Parse and check an expression of a graph file.

    Args:
        text: the expression.
        flow_keys: the state's keys, or None when they are not known (any `flow.KEY` is accepted).
        global_keys: the file's constants.
        file: the file's path, for messages.
        line: the 1-based line of the file where the expression starts.
        column: the 1-based column of the file where the expression starts.

    Raises:
        ConfigFileError: the expression is not valid or not allowed; `line` and `column`
            are where the offending part is in the file.
    """
    return _compile(text, flow_keys, global_keys, (file, line, column))


def _compile(text: str, flow_keys: _Keys, global_keys: _Keys, where: tuple[str, int, int]) -> Expression:
    file, line, column = where
    stripped = text.lstrip()
    skipped = text[: len(text) - len(stripped)].split("\n")  # where the expression starts in the file:
    line, column = line + len(skipped) - 1, (column if len(skipped) == 1 else 1) + len(skipped[-1])
    compiler = _Compiler(stripped, flow_keys, global_keys, (file, line, column))
    if not stripped:
        raise compiler.error("empty expression: write a condition, e.g. flow.ready")
    if len(text) > MAX_TEXT:
        raise compiler.error(f"expression too long: {len(text):,} characters, the limit is {MAX_TEXT:,}")
    tree = compiler.parse()
    if sum(isinstance(node, ast.expr) for node in ast.walk(tree)) > MAX_NODES:
        raise compiler.error(f"expression too big: more than {MAX_NODES} values and operations")
    root = compiler.build(tree.body, 0)  # records the keys it reads
    return Expression(text, root)


# -- checking and building ----------------------------------------------------------------------

_OPERATORS: dict[type[ast.AST], Callable[..., Any]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv, ast.Mod: _modulo,
    ast.Not: operator.not_, ast.USub: operator.neg, ast.UAdd: operator.pos,
    ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le,
    ast.Gt: operator.gt, ast.GtE: operator.ge, ast.Is: operator.is_, ast.IsNot: operator.is_not,
    ast.In: lambda a, b: a in b, ast.NotIn: lambda a, b: a not in b,
    ast.List: lambda *items: list(items), ast.Tuple: lambda *items: items,
}  # fmt: skip
_DISPLAYS = (_OPERATORS[ast.List], _OPERATORS[ast.Tuple])
_SYMBOLS: dict[type[ast.AST], str] = {
    ast.Pow: "**", ast.MatMult: "@", ast.LShift: "<<", ast.RShift: ">>", ast.BitOr: "|", ast.BitXor: "^",
    ast.BitAnd: "&", ast.Invert: "~",
}  # fmt: skip
_REFUSED: dict[type[ast.AST], str] = {
    ast.Call: "calls are not allowed: an expression reads values, compares and computes",
    ast.Lambda: "lambda is not allowed", ast.JoinedStr: "f-strings are not allowed",
    ast.NamedExpr: "the walrus operator := is not allowed",
    ast.Starred: "starred expressions (*x) are not allowed", ast.Dict: "dict displays are not allowed",
    ast.Set: "set displays are not allowed: write a list, e.g. flow.kind in ['a', 'b']",
    ast.Slice: "slices are not allowed: index with one constant, e.g. flow.items[0]",
}  # fmt: skip
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
_REFUSED |= dict.fromkeys(_COMPREHENSIONS, "comprehensions are not allowed")
_NOT_CONSTANT = 'subscript with a non-constant index: write e.g. flow.items[0] or flow.m["key"]'
_IDENTITY = "`is` compares identity: only `is None`, `is True`, `is False` (and `is not`) are allowed; use =="


class _Compiler:
    """Checks an expression's syntax tree and builds its evaluable tree."""

    def __init__(self, text: str, flow_keys: _Keys, global_keys: _Keys, where: tuple[str, int, int]) -> None:
        self.text = text
        self.lines = text.split("\n")
        self.known = (flow_keys, global_keys)
        self.file, self.line, self.column = where

    def error(self, problem: str, lineno: int = 1, offset: int = 0) -> ConfigFileError:
        """An error at a 0-based character `offset` of the expression's 1-based line `lineno`."""
        column = (self.column if lineno == 1 else 1) + offset
        return ConfigFileError(problem, file=self.file, line=self.line + lineno - 1, column=column)

    def refuse(self, node: ast.expr, problem: str, lineno: int = 0, byte_offset: int = 0) -> ConfigFileError:
        """An error where `node` starts, or at a byte offset (as `ast` counts them) of a line."""
        lineno, byte_offset = (lineno, byte_offset) if lineno else (node.lineno, node.col_offset)
        before = self.lines[lineno - 1].encode()[:byte_offset].decode(errors="ignore")
        return self.error(problem, lineno, len(before))

    def segment(self, node: ast.AST) -> str:
        """The text of `node`, as written."""
        return ast.get_source_segment(self.text, node) or ""

    def parse(self) -> ast.Expression:
        """The syntax tree, `global` read as a name."""
        try:
            return ast.parse(self.rewrite(), mode="eval")
        except SyntaxError as error:
            problem = (error.msg or "invalid syntax").replace(_GLOBAL, "global")
            if "\n" in self.text.rstrip() and problem == "invalid syntax" and self.text[0] != "(":
                problem += " (an expression over several lines must be in parentheses)"
            offset = max((error.offset or 1) - 1, 0)
            raise self.error(f"invalid expression: {problem}", error.lineno or 1, offset) from None
        except (ValueError, RecursionError, MemoryError) as error:
            raise self.error(f"invalid expression: {error}") from None

    def rewrite(self) -> str:
        """The text with the keyword `global` replaced by a name of the same length."""
        lines = list(self.lines)
        try:
            for token in tokenize.generate_tokens(io.StringIO(self.text).readline):
                row, col = token.start
                if token.type == tokenize.NAME and token.string == _GLOBAL:
                    raise self.error(f"the name {_GLOBAL!r} is reserved", row, col)
                if token.type == tokenize.NAME and token.string == "global":
                    lines[row - 1] = lines[row - 1][:col] + _GLOBAL + lines[row - 1][col + len(_GLOBAL) :]
        except (tokenize.TokenError, SyntaxError):
            pass  # ast.parse says what is wrong, and where
        return "\n".join(lines)

    def build(self, node: ast.expr, depth: int) -> _Run:
        """The evaluable tree of `node`, or a `ConfigFileError` if it is not allowed."""
        if depth >= MAX_DEPTH:
            raise self.refuse(node, f"expression nested too deeply: at most {MAX_DEPTH} levels")
        builder: _Build | None = getattr(self, f"build_{type(node).__name__.lower()}", None)
        if builder is None:
            raise self.refuse(node, _REFUSED.get(type(node), f"{type(node).__name__} is not allowed"))
        return builder(node, depth + 1)

    def build_constant(self, node: ast.Constant, _depth: int) -> _Run:
        """A literal: text, a number, a boolean or None."""
        if node.value is None or type(node.value) in {str, int, float, bool}:
            return partial(_constant, node.value)
        kinds = {bytes: "bytes literals are", complex: "complex numbers are"}
        raise self.refuse(node, f"{kinds.get(type(node.value), repr(node.value) + ' is')} not allowed")

    def build_name(self, node: ast.Name, _depth: int) -> _Run:
        """Names are refused: only paths from a scope name values."""
        shown = "global" if node.id == _GLOBAL else node.id
        if shown in _SCOPES:
            raise self.refuse(node, f'{shown} alone is not a value: write {shown}.KEY or {shown}["KEY"]')
        hint = f'only flow.KEY and global.KEY name values (text needs quotes: "{shown}")'
        raise self.refuse(node, f"names other than flow and global are not allowed: {shown!r}; {hint}")

    def build_attribute(self, node: ast.Attribute | ast.Subscript, depth: int) -> _Run:
        """An item lookup: `X.KEY` or `X[constant]`, where X is `flow`, `global` or a path from them."""
        if isinstance(node, ast.Attribute):
            key: str | int = "global" if node.attr == _GLOBAL else node.attr
            what = f"attribute {key!r} of a value"
        else:
            key, what = self.index(node.slice), "subscript of a value"
        if isinstance(key, str) and len(key) > 4 and key.startswith("__") and key.endswith("__"):  # noqa: PLR2004
            raise self.refuse(node, f"the key {key!r} is not allowed: keys like __class__ are refused")
        base = node.value
        if isinstance(base, ast.Name) and base.id in {"flow", _GLOBAL}:
            scope = 0 if base.id == "flow" else 1
            self.check_key(node, scope, key)
            return partial(_lookup, _SCOPES[scope], operator.itemgetter(scope), key)
        if not isinstance(base, (ast.Name, ast.Attribute, ast.Subscript)):
            raise self.refuse(node, f"{what}: only flow.KEY and global.KEY name values")
        return partial(_lookup, self.segment(base), self.build(base, depth), key)

    def index(self, node: ast.expr) -> str | int:
        """A subscript's constant: text or an integer (`-1` too)."""
        negative = isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub)
        found = node.operand if isinstance(node, ast.UnaryOp) and negative else node
        value = found.value if isinstance(found, ast.Constant) else None
        if type(value) is int:
            return -value if negative else value
        if type(value) is str and not negative:
            return value
        raise self.refuse(node, _REFUSED[ast.Slice] if isinstance(node, ast.Slice) else _NOT_CONSTANT)

    def check_key(self, node: ast.expr, scope: int, key: str | int) -> None:
        """Record a key of `flow` or `global`, refusing it if the scope is known not to have it."""
        name, known = _SCOPES[scope], self.known[scope]
        if not isinstance(key, str):
            raise self.refuse(node, f'the keys of {name} are text: write {name}["KEY"]')
        if known is not None and key not in known:
            raise self.refuse(
                node, f"unknown key {key!r} in {name} (known: {', '.join(sorted(known)) or 'none'})"
            )

    def build_binop(self, node: ast.BinOp | ast.UnaryOp, depth: int) -> _Run:
        """`a + b` and the other arithmetic operators, `not x`, `-x`, `+x`."""
        operands = (node.operand,) if isinstance(node, ast.UnaryOp) else (node.left, node.right)
        function = _OPERATORS.get(type(node.op))
        if function is None:
            symbol = _SYMBOLS[type(node.op)]
            problem = f"the operator {symbol} is not allowed (arithmetic is + - * / // %)"
            lineno, start = operands[0].end_lineno or 1, operands[0].end_col_offset or 0
            while isinstance(node, ast.BinOp) and lineno <= node.right.lineno:  # point at the operator
                found = self.lines[lineno - 1].encode().find(symbol.encode(), start)
                if found >= 0:
                    raise self.refuse(node, problem, lineno, found)
                lineno, start = lineno + 1, 0
            raise self.refuse(node, problem)
        parts = tuple(self.build(operand, depth) for operand in operands)
        return partial(_operation, self.segment(node), function, parts)

    def build_boolop(self, node: ast.BoolOp, depth: int) -> _Run:
        """`a and b`, `a or b`."""
        values = tuple(self.build(value, depth) for value in node.values)
        return partial(_boolean, self.segment(node), isinstance(node.op, ast.And), values)

    def build_compare(self, node: ast.Compare, depth: int) -> _Run:
        """A comparison, perhaps chained; `is` only with None, True or False on its right."""
        for op, right in zip(node.ops, node.comparators, strict=True):
            singleton = isinstance(right, ast.Constant) and any(right.value is v for v in (None, True, False))
            if isinstance(op, (ast.Is, ast.IsNot)) and not singleton:
                raise self.refuse(right, _IDENTITY)
        pairs = zip(node.ops, node.comparators, strict=True)
        links = tuple((_OPERATORS[type(op)], self.build(right, depth)) for op, right in pairs)
        return partial(_compare, self.segment(node), self.build(node.left, depth), links)

    def build_ifexp(self, node: ast.IfExp, depth: int) -> _Run:
        """`a if test else b`."""
        test, body, orelse = (self.build(part, depth) for part in (node.test, node.body, node.orelse))
        return partial(_conditional, self.segment(node), test, body, orelse)

    def build_list(self, node: ast.List | ast.Tuple, depth: int) -> _Run:
        """`[a, b]`, `(a, b)`."""
        items = tuple(self.build(item, depth) for item in node.elts)
        return partial(_operation, self.segment(node), _OPERATORS[type(node)], items)

    build_subscript = build_attribute
    build_unaryop = build_binop
    build_tuple = build_list
