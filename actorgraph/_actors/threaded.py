"""Actors that own a thread (the thread design): pykka's `ThreadingActor` with a C inbox.

The coordinators and vertex actors of `compile(actors="threads")` share this:
a daemon thread (a forgotten `close()` must not keep the interpreter alive), a
`SimpleQueue` inbox instead of pykka's `queue.Queue`, and the thread remembered
on start so `close()` can wait for it to end.
"""

from __future__ import annotations

import queue
import threading
from typing import Any

import pykka

from actorgraph._actors.bounded import Joinable

__all__ = ["ThreadActor"]


class ThreadActor(pykka.ThreadingActor):
    """A pykka actor on a daemon thread of its own, with a C queue for an inbox."""

    use_daemon_thread = True
    thread: Joinable | None = None  # its thread, once started

    @staticmethod
    def _create_actor_inbox() -> Any:  # pykka's hook for actor implementors: a C queue is faster
        return queue.SimpleQueue()

    def on_start(self) -> None:
        """Remember the thread, so `close()` can wait for it to end."""
        self.thread = threading.current_thread()
