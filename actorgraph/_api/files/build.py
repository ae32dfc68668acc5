"""From a checked graph file to a `Graph`: import paths resolved, expressions compiled, errors located."""

from __future__ import annotations

import builtins
import importlib
from collections.abc import Callable, Mapping
from typing import Annotated, Any, TypedDict

from actorgraph._api.files.allow import Allowlist, is_module_name
from actorgraph._api.files.expr import Expression, compile_expression
from actorgraph._api.files.model import EdgeFile, GraphFile, RetryFile, StateKey, VertexFile
from actorgraph._api.files.positions import Located, Path, combined
from actorgraph._api.graph import Graph
from actorgraph._model.errors import ConfigFileError, GraphValidationError
from actorgraph._model.policy import RetryPolicy
from actorgraph._model.records import END, START, Send
from actorgraph.merge import add, append, merge_dicts, replace, union

__all__ = ["build_graph"]

_REDUCERS: Mapping[str, Any] = {
    "append": append, "add": add, "union": union, "merge_dicts": merge_dicts, "replace": replace,
}  # fmt: skip
_TYPES: Mapping[str, Any] = {"str": str, "int": int, "float": float, "bool": bool, "list": list, "dict": dict}
_ENDS = {"__start__": START, "START": START, "__end__": END, "END": END}


def build_graph(model: GraphFile, located: Located, allow: Allowlist) -> Graph[Any]:
    """The `Graph` a checked file describes, importing only what `allow` allows.

    Raises:
        ConfigFileError: an import path that does not resolve or is not allowed, an
            expression that does not check, or a graph the builder refuses, at its place in the file.
    """
    builder = _Builder(model, located, allow)
    return builder.graph()


