"""Which graphs a vertex's function invokes: the ones seen running, else the ones its code names.

A graph invoked inside a vertex runs nested in the invoking task (`nesting.py`),
kept in a thread of its own; reading that thread back (`History`) needs the
graph that made it. A run remembers, per vertex function and in this process,
the graph behind each name it gave (`remember`); another process finds the
graphs the function's code refers to (its closure, the globals it names, its
defaults, and the functions and objects those lead to: LangGraph finds a node's
subgraphs the same way) and matches them by name (`invoked_spec`). The Ray
backend refuses, at compile, a vertex whose code names one (`invocables`): a
worker process could not nest its runs.

An object is invocable when it is a compiled graph, or has
`__actorgraph_invocable__()` returning the compiled graph its calls run on
(`@task` functions, entrypoints).
"""

from __future__ import annotations

import functools
import inspect
import threading
import types
import weakref
from collections.abc import Iterator
from typing import Any

from actorgraph._engine.nesting import first_slot
from actorgraph._model.spec import GraphSpec

__all__ = ["invocables", "invoked_spec", "remember"]

_DEPTH = 4  # how far from the vertex's function a graph is looked for (function -> helper -> ...)
_BUDGET = 2_000  # objects looked at, at most, for one function (a huge module stays cheap)
_ITEMS = 64  # items of a list, tuple or dict looked at, at most


_seen: weakref.WeakKeyDictionary[Any, dict[str, GraphSpec]] = weakref.WeakKeyDictionary()
_lock = threading.Lock()


def remember(fn: Any, slot: str, spec: GraphSpec) -> None:
    """Note that the vertex function `fn` invoked, under the name `slot`, the graph `spec`."""
    try:
        with _lock:
            _seen.setdefault(fn, {})[slot] = spec
    except TypeError:  # an object that cannot be a weak key (unhashable): its code is read instead
        return


def invoked_spec(fn: Any, label: str, slot: str) -> GraphSpec | None:
    """The graph the vertex function `fn` invoked as `slot` (its name `label`), or None if unknown.

    The graph seen running in this process, else the one graph named `label`
    that the function's code refers to (None when none is, or several are and
    `slot` is not the first name).
    """
    try:
        with _lock:
            spec = _seen.get(fn, {}).get(slot)
    except TypeError:
        spec = None
    if spec is not None:
        return spec
    graphs = {id(g.spec): g.spec for g in (_graph_of(o) for o in invocables(fn)) if g is not None}
    named = [s for s in graphs.values() if s.name == label]
    return named[0] if len(named) == 1 and slot == first_slot(label) else None


def invocables(fn: Any) -> list[Any]:
    """The invocable objects `fn`'s code refers to, directly or through what it calls (best effort).

    Reads the closure, the globals the code names (through modules, the
    attributes it names), default arguments, partials, bound methods and
    callable objects, `_DEPTH` levels deep. A graph the code reaches only at run
    time (built in the call, looked up in a registry) is not found.
    """
    found: list[Any] = []
    visited: set[int] = set()
    budget = [_BUDGET]
    _walk(fn, 0, found, visited, budget)
    return found


def _graph_of(obj: Any) -> Any:
    """The compiled graph an invocation of `obj` runs (None when it cannot say: a closed task graph)."""
    if _compiled(obj):
        return obj
    try:
        return obj.__actorgraph_invocable__()
    except Exception:  # noqa: BLE001 - an object that cannot say is left out
        return None


def _compiled(obj: Any) -> bool:
    """A compiled graph (its spec, and `invoke`), known without importing the facade that holds it."""
    return isinstance(getattr(obj, "spec", None), GraphSpec) and callable(getattr(obj, "invoke", None))


def _invocable(obj: Any) -> bool:
    """Something a vertex may invoke, nested in its task: a compiled graph, a `@task`, an entrypoint."""
    if isinstance(obj, (type, types.ModuleType)) or inspect.isroutine(obj):
        return False
    return _compiled(obj) or callable(getattr(obj, "__actorgraph_invocable__", None))


def _walk(obj: Any, depth: int, found: list[Any], visited: set[int], budget: list[int]) -> None:
    if id(obj) in visited or budget[0] <= 0:
        return
    visited.add(id(obj))
    budget[0] -= 1
    if _invocable(obj):
        found.append(obj)
        return
    if depth >= _DEPTH or (depth and _ours(obj)):
        return
    for ref in _references(obj):
        _walk(ref, depth + 1, found, visited, budget)


def _ours(obj: Any) -> bool:
    """A function of actorgraph itself, reached from user code: it invokes no graph of the user's."""
    return inspect.isfunction(obj) and str(getattr(obj, "__module__", "")).startswith("actorgraph.")


def _references(obj: Any) -> Iterator[Any]:
    """The objects a call of `obj` may use: what its code names (an object's attributes, only those named)."""
    if isinstance(obj, (types.ModuleType, type, str, bytes, int, float)) or obj is None:
        return iter(())
    if isinstance(obj, functools.partial):
        return iter((obj.func, *obj.args[:_ITEMS], *list(obj.keywords.values())[:_ITEMS]))
    if inspect.ismethod(obj):  # `self.research.invoke(...)`: the attributes of `self` its code names
        return iter((obj.__func__, *_named(obj.__self__, _names(obj.__func__.__code__))))
    if inspect.isfunction(obj):
        return _function_references(obj)
    if isinstance(obj, (list, tuple, set, frozenset)):
        return iter(list(obj)[:_ITEMS])
    if isinstance(obj, dict):
        return iter(list(obj.values())[:_ITEMS])
    call = getattr(type(obj), "__call__", None)  # noqa: B004 - the class's method, not the object's
    return iter((obj.__call__,)) if inspect.isfunction(call) else iter(())  # a callable object


def _function_references(fn: types.FunctionType) -> Iterator[Any]:
    """A function's closure, defaults, wrapped function and named globals, and the attributes it names."""
    names = _names(fn.__code__)
    values = [fn.__globals__.get(name) for name in names]
    for cell in fn.__closure__ or ():
        try:
            values.append(cell.cell_contents)
        except ValueError:  # an empty cell: a name not bound yet
            continue
    values.extend(fn.__defaults__ or ())
    values.extend((fn.__kwdefaults__ or {}).values())
    values.append(getattr(fn, "__wrapped__", None))
    for value in values:
        if value is None:
            continue
        if isinstance(value, types.ModuleType):  # `helpers.research(...)`: the module's attributes it names
            if not value.__name__.startswith("actorgraph"):
                yield from _named(value, names)
        else:
            yield value
            if not inspect.isroutine(value) and not isinstance(value, (list, tuple, dict, set, frozenset)):
                yield from _named(value, names)  # `agent.graph.invoke(...)`


def _named(obj: Any, names: list[str]) -> Iterator[Any]:
    """The attributes in `obj`'s own `__dict__` among `names` (not `getattr`: no property, no lazy import)."""
    own = getattr(obj, "__dict__", None)
    if isinstance(own, dict):
        yield from (own[name] for name in names if name in own)


def _names(code: types.CodeType) -> list[str]:
    """The global and attribute names a code object and the functions defined in it use."""
    names = list(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names.extend(n for n in _names(const) if n not in names)
    return names
