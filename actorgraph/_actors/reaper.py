"""The reaper: the thread that does what a finalizer must not do where the collector runs it.

A graph (or a `@task`'s graph) dropped without `close()` is closed once the
garbage collector frees it. A collection happens on whichever thread allocates
at the time, inside whatever lock that thread holds (a vertex pool's, the live
seats' in `live.adopt`): a finalizer that closed the graph there would take a
lock the thread already holds, or wait for a thread that waits for it, and the
process would hang for good. So a finalizer here only puts a token on a C
`SimpleQueue` (reentrant, so safe inside a collection: no lock, no call into
the runtime), and this thread, which holds nothing, does the work.

The thread runs while a registration waits (a graph not closed yet) and ends
when none does: a process that closes its graphs keeps no thread for this. At
exit, what is still registered runs on the main thread, as `weakref.finalize`
would have run it.

Code that runs at exit of a frame rather than in a finalizer (a stream's
`finally`) can be run by a collection too: `collecting()` says so, and `later`
hands its work here.
"""

from __future__ import annotations

import atexit
import gc
import itertools
import os
import queue
import threading
import weakref
from collections.abc import Callable
from typing import Any

from actorgraph._actors.log import log

__all__ = ["THREAD_NAME", "Reaping", "collecting", "later", "pending", "settle", "when_collected"]

THREAD_NAME = "actorgraph-reaper"

Work = Callable[[], object]

_QUEUE: queue.SimpleQueue[int | Work | None] = queue.SimpleQueue()  # tokens, works, or None: look again
_WORK: dict[int, Work] = {}  # token -> what to do once its object is collected (or at exit)
_GUARD = threading.Lock()  # _WORK and _reaper; never taken by a finalizer
_TOKENS = itertools.count()
_reaper: threading.Thread | None = None


class Reaping:
    """One registration of `when_collected`: `cancel()` it when the work was done by hand."""

    __slots__ = ("_finalizer", "_token")

    def __init__(self, finalizer: weakref.finalize, token: int) -> None:  # type: ignore[type-arg]
        self._finalizer = finalizer
        self._token = token

    def cancel(self) -> None:
        """Nothing is to be done when the object is collected (it was closed by hand)."""
        self._finalizer.detach()
        with _GUARD:
            _WORK.pop(self._token, None)
            if not _WORK and _reaper is not None:
                _QUEUE.put(None)  # it ends, nothing being left to wait for


def when_collected(obj: object, work: Work) -> Reaping:
    """Run `work()` on the reaper thread once `obj` is collected (or at exit, on the main thread).

    `work` must not keep `obj` alive. Call this where no finalizer runs (it takes a lock).
    """
    token = next(_TOKENS)
    with _GUARD:
        _WORK[token] = work
        _start()
    finalizer = weakref.finalize(obj, _collected, token)
    finalizer.atexit = False  # `_at_exit` runs it, once, with the ones already collected
    return Reaping(finalizer, token)


def later(work: Work) -> None:
    """Run `work()` on the reaper thread soon: safe inside a collection.

    The thread runs while a graph is open, which is when a run's work needs doing
    (a closed graph's runs are settled already); with none open, `work` waits for
    the next one.
    """
    _QUEUE.put(work)


def settle(timeout: float = 10.0) -> bool:
    """Wait until the work of every object collected so far is done (on this thread, if none runs).

    Call it where a caller waits anyway and holds no lock of the package: a
    `close()` that must leave no actor behind, the end of a test.

    Returns:
        False when the reaper was still busy after `timeout` seconds.
    """
    if threading.current_thread().name == THREAD_NAME:
        return True  # the reaper's own work (a close that closes more): it never waits for itself
    done = threading.Event()
    with _GUARD:
        running = _reaper is not None
        if running:  # it does the queue in order: once `done` is set, all before it is done
            _QUEUE.put(done.set)
    if running:
        return done.wait(timeout)
    while True:  # no reaper, so nothing waits to be collected: what is queued is late (or stale)
        try:
            item = _QUEUE.get_nowait()
        except queue.Empty:
            return True
        _do(item)


def pending() -> int:
    """How many registrations wait for their objects to be collected."""
    with _GUARD:
        return len(_WORK)


def _collected(token: int) -> None:
    """The finalizer: the collecting thread only queues the token (no lock, no runtime)."""
    _QUEUE.put(token)


def _start() -> None:
    """Start the thread if none runs (with `_GUARD` held)."""
    global _reaper  # noqa: PLW0603 - one reaper per process, started on demand
    if _reaper is None:
        _reaper = threading.Thread(target=_reaping, name=THREAD_NAME, daemon=True)
        _reaper.start()


def _reaping() -> None:
    """Do each collected object's work; end when no registration is left."""
    global _reaper  # noqa: PLW0603 - it lets go of itself
    while True:
        _do(_QUEUE.get())
        with _GUARD:
            if not _WORK and _QUEUE.empty():
                _reaper = None
                return


def _do(item: int | Work | None) -> None:
    """Do what a queued item says: a collected object's work (by its token), or a work."""
    if isinstance(item, int):
        with _GUARD:
            work = _WORK.pop(item, None)  # None: cancelled meanwhile, or run at exit
        if work is not None:
            _run(work)
    elif item is not None:
        _run(item)


def _run(work: Work) -> None:
    try:
        work()
    except Exception:  # noqa: BLE001 - one failed close must not stop the others
        log("warning", "closing what was collected failed", work=repr(work), exc_info=True)


@atexit.register
def _at_exit() -> None:
    """Run what is still registered (objects alive at exit, or collected and not yet closed), newest first."""
    with _GUARD:
        works = [_WORK.pop(token) for token in sorted(_WORK, reverse=True)]
    for work in works:
        _run(work)


def _forked() -> None:
    """A forked child has none of its parent's threads: it starts afresh (its graphs' actors are gone)."""
    global _GUARD, _QUEUE, _reaper
    _GUARD, _QUEUE, _reaper = threading.Lock(), queue.SimpleQueue(), None
    _WORK.clear()


os.register_at_fork(after_in_child=_forked)

# -- whether this thread is inside a collection -----------------------------------------------

_here = threading.local()


def _note(phase: str, _info: dict[str, Any]) -> None:
    """The collector's callback: only a flag of this thread (no lock, no runtime)."""
    _here.collecting = phase == "start"


gc.callbacks.append(_note)


def collecting() -> bool:
    """Whether this thread is inside a garbage collection (a generator's `finally` run by it, say)."""
    return bool(getattr(_here, "collecting", False))
