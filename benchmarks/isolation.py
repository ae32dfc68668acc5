"""What isolation costs: copying a task's input state (ours vs copy.deepcopy)."""

from __future__ import annotations

import copy
import timeit
from collections.abc import Callable
from typing import Any

from actorgraph._engine.copies import copy_state

__all__ = ["report"]

STATES: dict[str, tuple[Callable[[], Any], int]] = {
    "10 plain keys": (lambda: {f"k{i}": i if i % 2 else f"v{i}" for i in range(10)}, 2000),
    "chat: 20 messages of 3 keys": (
        lambda: {
            "messages": [{"role": "user", "content": f"hello {i}", "id": i} for i in range(20)],
            "step": 3,
        },
        2000,
    ),
    "nested 1,000 items": (lambda: {"rows": [[i, str(i), float(i)] for i in range(1000)]}, 50),
    "5 MiB of records (52,428 dicts), the big-state row's value": (
        lambda: {"n": 0, "big": [{"id": i, "text": f"record {i:08d} " + "r" * 75} for i in range(52_428)]},
        2,
    ),
}
"""Each state's maker (states are made when measured, not at import), and copies per timing."""


def report() -> str:
    """A Markdown table of microseconds per copy (the best of five repeats)."""
    lines = [
        "### Isolation: copying a task's input (µs per copy)",
        "",
        "| state | actorgraph copy | copy.deepcopy |",
        "| --- | ---: | ---: |",
    ]
    for name, (make, runs) in STATES.items():
        state = make()
        ours = min(timeit.repeat(lambda s=state: copy_state(s), number=runs, repeat=5)) / runs * 1e6
        deep = min(timeit.repeat(lambda s=state: copy.deepcopy(s), number=runs, repeat=5)) / runs * 1e6
        lines.append(f"| {name} | {ours:,.1f} | {deep:,.1f} |")
    return "\n".join(lines)