class _Builder:
    def __init__(self, model: GraphFile, located: Located, allow: Allowlist) -> None:
        self.model = model
        self.located = located
        self.allow = allow
        self.flow_keys = frozenset(model.state) if model.state is not None else None
        self.global_keys = frozenset(model.global_)

    def graph(self) -> Graph[Any]:
        model = self.model
        graph: Graph[Any] = self._located(
            ("name",),
            lambda: Graph(
                name=model.name or "graph",
                state=self._schema(),
                returns=model.returns,
                retry=self._retry(model.retry, ("retry",)),
                globals=model.global_,
            ),
        )
        found: list[ConfigFileError] = []  # every problem is reported, not only the first
        for i, vertex in enumerate(model.vertices):
            self._collect(found, lambda: self._vertex(graph, vertex, ("vertices", i)))  # noqa: B023 - called at once
        for i, edge in enumerate(model.edges):
            self._collect(found, lambda: self._edge(graph, edge, ("edges", i)))  # noqa: B023 - called at once
        if found:
            raise combined(found)
        graph.pause_before = tuple(model.interrupt_before or ())
        graph.pause_after = tuple(model.interrupt_after or ())
        return graph

    @staticmethod
    def _collect(found: list[ConfigFileError], step: Callable[[], None]) -> None:
        try:
            step()
        except ConfigFileError as exc:
            found.append(exc)

    def _located(self, path: Path, make: Callable[[], Any]) -> Any:
        try:
            return make()
        except ConfigFileError:
            raise
        except GraphValidationError as exc:
            raise self.located.error(str(exc), path) from None

    def _schema(self) -> type | None:
        if self.model.state is None:
            return None
        fields: dict[str, Any] = {}
        for key, declared in self.model.state.items():
            spec = declared if isinstance(declared, StateKey) else StateKey(type=declared, reducer=None)
            kind = _TYPES.get(spec.type, Any)
            fields[key] = Annotated[kind, _REDUCERS[spec.reducer]] if spec.reducer else kind
        schema: type = TypedDict("State", fields, total=False)  # type: ignore[misc]
        return schema

    def _retry(self, given: RetryFile | list[RetryFile] | None, path: Path) -> list[RetryPolicy] | None:
        if given is None:
            return None
        policies = given if isinstance(given, list) else [given]
        out = []
        for i, policy in enumerate(policies):
            where = (*path, i) if isinstance(given, list) else path
            kinds = None
            if policy.retry_on is not None:
                kinds = tuple(
                    self._exception(name, (*where, "retry_on", j)) for j, name in enumerate(policy.retry_on)
                )
            options = policy.model_dump(exclude={"retry_on"})
            out.append(RetryPolicy(**options, retry_on=kinds))
        return out

    def _exception(self, name: str, path: Path) -> type[BaseException]:
        plain = name.removeprefix("builtins.")  # builtin exception classes need no import, nor allowing
        found = getattr(builtins, plain, None) if "." not in plain and ":" not in plain else None
        found = found if found is not None else self._import(name, path)
        if not (isinstance(found, type) and issubclass(found, BaseException)):
            raise self.located.error(f"{name!r} is not an exception class", path)
        return found

    def _import(self, target: str, path: Path) -> Any:
        module_name, colon, attribute = target.partition(":")
        if not colon:
            module_name, _, attribute = target.rpartition(".")
        if not is_module_name(module_name) or not is_module_name(attribute):
            raise self.located.error(f"{target!r} is not an import path: write package.module:name", path)
        self._allowed(self.allow.refusal(target, module_name), path)
        try:
            module = importlib.import_module(module_name)
        except ImportError as exc:
            raise self.located.error(
                f"cannot import module {module_name!r} for {target!r}: {exc}", path
            ) from None
        except Exception as exc:  # noqa: BLE001 - the module's own code failed while importing
            problem = f"importing module {module_name!r} for {target!r} raised {type(exc).__name__}: {exc}"
            raise self.located.error(problem, path) from None
        value: Any = module
        for part in attribute.split("."):
            if not hasattr(value, part):
                raise self.located.error(
                    f"module {module_name!r} has no {attribute!r} (for {target!r})", path
                )
            value = getattr(value, part)
            self._allowed(self.allow.refusal_of_value(target, value), path)
        return value

    def _allowed(self, refusal: str | None, path: Path) -> None:
        if refusal is not None:
            raise self.located.error(refusal, path)

    def _vertex(self, graph: Graph[Any], vertex: VertexFile, path: Path) -> None:
        fn = self._import(vertex.fn, (*path, "fn"))
        dumped = vertex.model_dump(exclude={"id", "fn", "description", "retry", "on_error"})
        options: dict[str, Any] = {k: v for k, v in dumped.items() if v is not None}
        if vertex.retry is not None:
            options["retry"] = self._retry(vertex.retry, (*path, "retry"))
        if vertex.on_error is not None:
            options["on_error"] = self._import(vertex.on_error, (*path, "on_error"))
        self._located(path, lambda: graph.add_vertex(vertex.id, fn, **options))

    def _edge(self, graph: Graph[Any], edge: EdgeFile, path: Path) -> None:
        source = [_name(s) for s in edge.source] if isinstance(edge.source, list) else _name(edge.source)
        named = [*edge.source] if isinstance(edge.source, list) else [edge.source]
        named += [edge.target] if edge.target is not None else []
        named += [edge.send.to] if edge.send is not None else []
        named += list((edge.mappings or {}).values())
        for name in named:
            if _name(name) not in (START, END) and name not in {v.id for v in self.model.vertices}:
                known = ", ".join(v.id for v in self.model.vertices)
                problem = f"edge names unknown vertex {name!r} (vertices: {known}; ends: __start__, __end__)"
                raise self.located.error(problem, path)
        if edge.target is not None:
            self._located(path, lambda: graph.add_edge(source, _name(edge.target or "")))
        elif edge.condition is not None:
            test = self._expression(edge.condition, (*path, "condition"))
            mappings = {k: _name(v) for k, v in (edge.mappings or {}).items()} or None
            router = Condition(test, self.model.global_, mappings)
            self._located(path, lambda: graph.add_conditional_edges(str(source), router, mappings))
        elif edge.send is not None:
            each = self._expression(edge.send.each, (*path, "send", "each"))
            fan = Fan(each, self.model.global_, edge.send.to, edge.send.as_)
            self._located(path, lambda: graph.add_conditional_edges(str(source), fan, [edge.send.to]))  # type: ignore[union-attr]

    def _expression(self, text: str, path: Path) -> Expression:
        line, column = self.located.at(path)
        quoted = self.located.data_text_offset(path)
        return compile_expression(
            text,
            flow_keys=self.flow_keys,
            global_keys=self.global_keys,
            file=self.located.file,
            line=line or 1,
            column=(column or 1) + quoted,
        )


def _name(name: str) -> str:
    return _ENDS.get(name, name)


class Condition:
    """A conditional edge of a graph file: the expression's value, through `mappings` when given."""

    def __init__(
        self, test: Expression, constants: Mapping[str, Any], mappings: Mapping[Any, str] | None
    ) -> None:
        self.test = test
        self.constants = constants
        self.mappings = mappings

    def __call__(self, state: Any) -> Any:
        value = self.test.evaluate(state, self.constants)
        if self.mappings is not None and value not in self.mappings and str(value) in self.mappings:
            return str(value)
        return value


class Fan:
    """A send edge of a graph file: one `Send` per item of a list."""

    def __init__(self, each: Expression, constants: Mapping[str, Any], to: str, key: str) -> None:
        self.each = each
        self.constants = constants
        self.to = to
        self.key = key

    def __call__(self, state: Any) -> list[Send]:
        items = self.each.evaluate(state, self.constants)
        return [Send(self.to, {**state, self.key: item}) for item in items]
