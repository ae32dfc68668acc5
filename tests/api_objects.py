"""What the API reference shows of an object: signatures, constants, a class's members.

Standard library only: `inspect` for signatures (annotations stay the source's text, since
the modules use `from __future__ import annotations`), `ast` for the values and docstrings
of constants, which only the source holds. tests/api_reference.py writes the pages.
"""

from __future__ import annotations

import ast
import functools
import importlib
import importlib.util
import inspect
import re
import sys
import textwrap
import typing
from collections.abc import Iterator
from pathlib import Path
from types import FunctionType
from typing import Any, ForwardRef, NamedTuple

WIDTH = 88  # longer signatures get one parameter a line
_QUALIFIED = re.compile(r"\b(?:typing|collections\.abc|builtins|actorgraph(?:\.\w+)*)\.")


class _Text:
    """Source text that `inspect` prints as it is (a string annotation would be quoted)."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return self.text


def annotation(value: Any) -> str:
    """An annotation as a reader writes it: `str | None`, `list[str]`, `Checkpointer`."""
    if isinstance(value, str):
        return value
    if isinstance(value, ForwardRef):
        return value.__forward_arg__
    if isinstance(value, type) and not typing.get_args(value):
        return value.__qualname__
    return _QUALIFIED.sub("", repr(value)).replace("~", "")


def python_text(value: Any) -> str:
    """A default's text where no source holds it (dataclass fields): `...`, not `Ellipsis`."""
    if value is Ellipsis:
        return "..."
    text = repr(value)
    if isinstance(value, str) and text.startswith("'") and '"' not in value:
        return f'"{text[1:-1]}"'  # the house's quotes
    if " at 0x" in text:
        msg = f"the default {text} differs from run to run; give its class a __repr__"
        raise ValueError(msg)
    return text


@functools.cache
def _lines(source: str) -> list[bytes]:
    return [line.encode() for line in source.split("\n")]


def source_text(node: ast.expr | ast.stmt, source: str) -> str:
    """An expression as the source writes it (`logging.INFO`, `100 * 1024`, `"sync"`)."""
    if node.lineno != node.end_lineno or node.end_col_offset is None:
        return ast.unparse(node)
    line = _lines(source)[node.lineno - 1]
    return line[node.col_offset : node.end_col_offset].decode()  # the offsets count bytes


def written_defaults(function: Any) -> dict[str, str]:
    """A function's defaults as its source writes them, by parameter name."""
    try:
        source = textwrap.dedent(inspect.getsource(function))
        node = ast.parse(source).body[0]
    except (OSError, TypeError, SyntaxError):  # made at run time (a dataclass's __init__): no source
        return {}
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return {}
    args = node.args
    positional = [*args.posonlyargs, *args.args]
    found = {a.arg: d for a, d in zip(positional[::-1], args.defaults[::-1], strict=False)}
    found |= {a.arg: d for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True) if d}
    return {name: source_text(default, source) for name, default in found.items()}


def _parameters(signature: inspect.Signature, written: dict[str, str]) -> list[str]:
    """Each parameter as written, with the bare `*` and `/` markers."""
    texts: list[str] = []
    params = list(signature.parameters.values())
    star = False
    for i, param in enumerate(params):
        if param.kind is param.KEYWORD_ONLY and not star:
            texts.append("*")
        star = star or param.kind in {param.VAR_POSITIONAL, param.KEYWORD_ONLY}
        changes: dict[str, Any] = {}
        if param.annotation is not param.empty:
            changes["annotation"] = _Text(annotation(param.annotation))
        if param.default is not param.empty:
            changes["default"] = _Text(written.get(param.name) or python_text(param.default))
        texts.append(str(param.replace(**changes)))
        last = i + 1 == len(params) or params[i + 1].kind is not param.POSITIONAL_ONLY
        if param.kind is param.POSITIONAL_ONLY and last:
            texts.append("/")
    return texts


def signature_text(head: str, function: Any) -> str:
    """`head(parameters) -> returns`, one parameter a line when it would be long."""
    signature = inspect.signature(function)
    params = _parameters(signature, written_defaults(function))
    returns = signature.return_annotation
    tail = ")" if returns is signature.empty else f") -> {annotation(returns)}"
    one_line = f"{head}({', '.join(params)}{tail}"
    if len(one_line) <= WIDTH:
        return one_line
    return "\n".join([f"{head}(", *(f"    {param}," for param in params), tail])


def types_of(function: Any) -> dict[str, str]:
    """The annotations of a function's parameters, by name, and of its result as `return`."""
    try:
        signature = inspect.signature(function)
    except (TypeError, ValueError):
        return {}
    found = {
        name: annotation(param.annotation)
        for name, param in signature.parameters.items()
        if param.annotation is not param.empty
    }
    if signature.return_annotation is not signature.empty:
        found["return"] = annotation(signature.return_annotation)
    return found


