"""The two terminals a command writes to: results on stdout, the view and problems on stderr with --json."""

from __future__ import annotations

import json
import os
from typing import Any

from rich.console import Console

from actorgraph._text import as_json

__all__ = ["print_json", "stderr", "stdout"]

_PIPED_WIDTH = 120  # a pipe or a file has no width; ids and questions fit in this one

stdout = Console(soft_wrap=True, highlight=False)
"""Results (and the live view, without --json)."""

stderr = Console(stderr=True, soft_wrap=True, highlight=False)
"""Errors, warnings, and the live view with --json (stdout then holds only JSON)."""

for _console in (stdout, stderr):
    if not _console.is_terminal and "COLUMNS" not in os.environ:
        _console.width = _PIPED_WIDTH


def print_json(record: Any) -> None:
    """One JSON document on stdout (plain text, never coloured or wrapped)."""
    stdout.file.write(json.dumps(as_json(record), indent=2, ensure_ascii=False) + "\n")
    stdout.file.flush()
