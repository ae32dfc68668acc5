"""What isolation costs: copying a task's input state (ours vs copy.deepcopy)."""

from __future__ import annotations

import copy
import timeit
from typing import Any

from actorgraph._engine.copies import copy_state

__all__ = ["report"]

STATES: dict[str, Any] = {
    "10 plain keys": {f"k{i}": i if i % 2 else f"v{i}" for i in range(10)},
    "chat: 20 messages of 3 keys": {
        "messages": [{"role": "user", "content": f"hello {i}", "id": i} for i in range(20)],
        "step": 3,
    },
    "nested 1,000 items": {"rows": [[i, str(i), float(i)] for i in range(1000)]},
}


def report() -> str:
    """A Markdown table of microseconds per copy."""
    lines = [
        "### Isolation: copying a task's input (µs per copy)",
        "",
        "| state | actorgraph copy | copy.deepcopy |",
        "| --- | ---: | ---: |",
    ]
    for name, state in STATES.items():
        runs = 2000 if "1,000" not in name else 50
        ours = min(timeit.repeat(lambda s=state: copy_state(s), number=runs, repeat=5)) / runs * 1e6
        deep = min(timeit.repeat(lambda s=state: copy.deepcopy(s), number=runs, repeat=5)) / runs * 1e6
        lines.append(f"| {name} | {ours:,.1f} | {deep:,.1f} |")
    return "\n".join(lines)
