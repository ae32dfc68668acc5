"""Small renderings shared by the commands: durations, questions, errors, and values as JSON."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from typing import Any

from actorgraph import ErrorInfo, Interrupt, VertexResult

__all__ = ["as_json", "dumps", "duration", "error_text", "interrupt_record", "question", "task_record"]

_SHORT = 70  # characters of a question shown in a table


def duration(seconds: float) -> str:
    """`0.05 s`, `12 s`, `4 min`, `3 h`, `2 d`: short, for tables and lines."""
    if seconds < 10:  # noqa: PLR2004 - below ten seconds, hundredths tell a retry from a run
        return f"{max(seconds, 0):.2f} s"
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size:
            return f"{seconds / size:.0f} {unit}"
    return f"{seconds:.0f} s"


def question(value: Any, *, short: bool = False) -> str:
    """What an interrupt asks: the value if text, its `question` key if it has one, else its JSON."""
    if isinstance(value, str):
        text = value
    elif isinstance(value, Mapping) and isinstance(value.get("question"), str):
        text = value["question"]
    else:
        text = dumps(value)
    return text if not short or len(text) <= _SHORT else text[: _SHORT - 3] + "..."


def error_text(error: ErrorInfo | None) -> str:
    """`ConnectionError: timed out` (builtins need no module name)."""
    if error is None:
        return "unknown error"
    return f"{error.type.removeprefix('builtins.')}: {error.message}"


def as_json(value: Any) -> Any:
    """`value` made of JSON types: tuples and sets as lists, records as objects, the rest as text."""
    match value:
        case None | bool() | int() | float() | str():
            return value
        case Mapping():
            return {str(k): as_json(v) for k, v in value.items()}
        case list() | tuple():
            return [as_json(v) for v in value]
        case set() | frozenset():
            return sorted((as_json(v) for v in value), key=repr)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: as_json(getattr(value, f.name)) for f in dataclasses.fields(value)}
    dump = getattr(value, "model_dump", None)  # pydantic models
    if callable(dump):
        return as_json(dump(mode="json"))
    return str(value)


def dumps(value: Any, *, indent: int | None = None) -> str:
    """`value` as JSON text (see `as_json`)."""
    return json.dumps(as_json(value), indent=indent, ensure_ascii=False)


def interrupt_record(pending: Interrupt) -> dict[str, Any]:
    """A pending interrupt as JSON: id, vertex, task, kind, value and the question."""
    return {
        "id": pending.id,
        "vertex": pending.vertex,
        "task_id": pending.task_id,
        "kind": pending.kind,
        "question": question(pending.value),
        "value": as_json(pending.value),
    }


def task_record(result: VertexResult) -> dict[str, Any]:
    """A task's outcome as JSON: vertex, status, attempts, elapsed, and its error or question."""
    elapsed = result.finished_at - result.started_at if result.finished_at else None
    return {
        "task_id": result.task_id,
        "vertex": result.vertex,
        "status": result.status,
        "attempts": result.attempts,
        "elapsed": elapsed,
        "error": error_text(result.error) if result.status == "error" else None,
        "interrupt": result.interrupt.id if result.interrupt else None,
        "question": question(result.interrupt.value) if result.interrupt else None,
    }
