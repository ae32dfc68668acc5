"""The command line's exit codes, importable without click (the launcher in `actorgraph.cli` uses them)."""

from __future__ import annotations

__all__ = ["ANSWERED", "DONE", "EXIT_CODES", "FAILED", "INTERRUPTED", "STOPPED", "UNBOUND", "USAGE"]

DONE = 0
FAILED = 1
USAGE = 2
INTERRUPTED = 3
ANSWERED = 4  # another answer to the question was taken first: nothing ran with this one
UNBOUND = 5  # `serve` could not listen: the address is in use, not this machine's, or does not resolve
STOPPED = 130  # 128 + SIGINT, what shells report for a program stopped with Ctrl-C

EXIT_CODES = (
    "Exit codes: 0 done; 1 failed (a vertex failed, the graph is invalid, the store failed); "
    "2 usage error (bad arguments, unknown target or thread, bad JSON); 3 interrupted "
    "(waiting for an answer); 4 already answered (someone else's answer was taken first; "
    "yours was not applied); 5 cannot listen (serve: the address is in use or not this machine's); "
    "130 stopped with Ctrl-C (the thread stays resumable)."
)
