"""What the builder reads from a user's function: its name, what it takes, and where its `Command` goes.

`add_vertex(fn)` names the vertex after the function (as LangGraph's
`add_node(fn)` does); `takes_ctx` decides once whether a vertex or router is
`fn(state)` or `fn(state, ctx)`; `destinations_of` reads the targets a return
annotation `Command[Literal["a", "b"]]` declares, so `destinations=` need not
repeat them.
"""

from __future__ import annotations

import inspect
import types
import typing
from collections.abc import Callable
from typing import Any, Literal

from actorgraph._model.commands import Command
from actorgraph._model.errors import GraphValidationError

__all__ = ["check_handler", "destinations_of", "name_of", "takes_ctx"]

_POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)


def _parameters(fn: Callable[..., Any]) -> list[inspect.Parameter] | None:
    try:
        return list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):  # builtins without a signature: nothing to check
        return None


def _refuse_extra_required(params: list[inspect.Parameter], most: int, what: str, form: str) -> None:
    """Refuse a function that needs arguments the engine never passes."""
    required = [p.name for p in params if p.kind in _POSITIONAL and p.default is inspect.Parameter.empty]
    keyword = [p.name for p in params if p.kind is inspect.Parameter.KEYWORD_ONLY and p.default is p.empty]
    if len(required) > most or keyword:
        names = ", ".join(required + [f"*, {k}" for k in keyword])
        msg = f"{what} requires the arguments ({names}), but it is called as {form}; give the others defaults"
        raise GraphValidationError(msg)


def check_handler(fn: Callable[..., Any], what: str) -> None:
    """Refuse an `on_error` handler that cannot be called as `handler(state, error)`.

    Raises:
        GraphValidationError: naming the handler's vertex and its parameters.
    """
    params = _parameters(fn)
    if params is None:
        return
    positional = [p for p in params if p.kind in _POSITIONAL]
    varargs = any(p.kind is inspect.Parameter.VAR_POSITIONAL for p in params)
    if len(positional) < 2 and not varargs:  # noqa: PLR2004 - (state, error)
        msg = f"{what} takes {len(positional)} positional argument(s); it is called as handler(state, error)"
        raise GraphValidationError(msg)
    _refuse_extra_required(params, 2, what, "handler(state, error)")


def takes_ctx(fn: Callable[..., Any], what: str) -> bool:
    """Whether `fn` is `fn(state, ctx)` rather than `fn(state)` (decided once).

    Raises:
        GraphValidationError: `fn` takes no positional argument for the state, or
            requires more arguments than `(state, ctx)`.
    """
    params = _parameters(fn)
    if params is None:
        return False
    positional = [p for p in params if p.kind in _POSITIONAL]
    varargs = any(p.kind is inspect.Parameter.VAR_POSITIONAL for p in params)
    if not positional and not varargs:
        msg = f"{what} takes no positional argument; it must accept the state: fn(state) or fn(state, ctx)"
        raise GraphValidationError(msg)
    _refuse_extra_required(params, 2, what, "fn(state) or fn(state, ctx)")
    if len(positional) < 2:  # noqa: PLR2004 - (state, ctx)
        return False
    second = positional[1]
    if second.default is inspect.Parameter.empty:
        return True
    # fn(state, ctx=None) asks for the context; fn(state, name=name) is a closure default
    annotation = second.annotation
    return second.name in ("ctx", "context") or "Context" in str(annotation)


def name_of(fn: Any, call: str) -> str:
    """The vertex name `add_vertex(fn)` gives `fn`: a graph's, a tool node's or a task's name, else its own.

    A function is named by its `__name__`, a callable object by its class, as
    LangGraph's `add_node(fn)` names a node.

    Raises:
        GraphValidationError: a lambda (its name says nothing), or an object with no name at all.
    """
    given = getattr(fn, "name", None)  # a Graph, a CompiledGraph, a ToolNode, an @entrypoint, a @task
    if isinstance(given, str) and given and not inspect.isroutine(fn):
        return given
    name = getattr(fn, "__name__", None)
    if name is None and callable(fn):
        name = getattr(getattr(fn, "func", None), "__name__", None) or type(fn).__name__  # a partial: its function
    if name == "<lambda>":
        msg = f"{call}: a lambda has no name to give its vertex; name it: add_vertex('name', lambda state: ...)"
        raise GraphValidationError(msg)
    if not isinstance(name, str) or not name:
        msg = f"{call}: a {type(fn).__name__} has no name to give its vertex; add_vertex('name', fn)"
        raise GraphValidationError(msg)
    return name


def destinations_of(fn: Any) -> tuple[str, ...] | None:
    """The destinations a vertex function's return annotation declares: `Command[Literal["a", "b"]]`.

    Read as LangGraph reads them, also out of a union (`Command[Literal["a"]] | dict`).
    None when the function says nothing (no annotation, a bare `Command`, or one
    that cannot be resolved: the graph's checks then ask for edges or `destinations=`).
    """
    target = fn if inspect.isroutine(fn) else getattr(type(fn), "__call__", None)  # noqa: B004 - its method's hints
    if target is None:
        return None
    try:
        returned = typing.get_type_hints(target).get("return")
    except Exception:  # noqa: BLE001 - an annotation that cannot be resolved declares nothing
        return None
    options = typing.get_args(returned) if typing.get_origin(returned) in (typing.Union, types.UnionType) else ()
    for hint in (returned, *options):
        if typing.get_origin(hint) is Command and (args := typing.get_args(hint)):
            if typing.get_origin(args[0]) is Literal:
                return tuple(str(v) for v in typing.get_args(args[0]))
    return None
