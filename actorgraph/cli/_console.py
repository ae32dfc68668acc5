"""The two terminals a command writes to: results on stdout, the view and problems on stderr with --json.

What a command prints comes mostly from stored data it did not write (states,
questions, errors, thread ids, vertex and graph names), so both consoles print
text as text: no Rich markup or emoji codes are read in it (a vertex named
`[bold]x[/]` is shown as written), and control characters are escaped
(`printable`), so no value can move the cursor or rewrite the terminal. Styled
parts are built with `styled`, which escapes its text the same way.
"""

from __future__ import annotations

import json
import os
import re
from typing import Any

from rich.console import Console
from rich.text import Text

from actorgraph._api.text import as_json, printable

__all__ = ["SafeConsole", "cell", "print_json", "safe", "stderr", "stdout", "styled"]

_PIPED_WIDTH = 120  # a pipe or a file has no width; ids and questions fit in this one
_SURROGATE = re.compile("[\ud800-\udfff]")  # a forged string may hold one; no terminal encoding takes it


def safe(text: str, *, lines: bool = True) -> str:
    """`text` fit for a terminal: control characters (and newlines unless `lines`) escaped (`printable`)."""
    return _SURROGATE.sub(lambda found: f"\\u{ord(found.group()):04x}", printable(text, lines=lines))


class SafeConsole(Console):
    """A Rich console that never reads markup or emoji codes, and escapes control characters in text."""

    def print(self, *objects: Any, **options: Any) -> None:
        """Print like `Console.print`; a `str` is printed as it reads, its control characters escaped."""
        options.setdefault("highlight", False)
        super().print(*(safe(o) if isinstance(o, str) else o for o in objects), **options)


def _console(*, to_stderr: bool) -> SafeConsole:
    console = SafeConsole(stderr=to_stderr, soft_wrap=True, highlight=False, markup=False, emoji=False)
    if not console.is_terminal and "COLUMNS" not in os.environ:
        console.width = _PIPED_WIDTH
    return console


stdout = _console(to_stderr=False)
"""Results (and the live view, without --json)."""

stderr = _console(to_stderr=True)
"""Errors, warnings, and the live view with --json (stdout then holds only JSON)."""


def styled(*parts: str | tuple[str, str]) -> Text:
    """One line of text: plain parts and `(text, style)` parts, every one made printable."""
    line = Text()
    for part in parts:
        text, style = (part, "") if isinstance(part, str) else part
        line.append(safe(text), style=style)
    return line


def cell(value: object) -> str:
    """A table cell: a stored value of any type as one line of text, its control characters escaped."""
    return safe(value if isinstance(value, str) else str(value), lines=False)


# json.dumps escapes C0 controls; these it writes as they are (C1 controls, DEL, bidi overrides)
_RAW_IN_JSON = re.compile("[\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def print_json(record: Any) -> None:
    r"""One JSON document on stdout (plain text, never coloured or wrapped), every control character escaped.

    Characters JSON allows raw but a terminal obeys are written as `\uXXXX` escapes,
    which decode to the same strings.
    """
    text = json.dumps(as_json(record), indent=2, ensure_ascii=False)
    text = _RAW_IN_JSON.sub(lambda found: f"\\u{ord(found.group()):04x}", text)
    stdout.file.write(text + "\n")
    stdout.file.flush()
