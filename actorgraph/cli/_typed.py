"""Values typed on the command line (`--input`, an answer's VALUE): JSON, read with bounds.

A value nested deeper than `MAX_DEPTH` is refused as a usage error (exit 2):
Python's JSON reader would raise `RecursionError` for 100,000 nested `[`, and a
state nested a few hundred levels deep could not be stored anyway.
"""

from __future__ import annotations

import json
from typing import Any

from actorgraph.cli._exits import CommandError

__all__ = ["MAX_DEPTH", "depth", "parse_json", "parse_value"]

MAX_DEPTH = 200
"""The deepest nesting of lists and objects a typed value may have."""


def depth(value: Any) -> int:
    """How deeply `value`'s lists and objects nest (0 for a number or a string), without recursion."""
    deepest, stack = 0, [(value, 0)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict):
            stack.extend((v, level + 1) for v in item.values())
        elif isinstance(item, list):
            stack.extend((v, level + 1) for v in item)
        else:
            continue
        deepest = max(deepest, level + 1)
    return deepest


def _too_deep(where: str) -> CommandError:
    return CommandError(f"{where} nests lists or objects more than {MAX_DEPTH} levels deep; flatten it")


def parse_json(text: str, where: str) -> Any:
    """`text` read as JSON, or a usage error naming `where` (not JSON, or nested too deeply).

    Raises:
        CommandError: exit 2, one line.
    """
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise CommandError(f"{where} is not JSON: {exc}") from None
    except RecursionError:
        raise _too_deep(where) from None
    if depth(value) > MAX_DEPTH:
        raise _too_deep(where)
    return value


def parse_value(text: str) -> Any:
    """An answer's VALUE: JSON if it parses (`42`, `true`, `{"ok": 1}`), else the text itself.

    Raises:
        CommandError: VALUE is JSON nested too deeply (exit 2).
    """
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        return text
    except RecursionError:
        raise _too_deep("VALUE") from None
    if depth(value) > MAX_DEPTH:
        raise _too_deep("VALUE")
    return value
