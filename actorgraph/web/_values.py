"""How the pages show values: a question as text, a table or JSON; choices; JSON answers read back."""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from actorgraph import Interrupt
from actorgraph._errors import ConfigError
from actorgraph._text import as_json, dumps, duration, error_text, question

__all__ = [
    "Shown",
    "ago",
    "as_json",
    "choices_of",
    "error_text",
    "json_text",
    "label",
    "parse_json",
    "pretty",
    "shown",
    "summary",
]


@dataclass(frozen=True, slots=True)
class Shown:
    """A value as a page shows it: `kind` is "text", "table" or "json" (the template escapes it all)."""

    kind: str
    text: str = ""
    rows: tuple[tuple[str, str], ...] = ()


def shown(value: Any) -> Shown:
    """Text for a string, a table for a mapping (choices left out: they are buttons), JSON otherwise."""
    if isinstance(value, str):
        return Shown("text", text=value)
    if isinstance(value, Mapping):
        rows = tuple(
            (str(k), v if isinstance(v, str) else dumps(v)) for k, v in value.items() if k != "choices"
        )
        return Shown("table", rows=rows)
    return Shown("json", text=pretty(value))


def pretty(value: Any) -> str:
    """`value` as indented JSON text (records as objects, the rest of what JSON lacks as text)."""
    return dumps(value, indent=2)


def summary(pending: Interrupt) -> str:
    """The question of an interrupt in one line, for the inbox."""
    return question(pending.value, short=True)


def choices_of(value: Any) -> list[Any] | None:
    """The choices of an interrupt that follows the convention `{"choices": [...], "question": ...}`."""
    if isinstance(value, Mapping) and isinstance(value.get("choices"), list | tuple) and value["choices"]:
        return list(value["choices"])
    return None


def label(choice: Any) -> str:
    """A choice as a button shows it."""
    return choice if isinstance(choice, str) else dumps(choice)


def parse_json(text: str) -> Any:
    """An answer given as JSON text.

    Raises:
        ConfigError: the text is not JSON, saying where (also a ValueError).
    """
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"not JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}") from None


def ago(when: float) -> str:
    """How long ago `when` (wall-clock seconds) was: `12 s`, `4 min`."""
    return duration(time.time() - when)


def json_text(value: Any) -> str:
    """`value` as compact JSON for `status.json` and records."""
    return json.dumps(as_json(value), ensure_ascii=False)
