"""Explicit data flow: what a vertex is given of the state (`inputs`) and what it may write (`outputs`).

A vertex added with `inputs` sees only those keys (least privilege): a mapping
of its own parameter names to values taken from the run's state (`flow.KEY`,
or just `KEY`) or from the graph's read-only constants (`global.KEY`). A vertex
with `inputs` or `outputs` returns an update: the keys it writes, renamed by
`outputs` (`{returned_key: state_key}`) and applied to the state through its
reducers; writing a key `outputs` does not declare is an `InvalidUpdateError`
naming the vertex and the key. Pure: records and functions of them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from actorgraph._model.errors import GraphValidationError, InvalidUpdateError

__all__ = ["DataFlow", "data_flow"]

SCOPES = ("flow", "global")


@dataclass(frozen=True, slots=True)
class Source:
    """Where one parameter of a vertex comes from."""

    param: str
    scope: str  # "flow" or "global"
    key: str

    def __str__(self) -> str:
        return f"{self.scope}.{self.key}"


@dataclass(frozen=True, slots=True)
class DataFlow:
    """A vertex's declared inputs and outputs (None: not declared).

    Attributes:
        inputs: parameter -> source, or None (the vertex sees the whole state).
        outputs: returned key -> state key, or None (any key may be written).
        constants: the graph's `global.` values.
    """

    inputs: tuple[Source, ...] | None
    outputs: Mapping[str, str] | None
    constants: Mapping[str, Any] = field(default_factory=dict)

    def view(self, state: Any) -> Any:
        """What the vertex is given: its declared inputs (keys the state lacks are left out)."""
        if self.inputs is None:
            return state
        given: dict[str, Any] = {}
        for source in self.inputs:
            values = self.constants if source.scope == "global" else state
            if isinstance(values, Mapping) and source.key in values:
                given[source.param] = values[source.key]
        return given

    def update_of(self, returned: Any, who: str) -> Any:
        """The state update a vertex's return value makes: its keys renamed by `outputs`, checked.

        Raises:
            InvalidUpdateError: not a mapping, or a key `outputs` does not declare.
        """
        if not isinstance(returned, Mapping):
            msg = (
                f"{who} declares inputs/outputs, so it returns an update (a mapping of the keys it "
                f"writes), not a {type(returned).__name__}"
            )
            raise InvalidUpdateError(msg)
        if self.outputs is None:
            return dict(returned)
        undeclared = [key for key in returned if key not in self.outputs]
        if undeclared:
            declared = ", ".join(map(repr, self.outputs)) or "none"
            msg = (
                f"{who} wrote key {undeclared[0]!r}, which its outputs do not declare "
                f"(declared: {declared}); add it to outputs, or stop writing it"
            )
            raise InvalidUpdateError(msg)
        return {self.outputs[key]: value for key, value in returned.items()}


def data_flow(
    name: str, inputs: Any, outputs: Any, constants: Mapping[str, Any] | None = None
) -> DataFlow | None:
    """`add_vertex(inputs=, outputs=)` checked and normalized; None when neither is given.

    `inputs`: a list of state keys, or `{param: "KEY" | "flow.KEY" | "global.KEY"}`.
    `outputs`: a list of state keys, or `{returned_key: "KEY" | "flow.KEY"}`.

    Raises:
        GraphValidationError: a malformed declaration, or a `global.` key the graph has no constant for.
    """
    if inputs is None and outputs is None:
        return None
    who = f"vertex {name!r}"
    constants = MappingProxyType(dict(constants or {}))
    sources = None
    if inputs is not None:
        sources = tuple(_source(who, param, path, constants) for param, path in _pairs(who, "inputs", inputs))
    targets = None
    if outputs is not None:
        targets = {}
        for key, path in _pairs(who, "outputs", outputs):
            scope, target = _split(who, "outputs", path)
            if scope != "flow":
                msg = f"{who}: outputs write the run's state; {path!r} names {scope}., which is read-only"
                raise GraphValidationError(msg)
            targets[key] = target
    return DataFlow(sources, targets, constants)


def _pairs(who: str, what: str, given: Any) -> list[tuple[str, str]]:
    if isinstance(given, Mapping):
        pairs = list(given.items())
    elif isinstance(given, Sequence) and not isinstance(given, str):
        pairs = [(_bare(who, what, key), key) for key in given]
    else:
        msg = f"{who}: {what} must be a list of keys or a mapping, got {given!r}"
        raise GraphValidationError(msg)
    for name, path in pairs:
        if not isinstance(name, str) or not name or not isinstance(path, str) or not path:
            msg = f"{who}: {what} entries must be non-empty strings, got {name!r}: {path!r}"
            raise GraphValidationError(msg)
    return pairs


def _bare(who: str, what: str, key: Any) -> str:
    """A listed key names a state key of the same name (a listed `flow.KEY` too)."""
    if not isinstance(key, str):
        msg = f"{who}: {what} entries must be strings, got {key!r}"
        raise GraphValidationError(msg)
    return key.removeprefix("flow.")


def _split(who: str, what: str, path: str) -> tuple[str, str]:
    scope, dot, key = path.partition(".")
    if not dot:
        return "flow", path
    if scope not in SCOPES or not key:
        msg = f"{who}: {what} entry {path!r} must be KEY, flow.KEY or global.KEY"
        raise GraphValidationError(msg)
    return scope, key


def _source(who: str, param: str, path: str, constants: Mapping[str, Any]) -> Source:
    scope, key = _split(who, "inputs", path)
    if scope == "global" and key not in constants:
        known = ", ".join(sorted(constants)) or "none"
        msg = f"{who}: input {param!r} reads global.{key}, which the graph does not define (globals: {known})"
        raise GraphValidationError(msg)
    return Source(param, scope, key)
