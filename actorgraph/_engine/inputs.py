"""What a run starts from: its input as a state, applied to what the thread remembers.

A thread remembers: a new input on a thread whose last run is done is an
update to that run's final state, applied through the graph's reducers (so a
chat keeps its conversation). A mapping is an update; any other value (a
dataclass instance, a number) is a whole state and replaces the old one.
`Command(goto=..., update=...)` as an input updates the state the same way and
starts at the `goto` targets instead of START's edges.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from actorgraph._engine.boundary import checked_input
from actorgraph._engine.copies import copy_state
from actorgraph._engine.superstep import initial
from actorgraph._engine.updates import apply_update, normalized, writes_of
from actorgraph._model.errors import ActorGraphError, InvalidUpdateError
from actorgraph._model.records import UNSET, Command, Interrupt, Node, Position, Send
from actorgraph._model.results import RunResult, Snapshot
from actorgraph._model.spec import GraphSpec
from actorgraph.merge import has_keys

__all__ = ["caller_input", "input_state", "start_position", "updated_state"]


def start_position(spec: GraphSpec, base: Any, input_: Any, node_id: str) -> Position:
    """The position of a new run: `input_` applied to `base` (the thread's last state, or None).

    `input_` is the caller's input as `input_state` checked and copied it (or a `Command`).

    Raises:
        ActorGraphError: the input is not a state or a `Command(goto=..., update=...)`.
        InvalidUpdateError: the input does not fit the state, its schema or the input schema.
        RoutingError: a router on START failed, or a goto names an unknown vertex.
    """
    if isinstance(input_, Command):
        if input_.resume is not UNSET:
            msg = "Command(resume=...) answers a paused thread; it cannot be combined with goto=..."
            raise ActorGraphError(msg)
        state = base if input_.update is None else updated_state(spec, base or {}, input_.update, "the input")
        if state is None:
            msg = "Command(goto=...) on a new thread needs update=... to give the run its state"
            raise ActorGraphError(msg)
        return initial(spec, Node(node_id, state), goto=input_.goto)
    if base is not None and isinstance(input_, Mapping) and has_keys(base):
        state = updated_state(spec, base, checked_input(spec, input_, update=True), "the input")
    else:
        state = spec.checked(normalized(checked_input(spec, input_, update=False), spec.merge), "the input")
    return initial(spec, Node(node_id, state))


def updated_state(spec: GraphSpec, state: Any, update: Any, who: str, *, replace: bool = False) -> Any:
    """`state` with `update` applied through the reducers (or replaced by it), checked by the schema.

    Raises:
        InvalidUpdateError: naming `who` and what does not fit.
    """
    if replace:
        return spec.checked(normalized(input_state(update), spec.merge), who)
    if spec.schema is not None:
        spec.schema.check_update(writes_of(update, who), who)
    return spec.checked(apply_update(state, copy_state(update), spec.merge, who=who), who, base=state)


def input_state(value: Any) -> Any:
    """A private copy of a run's input, refusing what is not a state."""
    if value is None:
        msg = (
            "invoke(None) resumes a thread, but there is nothing to resume: this graph has no "
            "checkpointer or no thread_id was given; pass an input state"
        )
        raise ActorGraphError(msg)
    if isinstance(value, (Send, Interrupt, RunResult, Snapshot, Command)):
        msg = (
            f"the input must be a state (a dict, a dataclass, ...), got a {type(value).__name__}; "
            "Send is returned by routers, Command(goto=..., update=...) starts a run at goto, and "
            "Command(resume=...) answers a paused thread (it needs a checkpointer and a thread_id)"
        )
        raise InvalidUpdateError(msg)
    try:
        return copy_state(value)
    except Exception as exc:
        msg = f"the input state cannot be copied ({type(exc).__name__}: {exc}); states must be deep-copyable"
        raise InvalidUpdateError(msg) from exc


def caller_input(value: Any) -> Any:
    """What a caller gave `invoke`, checked and copied on the caller's thread (it may change it next).

    None and a `Command` pass (a `Command`'s update copied); anything else must be a state.
    """
    if value is None:
        return None
    if isinstance(value, Command):
        return value if value.update is None else dataclasses.replace(value, update=copy_state(value.update))
    return input_state(value)
