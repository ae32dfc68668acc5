"""A run's events: logged and handed to the listeners that want them, built only when wanted.

A superstep takes tens of microseconds, so an event nobody listens to, and
that would not be logged, is never built: `wants` says whether anyone takes
an event kind, and routine events skip even the log-level check unless debug
logging was on when the run started.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from actorgraph._events import Custom, Event, Listener, log_entry, log_fields
from actorgraph._log import log, stdlib_logger
from actorgraph._types import Task

__all__ = ["Emitter"]


class Emitter:
    """The listeners of one run, and its logger. Safe to call from any thread."""

    def __init__(self, run_id: str, thread_id: str | None, listeners: Sequence[Listener]) -> None:
        self.run_id = run_id
        self.thread_id = thread_id
        self._listeners = [(fn, getattr(fn, "kinds", None)) for fn in listeners]
        self._everything = any(kinds is None for _, kinds in self._listeners)
        self._kinds: frozenset[type[Event]] = frozenset().union(*(k for _, k in self._listeners if k))
        self._debug = stdlib_logger.isEnabledFor(logging.DEBUG)

    def wants(self, kind: type[Event]) -> bool:
        """Whether an event of `kind` would be used (so frequent events are built only then)."""
        return self._everything or self._debug or kind in self._kinds

    def emit(self, event: Event, *, routine: bool = False) -> None:
        """Log `event` and hand it to the listeners that want it.

        `routine` events are logged at debug level only: no level lookup unless
        debug logging was on when the run started.
        """
        if self._debug or not routine:
            level, name = log_entry(event)
            if stdlib_logger.isEnabledFor(level):
                stdlib_logger.log(level, name, extra=log_fields(event), stacklevel=2)
        for listener, kinds in self._listeners:
            if kinds is None or type(event) in kinds:
                try:
                    listener(event)
                except Exception:  # noqa: BLE001 - a broken listener must not break the run
                    who = repr(listener)
                    log("warning", "listener failed", run_id=self.run_id, listener=who, exc_info=True)

    def custom(self, task: Task, payload: object) -> None:
        """What `ctx.emit(payload)` does in a vertex of this run."""
        self.emit(Custom(self.run_id, self.thread_id, task.step, task.id, task.vertex, payload))