# -- module-level values: their text and docstrings live only in the source -----------------------


class Assignment(NamedTuple):
    """A module-level assignment, the docstring written under it, and its module's source."""

    node: ast.Assign | ast.AnnAssign
    doc: str
    source: str


@functools.cache
def _source(module_name: str) -> tuple[list[ast.stmt], str]:
    spec = importlib.util.find_spec(module_name)
    if spec is None or spec.origin is None:
        msg = f"no source for {module_name}"
        raise LookupError(msg)
    source = Path(spec.origin).read_text()
    return ast.parse(source).body, source


def _assigns(node: ast.stmt, name: str) -> bool:
    if isinstance(node, ast.AnnAssign):
        return isinstance(node.target, ast.Name) and node.target.id == name
    return isinstance(node, ast.Assign) and any(
        isinstance(t, ast.Name) and t.id == name for t in node.targets
    )


def _docstring(node: ast.stmt | None) -> str:
    if (
        isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
    ):
        return node.value.value
    return ""


def assignment(module_name: str, name: str) -> Assignment:
    """Where `name` gets its value (following imports), with the docstring written under it."""
    body, source = _source(module_name)
    package = (
        module_name if hasattr(sys.modules.get(module_name), "__path__") else module_name.rpartition(".")[0]
    )
    for i, node in enumerate(body):
        if isinstance(node, ast.ImportFrom):
            alias = next((a for a in node.names if (a.asname or a.name) == name), None)
            if alias is not None:
                origin = importlib.util.resolve_name("." * node.level + (node.module or ""), package)
                return assignment(origin, alias.name)
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and _assigns(node, name):
            return Assignment(node, _docstring(body[i + 1] if i + 1 < len(body) else None), source)
    msg = f"{module_name} does not assign {name}"
    raise LookupError(msg)


def _literal(node: ast.expr | None) -> bool:
    if node is None:
        return False
    try:
        ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError):
        return False
    return True


def value_text(name: str, found: Assignment) -> str:
    """`NAME: Type = value` as written; the value only when it is a literal or a type alias's."""
    node = found.node
    kind = source_text(node.annotation, found.source) if isinstance(node, ast.AnnAssign) else ""
    if _literal(node.value) or kind == "TypeAlias":
        return source_text(node, found.source)
    return f"{name}: {kind}" if kind else name


# -- classes ----------------------------------------------------------------------------------------


def _ours(klass: type) -> bool:
    return klass.__module__.startswith("actorgraph")


def _listed(cls: type, documented: frozenset[type]) -> Iterator[type]:
    """The classes whose members `cls`'s entry shows: itself and its private bases of ours."""
    for klass in cls.__mro__:
        if klass is cls or (_ours(klass) and klass not in documented):
            yield klass


def members(cls: type, documented: frozenset[type]) -> Iterator[tuple[str, Any]]:
    """The public methods and properties of `cls`, its own first, in source order."""
    seen: set[str] = set()
    shown = set(_listed(cls, documented))
    for klass in cls.__mro__:
        for name, value in vars(klass).items():
            if name.startswith("_") or name in seen:
                continue
            seen.add(name)
            if klass in shown and isinstance(value, (property, staticmethod, classmethod, FunctionType)):
                yield name, value


def fields(cls: type, documented: frozenset[type]) -> dict[str, str]:
    """The annotated public attributes of `cls` and its private bases, with their types."""
    found: dict[str, str] = {}
    for klass in reversed(list(_listed(cls, documented))):
        for name, kind in vars(klass).get("__annotations__", {}).items():
            if not name.startswith("_") and not annotation(kind).startswith("ClassVar"):
                found[name] = annotation(kind)
    return found


def constructor(cls: type) -> tuple[str, Any] | None:
    """`("__init__", function)` (or `__new__`) when `cls` or a base of ours defines how to make one."""
    if getattr(cls, "_is_protocol", False) or typing.is_typeddict(cls):
        return None
    for klass in cls.__mro__:
        for name in ("__init__", "__new__"):
            if name in vars(klass):
                return (name, vars(klass)[name]) if _ours(klass) else None
    return None


def bases_text(cls: type) -> str:
    """The bases as written in the class statement (`Generic[S]`, `TypedDict`)."""
    if typing.is_typeddict(cls):
        return "TypedDict"
    bases = vars(cls).get("__orig_bases__", cls.__bases__)
    return ", ".join(annotation(base) for base in bases if base is not object)
