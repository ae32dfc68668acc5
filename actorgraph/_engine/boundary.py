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
A graph whose state is a record of its own (an `@entrypoint`'s, a `@task`'s:
`GraphSpec.face`) is given its caller's input through the face (`given_input`),
and its result is what the face shows of the record (`output_of`).

Pure: no I/O, no threads.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from actorgraph._engine.fields import fields
from actorgraph._model.records import START, Command
from actorgraph._model.schema import Schema
from actorgraph._model.spec import GraphSpec

__all__ = ["checked_input", "given_input", "output_of", "shown_state", "subgraph_input", "written_update"]


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


def given_input(spec: GraphSpec, input_: Any) -> Any:
    """A caller's input as the run takes it: through the graph's face, if it has one.

    None (continue the thread) and a `Command` (answers) are the run's own, never a face's.
    """
    if spec.face is None or input_ is None or isinstance(input_, Command):
        return input_
    return spec.face.given(input_)


def written_update(spec: GraphSpec, values: Any, as_vertex: str | None) -> Any:
    """An update given to `update_state` as the graph's state takes it: through its face, if it has one.

    The face's reader gave a value as it is shown (an entrypoint's return value);
    as START, a new input instead.
    """
    if spec.face is None:
        return values
    return spec.face.given(values) if as_vertex == START else spec.face.written(values)


def shown_state(spec: GraphSpec, state: Any) -> Any:
    """A thread's state as readers see it (`get_state`, `values`): whole, or what its face shows."""
    return state if spec.face is None else spec.face.shown(state)


def output_of(spec: GraphSpec, state: Any) -> Any:
    """A run's result as its caller sees it.

    Cut to the output schema's keys (a dict), if there is one; what the graph's
    face shows of its record, if it has one.
    """
    if spec.face is not None:
        return spec.face.shown(state)
    return _cut(spec.output_schema, state)


def _cut(schema: Schema | None, state: Any) -> Any:
    values = fields(state) if schema is not None else None
    if schema is None or values is None:
        return state
    return {key: value for key, value in values.items() if key in schema.annotations}
