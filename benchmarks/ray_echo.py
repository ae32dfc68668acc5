"""A Ray actor that answers at once, for `ray_backend --overhead`: in a module Ray's workers import by name.

Run as `python -m benchmarks.ray_backend`, that module is `__main__`, which the
workers cannot import (the backend gives them the driver's `sys.path` to import
code from, by module name).
"""

from __future__ import annotations

__all__ = ["Echo"]


class Echo:
    """Started as a partition is (no CPU held, threaded): a bare call, with or without an argument."""

    def ping(self) -> None:
        """Answer nothing."""

    def back(self, blob: bytes) -> bytes:
        """Answer `blob`."""
        return blob
