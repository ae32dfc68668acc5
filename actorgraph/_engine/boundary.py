"""A graph's boundary: `Graph(state=S, input=InS, output=OutS)`.

A run's input is checked against the input schema (a new run's input must fit
it: its required keys, no others; a new input on a finished thread is an
update of its keys only), the run's result (`RunResult.state`) holds the output
schema's keys only, and the keys in neither are private to the vertices. Both
schemas default to the state schema, which keeps today's behaviour. The
thread's whole state stays visible where LangGraph shows it: `get_state`,
`get_history` and `stream(mode="values")`.

At a subgraph's boundary the parent's state is cut to the subgraph's input
keys (the parent's other keys are not the subgraph's business), and the
subgraph's result, cut to its output keys, is an update to the parent's state.
Pure: no I/O, no threads.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from actorgraph._engine.fields import fields
from actorgraph._model.schema import Schema
from actorgraph._model.spec import GraphSpec

__all__ = ["checked_input", "output_of", "subgraph_input"]


def checked_input(spec: GraphSpec, input_: Any, *, update: bool) -> Any:
    """A run's input checked against the graph's input schema, as the mapping it gives the state.

    Args:
        spec: the graph.
        input_: the caller's input (a mapping, or an instance of the input schema's class).
        update: the input is an update to a finished thread's state (only its keys are checked).

    Raises:
        InvalidUpdateError: the input does not fit the input schema, naming the keys.
    """
    schema = spec.input_schema
    if schema is None:
        return input_
    if update and isinstance(input_, Mapping):
        schema.check_update(input_, "the input")
        return input_
    checked = schema.check(input_, "the input")
    return dict(fields(checked) or {})


def subgraph_input(spec: GraphSpec, state: Any) -> Any:
    """The parent's state as a subgraph with an input schema sees it: cut to that schema's keys."""
    return _cut(spec.input_schema, state)


def output_of(spec: GraphSpec, state: Any) -> Any:
    """A run's result as its caller sees it: cut to the output schema's keys (a dict), if there is one."""
    return _cut(spec.output_schema, state)


def _cut(schema: Schema | None, state: Any) -> Any:
    values = fields(state) if schema is not None else None
    if schema is None or values is None:
        return state
    return {key: value for key, value in values.items() if key in schema.annotations}
