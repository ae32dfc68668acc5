"""The side-effect ledger of the child processes that crash tests kill: one fsynced line per effect."""

from __future__ import annotations

import os


def note(ledger: str, line: str) -> None:
    """Append `line` to the file `ledger` and make it durable before returning (a kill cannot lose it)."""
    with open(ledger, "a") as f:  # noqa: PTH123 - a plain append is the point
        f.write(line + "\n")
        f.flush()
        os.fsync(f.fileno())
