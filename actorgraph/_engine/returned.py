"""What a vertex returned, made into its task's new state version and its goto. Pure.

A whole-state vertex returns its new state; an update vertex (`returns="update"`,
or declared `outputs`) returns the keys it changes, applied through the
reducers; either may return None (no change) or a `Command`. Whatever would lose
data without a word (a whole-state return without keys of its input, a state
without keys in a key-by-key graph) is refused with an `InvalidUpdateError`
that says what to return instead.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from actorgraph._engine.updates import apply_update, writes_of
from actorgraph._model.dataflow import DataFlow
from actorgraph._model.errors import InvalidUpdateError
from actorgraph._model.records import UNSET, Command, Interrupt, Node, Send, Task
from actorgraph._model.spec import GraphSpec, VertexSpec
from actorgraph.merge import has_keys, works_by_key

__all__ = ["interpret"]


def interpret(spec: GraphSpec, task: Task, node_in: Node, node_id: str, returned: Any) -> tuple[Node, Any]:
    """The new version and the goto targets of what a vertex returned.

    A whole-state vertex returns the new state; an update vertex returns the keys
    it changes, applied to its input through the reducers; either may return None
    (no change) or a `Command`, whose `update` is always an update.
    """
    who = f"vertex {task.vertex!r}"
    vertex = spec.vertices[task.vertex]
    flow = vertex.flow
    goto: Any = ()
    if flow is not None or vertex.returns == "update":
        node_in = _update_base(task, node_in)
    if isinstance(returned, Command):
        if returned.resume is not UNSET:
            msg = (
                f"{who} returned Command(resume=...); resume answers are "
                "passed to invoke(Command(resume=...)), not returned by vertices"
            )
            raise InvalidUpdateError(msg)
        goto, returned = returned.goto, returned.update
        if returned is not None and flow is not None:
            returned = _flow_update(flow, returned, who)
        new = node_in.state if returned is None else _updated(spec, node_in.state, returned, who)
    elif returned is None:
        return node_in, ()
    else:
        new = _returned_state(spec, vertex, node_in.state, returned, who)
    if new is node_in.state:
        return node_in, goto
    return Node.child(node_id, new, node_in), goto


def _returned_state(spec: GraphSpec, vertex: VertexSpec, given: Any, returned: Any, who: str) -> Any:
    """The new state of a vertex that returned `returned` (not None, not a `Command`) on input `given`."""
    if isinstance(returned, (Send, Interrupt)):
        msg = (
            f"{who} returned a {type(returned).__name__}; return the new "
            "state, and send with a router or Command(goto=Send(...))"
        )
        raise InvalidUpdateError(msg)
    if vertex.flow is not None:  # declared inputs/outputs: an update of the declared keys
        return _updated(spec, given, vertex.flow.update_of(returned, who), who)
    if vertex.returns == "update":
        if not isinstance(returned, Mapping):  # as in LangGraph: a list of writes comes in a Command
            msg = (
                f"{who} returned a {type(returned).__name__}; a vertex that returns updates returns a "
                "mapping of the keys it changes (to write a key several times, return "
                "Command(update=[('key', value), ...]))"
            )
            raise InvalidUpdateError(msg)
        return _updated(spec, given, returned, who)
    _refuse_keyless(spec, who, given, returned)
    new = spec.checked(returned, who, base=given)  # a schema names missing required keys first
    if not vertex.may_drop:
        _refuse_dropped(who, given, returned)
    return new


def _flow_update(flow: DataFlow, update: Any, who: str) -> Any:
    """A declared-outputs vertex's `Command(update=...)` with its keys renamed (a list: write by write)."""
    if isinstance(update, Mapping):
        return flow.update_of(update, who)
    return [next(iter(flow.update_of({key: value}, who).items())) for key, value in writes_of(update, who)]


def _update_base(task: Task, node_in: Node) -> Node:
    """The version an update-returning task's update lands on.

    A `Send` task's input is its payload, which may have any shape (LangGraph's
    map-reduce sends `{"item": ...}`): its update lands on the state the `Send`
    was made from, the payload's parent. Any other task's lands on its input.
    """
    if len(task.inputs) == 1 and task.inputs[0].send and node_in.parents:
        return node_in.parents[0]
    return node_in


def _updated(spec: GraphSpec, state: Any, update: Any, who: str) -> Any:
    if spec.schema is not None:
        spec.schema.check_update(writes_of(update, who), who)
    return spec.checked(apply_update(state, update, spec.merge, who=who), who, base=state)


def _refuse_dropped(who: str, given: Any, returned: Any) -> None:
    """A whole-state vertex that leaves keys of its input out of its mapping: say so, never delete them."""
    if not isinstance(returned, Mapping) or not isinstance(given, Mapping) or returned.keys() >= given.keys():
        return
    missing = [k for k in given if k not in returned]
    listed = 10
    shown = ", ".join(repr(k) for k in missing[:listed])
    shown += f" and {len(missing) - listed} more" if len(missing) > listed else ""
    msg = (
        f"{who} returned a mapping without key(s) {shown} of its input, which would delete them. "
        "A vertex returns its whole new state by default: return {**state, ...changes}, or declare "
        "add_vertex(..., returns='update') (or Graph(returns='update')) to return only the keys it "
        "changes, as in LangGraph. To delete keys on purpose, declare returns='state' for the vertex "
        "or the graph."
    )
    raise InvalidUpdateError(msg)


def _refuse_keyless(spec: GraphSpec, who: str, given: Any, returned: Any) -> None:
    """A key-by-key graph cannot merge a state without keys: say so at the vertex, not at a later merge."""
    if works_by_key(spec.merge) and has_keys(given) and not has_keys(returned):
        msg = (
            f"{who} returned a {type(returned).__name__}, but this graph merges its states key by "
            f"key and the vertex was given a {type(given).__name__}; return the whole new state "
            "(None keeps the input; Command(update=...) changes some keys)"
        )
        raise InvalidUpdateError(msg)
