"""How the pages show values (bounded: a large one is cut, with its size) and read answers back.

Every value comes from a state or an interrupt, so it is shown escaped (the
templates autoescape) and bounded: a question, a table cell, a state or an error
shows at most `PREVIEW_CHARS` characters, says how large the whole is, and
links to the whole as a download.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from actorgraph import Interrupt
from actorgraph._api.text import (
    PREVIEW_CHARS,
    Preview,
    as_json,
    dumps,
    duration,
    error_text,
    preview,
    question,
    size_text,
)
from actorgraph._model.errors import ConfigError

__all__ = [
    "DEPTH",
    "Shown",
    "ago",
    "as_json",
    "choices_of",
    "cut",
    "error_text",
    "json_bytes",
    "label",
    "parse_choice",
    "parse_json",
    "pretty",
    "pretty_cut",
    "shown",
    "size_text",
    "summary",
]

DEPTH = 64  # levels of nesting an answer given as JSON may have
_ROWS = 30  # keys of a mapping shown as a table
_KEY = 200  # characters of a key
_CELL = 1000  # characters of a cell
_CHOICE_DIGITS = 6  # a choice index is a short decimal number


@dataclass(frozen=True, slots=True)
class Shown:
    """A value as a page shows it: `kind` is "text", "table" or "json" (the template escapes it all).

    Attributes:
        kind: how to show it.
        text: the text (cut when long).
        rows: the table's (key, cell) pairs (each cut when long).
        note: what was cut ("" when nothing): the page offers the whole as a download then.
    """

    kind: str
    text: str = ""
    rows: tuple[tuple[str, str], ...] = ()
    note: str = ""


def cut(text: str, limit: int = PREVIEW_CHARS) -> Preview:
    """The first `limit` characters of `text`, with its size (`.note` says what was cut)."""
    return preview(text, limit)


def _json_preview(value: Any, limit: int) -> Preview:
    """`value` as indented JSON, cut at `limit` characters, its size that of its compact JSON."""
    plain = as_json(value)
    compact = json.dumps(plain, ensure_ascii=False)
    if len(compact) <= limit:
        text = json.dumps(plain, indent=2, ensure_ascii=False)
        return preview(text, max(limit, len(text)))  # indenting a small value never cuts it
    encoder = json.JSONEncoder(indent=2, ensure_ascii=False)
    head: list[str] = []
    taken = 0
    for chunk in encoder.iterencode(plain):  # stops early: never the whole indented text
        head.append(chunk)
        taken += len(chunk)
        if taken >= limit:
            break
    return Preview("".join(head)[:limit], cut=True, size=len(compact))


def _note(shown: Preview) -> str:
    return f"showing {len(shown.text):,} of {shown.size:,} characters" if shown.cut else ""


def shown(value: Any) -> Shown:
    """Text for a string, a table for a mapping (choices left out: they are buttons), JSON otherwise."""
    if isinstance(value, str):
        text = cut(value)
        return Shown("text", text=text.text, note=_note(text))
    if isinstance(value, Mapping):
        rows, notes = [], []
        items = [(k, v) for k, v in value.items() if k != "choices"]
        for key, cell in items[:_ROWS]:
            name = cut(str(key), _KEY).text
            text = cut(cell, _CELL) if isinstance(cell, str) else _json_preview(cell, _CELL)
            rows.append((name, text.text + (" …" if text.cut else "")))
            notes += [f"{name}: {_note(text)}"] if text.cut else []
        if len(items) > _ROWS:
            notes.append(f"showing {_ROWS} of {len(items):,} keys")
        return Shown("table", rows=tuple(rows), note="; ".join(notes))
    text = _json_preview(value, PREVIEW_CHARS)
    return Shown("json", text=text.text, note=_note(text))


def pretty(value: Any) -> str:
    """`value` as indented JSON text (records as objects, the rest of what JSON lacks as text)."""
    return dumps(value, indent=2)


def pretty_cut(value: Any, limit: int = PREVIEW_CHARS) -> Preview:
    """`value` as indented JSON, at most `limit` characters of it (a state, an answer)."""
    return _json_preview(value, limit)


def summary(pending: Interrupt) -> str:
    """The question of an interrupt in one line, for the inbox."""
    return question(pending.value, short=True)


def choices_of(value: Any) -> list[Any] | None:
    """The choices of an interrupt that follows the convention `{"choices": [...], "question": ...}`."""
    if isinstance(value, Mapping) and isinstance(value.get("choices"), list | tuple) and value["choices"]:
        return list(value["choices"])
    return None


def label(choice: Any) -> str:
    """A choice as a button shows it (cut when long)."""
    return cut(choice if isinstance(choice, str) else dumps(choice), _CELL).text


def parse_choice(given: str, offered: int) -> int:
    """The index of the choice a form names, among `offered`.

    Raises:
        ConfigError: not a short decimal number in ASCII digits, or no such choice (also a ValueError).
    """
    if not (given.isascii() and given.isdigit() and len(given) <= _CHOICE_DIGITS) or int(given) >= offered:
        msg = f"no choice {cut(given, 40).text!r}: {offered} are offered, numbered from 0"
        raise ConfigError(msg)
    return int(given)


def _depth(text: str) -> int:
    """How deeply the arrays and objects of JSON text nest (strings skipped), without parsing it."""
    depth = deepest = 0
    in_string = escaped = False
    for char in text:
        if in_string:
            escaped, in_string = (False, True) if escaped else (char == "\\", char != '"')
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth -= 1
    return deepest


def _no_constant(name: str) -> Any:
    msg = f"{name} is not a JSON number"
    raise ConfigError(msg)  # a ValueError: parse_json reports it


def parse_json(text: str) -> Any:
    """An answer given as JSON text (nested at most `DEPTH` levels, numbers finite).

    Raises:
        ConfigError: the text is not JSON, saying where, or is nested too deeply (also a ValueError).
    """
    deepest = _depth(text)
    if deepest > DEPTH:
        msg = f"the JSON is nested {deepest} levels deep; an answer may nest at most {DEPTH}"
        raise ConfigError(msg)
    try:
        return json.loads(text, parse_constant=_no_constant)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"not JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}") from None
    except (ValueError, RecursionError) as exc:  # a number of 5,000 digits, NaN
        raise ConfigError(f"not JSON this inbox takes: {cut(str(exc), 200).text}") from None


def ago(when: object) -> str:
    """How long ago `when` (stored wall-clock seconds) was: `12 s`, `4 min`; `?` for a forged time."""
    if isinstance(when, int | float) and not isinstance(when, bool) and math.isfinite(when):
        return duration(time.time() - when)
    return "?"


def json_bytes(value: Any) -> bytes:
    """`value` as compact JSON bytes (for downloads and `status.json`; NaN written as NaN, never a 500)."""
    return json.dumps(as_json(value), ensure_ascii=False, separators=(",", ":")).encode()
