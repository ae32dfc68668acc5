"""Text for people, shared by the front ends: durations, questions, errors, values as JSON, and safety.

Everything a front end prints comes from stored data it did not write, so it is
made safe here once: `printable` escapes control characters (a state must not be
able to move an operator's cursor or rewrite their terminal), and `preview`
bounds what is shown of a large value, saying how large it is.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from actorgraph._model.records import ErrorInfo, Interrupt, VertexResult

__all__ = [
    "PREVIEW_CHARS",
    "Preview",
    "as_json",
    "dumps",
    "duration",
    "error_text",
    "interrupt_record",
    "preview",
    "printable",
    "question",
    "size_text",
    "task_record",
]

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


# C0 and C1 control characters, DEL, and the Unicode bidirectional overrides (which reorder what is shown)
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_CONTROL_OR_NEWLINE = re.compile("[\x00-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def printable(text: str, *, lines: bool = True) -> str:
    r"""`text` with every control character written as an escape (`\x1b`, `\u202e`), safe on a terminal.

    Args:
        text: any text, typically from a stored state or id.
        lines: keep newlines and tabs (for multi-line values); False escapes them
            too (for ids and table cells, which must stay on one line).
    """
    pattern = _CONTROL if lines else _CONTROL_OR_NEWLINE
    return pattern.sub(_escape_one, text)


def _escape_one(found: re.Match[str]) -> str:
    code = ord(found.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"  # noqa: PLR2004 - one byte or more


PREVIEW_CHARS = 4000
"""How much of a large value the front ends show before cutting it (`show --full` shows all)."""


@dataclass(frozen=True, slots=True)
class Preview:
    """A bounded rendering of a value: its text (cut when long), whether it was cut, and its full size.

    Attributes:
        text: the first `limit` characters (or all of it).
        cut: True when `text` is not the whole rendering.
        size: the length of the whole rendering, in characters.
    """

    text: str
    cut: bool
    size: int

    @property
    def note(self) -> str:
        """`"(showing 4,000 of 52,428,800 characters)"`, or "" when nothing was cut."""
        return f"(showing {len(self.text):,} of {self.size:,} characters)" if self.cut else ""


def preview(text: str, limit: int = PREVIEW_CHARS) -> Preview:
    """The first `limit` characters of `text` (a rendered value), with its full size."""
    if len(text) <= limit:
        return Preview(text, cut=False, size=len(text))
    return Preview(text[:limit], cut=True, size=len(text))


def size_text(size: int) -> str:
    """`512 B`, `4.0 KiB`, `50.0 MiB`: a byte count for people."""
    value = float(size)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":  # noqa: PLR2004 - binary units
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} GiB"  # pragma: no cover - the loop returns
