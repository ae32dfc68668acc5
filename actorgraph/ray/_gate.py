"""The gate of the driver's calls into Ray: open while the backend is, shut before Ray is let go.

Every Ray call of the driver's tasks (a call to a partition, a state put in the
object store, a cancel, a partition asked whether it is up) passes it. Once
the backend is closed, or Ray was shut down under it (`ray.shutdown()` in this
process), the gate refuses: the call is never made, for Ray's API would start a
new local Ray by itself (its auto-init) rather than fail. `shut()` waits for
the calls under way, so none is made after the backend lets Ray go.
"""

from __future__ import annotations

import threading
import time
from typing import Any

__all__ = ["Gate"]


class Gate:
    """Counts the Ray calls under way; refuses new ones once shut or once Ray is gone."""

    def __init__(self, ray: Any) -> None:
        """An open gate in front of `ray` (the module)."""
        self._ray = ray
        self._lock = threading.Lock()
        self._inside = 0
        self._left = threading.Condition(self._lock)
        self.shut_down = False

    def enter(self) -> bool:
        """True if a call may be made now (then `leave()` after it); False once shut or Ray is gone."""
        with self._lock:
            if self.shut_down or not self._ray.is_initialized():
                return False
            self._inside += 1
            return True

    def leave(self) -> None:
        """A call let in by `enter()` is made."""
        with self._lock:
            self._inside -= 1
            if self._inside == 0:
                self._left.notify_all()

    def shut(self, wait: float) -> bool:
        """Refuse every new call; wait up to `wait` seconds for those under way. True if none is left."""
        deadline = time.monotonic() + wait
        with self._lock:
            self.shut_down = True
            while self._inside and (left := deadline - time.monotonic()) > 0:
                self._left.wait(left)
            return self._inside == 0
