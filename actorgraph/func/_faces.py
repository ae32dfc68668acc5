"""What an entrypoint's and a task call's runs keep, and how their callers and readers see it.

An entrypoint's graph keeps the record `{"input", "output", "save"}`: the
function's input, its return value and what its next run gets as `previous`
(`entrypoint.final(value=..., save=...)` sets the two apart). A task call's
graph keeps `{"args", "kwargs"}`, then `{"value"}`. Callers and readers are
shown the return value (`FACE`) and the call's result (`CALL`), never the
record: each graph's `GraphSpec.face`. A thread records which face it has
(`FACE_KEY`), so what reads the store alone (`actorgraph show`) shows it so too.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from actorgraph._model.spec import Face

__all__ = ["CALL", "FACE", "FACES", "Final"]

V = TypeVar("V")
S = TypeVar("S")


@dataclass(frozen=True, slots=True)
class Final(Generic[V, S]):
    """What an entrypoint returns to give its caller one value and keep another for its next run.

    As LangGraph's, it may annotate the function: `-> entrypoint.final[int, int]`.

    Attributes:
        value: what `invoke` returns (the run's state).
        save: what the next run on the thread receives as `previous`.
    """

    value: V
    save: S


def _input(value: Any) -> dict[str, Any]:
    return {"input": value}


def _returned(state: Any) -> Any:
    """What the record shows: the function's last return value (None before it returned once)."""
    return state.get("output") if isinstance(state, Mapping) else None


def _asked(state: Any) -> Any:
    return state.get("input") if isinstance(state, Mapping) else None


def _written(value: Any) -> dict[str, Any]:
    """The update that makes `value` the thread's return value and its next `previous`."""
    if isinstance(value, Final):
        return {"output": value.value, "save": value.save}
    return {"output": value, "save": value}


FACE = Face("entrypoint", given=_input, shown=_returned, asked=_asked, written=_written)
"""How an entrypoint's graph is seen: its record shows the return value."""


def _arguments(state: Any) -> Any:
    """A call's arguments as LangGraph's `tasks` stream shows them: `(args, kwargs)`."""
    if not isinstance(state, Mapping):
        return None
    return tuple(state.get("args") or ()), dict(state.get("kwargs") or {})


def _called(call: Any) -> Any:
    return call


def _result(state: Any) -> Any:
    return state.get("value") if isinstance(state, Mapping) else None


def _value(value: Any) -> dict[str, Any]:
    return {"value": value}


CALL = Face("task", given=_called, shown=_result, asked=_arguments, written=_value, call=True)
"""How a task call's graph is seen: its record shows the call's result, as one task of its caller."""

FACES: Mapping[str, Face] = {face.name: face for face in (FACE, CALL)}
"""The faces by the name a thread records (`FACE_KEY`)."""
