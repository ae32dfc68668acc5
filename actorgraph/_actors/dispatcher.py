"""Pooled actors: many pykka actors on a few scheduler threads, as Erlang runs many processes per core.

A `ThreadingActor` owns a thread that sleeps on its inbox, so every branch of
a fan-out wakes a thread of its own, and a thousand vertices need a thousand
threads. A `PooledActor` owns no thread: a message put in its mailbox makes it
*ready*, and one of the dispatcher's scheduler threads runs a slice of it (up
to `SLICE` messages, through pykka's own handling) and moves on to the next
ready actor. One scheduler per core does the work; a fan-out's branches are
taken in turn by the threads already awake.

Vertex code may block (I/O, `time.sleep`). The dispatcher watches for that: when
actors wait and every scheduler has been inside one slice for longer than
`BLOCKED_AFTER`, it starts schedulers for the waiting actors (up to `MOST`);
those past the per-core count retire after `IDLE_RETIRE` seconds without work.

One dispatcher serves the whole process (`shared_dispatcher()`); each pool that
uses it holds a claim (`acquire`/`release`), and when the last claim goes its
threads end, so a closed graph leaves no thread behind.
"""

from __future__ import annotations

import os
import queue
import sys
import threading
import time
from collections import deque
from typing import Any

import pykka
from pykka import ActorRegistry

__all__ = ["ActorEnd", "Dispatcher", "PooledActor", "shared_dispatcher"]

SLICE = 64  # messages one actor handles before the next ready actor gets its turn
BLOCKED_AFTER = 0.002  # seconds inside one slice after which a scheduler counts as blocked
IDLE_RETIRE = 1.0  # seconds an extra scheduler waits for work before it ends
MOST = 1024  # scheduler threads at most


class _Scheduler:
    """One scheduler thread, what it runs now (read by other threads), and where an actor is handed to it."""

    def __init__(self) -> None:
        self.thread: threading.Thread | None = None
        self.since: float | None = None  # when the current slice began (None: idle)
        self.actor: PooledActor | None = None
        self.handed: queue.SimpleQueue[PooledActor | None] = queue.SimpleQueue()  # None: end

    @property
    def busy(self) -> bool:
        """Never reported: the actor it runs is (close() names the vertex, not the scheduler)."""
        return False


class Dispatcher:
    """Runs ready pooled actors on a few threads; starts more while actors wait behind blocked ones.

    An actor made ready while a scheduler is idle is handed to that scheduler
    directly (one C-level queue put, the same cost as waking a thread actor);
    otherwise it waits in the ready queue, taken by the next scheduler to finish
    its slice.
    """

    def __init__(self, cores: int | None = None) -> None:
        """A dispatcher with no thread yet (they start with the first ready actor)."""
        self.cores = max(2, cores or os.cpu_count() or 2)
        self._lock = threading.Lock()
        self._ready: deque[PooledActor] = deque()
        self._schedulers: list[_Scheduler] = []
        self._idle: list[_Scheduler] = []  # waiting on their `handed` queues, the last to wait on top
        self._claims = 0
        self._closing = False
        self._watch = threading.Event()  # set when actors wait and no scheduler is idle
        self._watcher: threading.Thread | None = None
        self._count = 0

    def acquire(self) -> None:
        """Claim the dispatcher for a pool (it keeps its threads while any claim holds)."""
        with self._lock:
            self._claims += 1
            self._closing = False

    def release(self) -> list[_Scheduler]:
        """Give a claim back; when it was the last, the threads end once the ready actors ran.

        Returns:
            The schedulers whose threads the caller may wait for (none while other claims hold).
        """
        with self._lock:
            self._claims -= 1
            if self._claims > 0:
                return []
            self._closing = True
            idle, self._idle = self._idle, []
            schedulers = list(self._schedulers)
        for scheduler in idle:
            scheduler.handed.put(None)
        self._watch.set()
        return schedulers

    def schedule(self, actor: PooledActor) -> None:
        """Make `actor` ready: hand it to an idle scheduler, or queue it (starting one per core at most)."""
        with self._lock:
            if self._idle:
                scheduler = self._idle.pop()
            else:
                self._ready.append(actor)
                if len(self._schedulers) < self.cores:
                    self._start()
                else:
                    self._watch_blocked()
                return
        scheduler.handed.put(actor)

    def _watch_blocked(self) -> None:
        """Have the watcher look for blocked schedulers (with `_lock` held)."""
        self._watch.set()
        if self._watcher is None:
            self._watcher = threading.Thread(target=self._watching, name="actorgraph-dispatch-watch")
            self._watcher.daemon = True
            self._watcher.start()

    def _start(self) -> None:
        """Start one scheduler thread (with `_lock` held)."""
        scheduler = _Scheduler()
        self._count += 1
        thread = threading.Thread(target=self._run, args=(scheduler,), name=f"actorgraph-sched-{self._count}")
        thread.daemon = True
        scheduler.thread = thread
        self._schedulers.append(scheduler)
        thread.start()

    def _run(self, me: _Scheduler) -> None:
        while (actor := self._next(me)) is not None:
            me.actor, me.since = actor, time.monotonic()
            try:
                actor.run_slice()
            finally:
                me.actor, me.since = None, None

    def _next(self, me: _Scheduler) -> PooledActor | None:
        """The next ready actor, waiting to be handed one; None when this scheduler ends."""
        with self._lock:
            if self._ready:
                return self._ready.popleft()
            if self._closing:
                self._schedulers.remove(me)
                return None
            self._idle.append(me)
            extra = len(self._schedulers) > self.cores
        while True:
            try:
                actor = me.handed.get(timeout=IDLE_RETIRE if extra else None)
            except queue.Empty:
                with self._lock:
                    if me in self._idle and len(self._schedulers) > self.cores:
                        self._idle.remove(me)
                        self._schedulers.remove(me)
                        return None
                    extra = me in self._idle and len(self._schedulers) > self.cores
                continue
            if actor is None:  # the last claim was released
                with self._lock:
                    if me in self._schedulers:
                        self._schedulers.remove(me)
                return None
            return actor

    def _watching(self) -> None:
        """Start schedulers for ready actors while every scheduler is stuck in a slice."""
        while True:
            self._watch.wait()
            time.sleep(BLOCKED_AFTER)
            with self._lock:
                if self._closing and not self._ready:
                    self._watcher = None
                    self._watch.clear()
                    return
                if not self._ready or self._idle:
                    self._watch.clear()
                    continue
                now = time.monotonic()
                blocked = all(
                    s.since is not None and now - s.since >= BLOCKED_AFTER for s in self._schedulers
                )
                if blocked:
                    for _ in range(min(len(self._ready), MOST - len(self._schedulers))):
                        self._start()


_SHARED: Dispatcher | None = None
_SHARED_LOCK = threading.Lock()


def shared_dispatcher() -> Dispatcher:
    """The process's dispatcher (one scheduler per core, more while vertex code blocks)."""
    global _SHARED  # noqa: PLW0603 - one per process, made on first use
    with _SHARED_LOCK:
        if _SHARED is None:
            _SHARED = Dispatcher()
        return _SHARED


class ActorEnd:
    """The end of a pooled actor, joinable as a thread's (`close()` waits for it)."""

    def __init__(self) -> None:
        self.ended = threading.Event()
        self.ident: int | None = None  # the scheduler thread that ran it last

    def join(self, timeout: float | None = None) -> None:
        """Wait up to `timeout` seconds for the actor to have stopped."""
        self.ended.wait(timeout)

    def is_alive(self) -> bool:
        """True until the actor stopped."""
        return not self.ended.is_set()


class _Mailbox:
    """A pooled actor's inbox: putting a message makes the actor ready (pykka's `ActorInbox`)."""

    def __init__(self, actor: PooledActor) -> None:
        self._actor = actor
        self._messages: deque[Any] = deque()

    def put(self, envelope: Any, block: bool = True, timeout: float | None = None) -> None:  # noqa: ARG002 - pykka's signature
        self._messages.append(envelope)
        self._actor.wake()

    def get(self, block: bool = True, timeout: float | None = None) -> Any:  # noqa: ARG002 - pykka's signature
        return self._messages.popleft()

    def take(self) -> Any | None:
        """The next message, or None."""
        try:
            return self._messages.popleft()
        except IndexError:
            return None

    def empty(self) -> bool:
        return not self._messages


class PooledActor(pykka.Actor):
    """A pykka actor without a thread of its own: its messages run on the dispatcher's schedulers."""

    def __init__(self, dispatcher: Dispatcher) -> None:
        """An actor for `dispatcher` (call before pykka's `__init__`, which makes the mailbox)."""
        self.dispatcher = dispatcher
        self._wake_lock = threading.Lock()
        self._scheduled = False
        self._set_up = False
        self._torn_down = False
        self.end = ActorEnd()
        super().__init__()

    def _create_actor_inbox(self) -> Any:  # type: ignore[override] # pykka's hook: ours needs the actor
        return _Mailbox(self)

    @staticmethod
    def _create_future() -> pykka.Future[Any]:
        return pykka.ThreadingFuture()

    def _start_actor_loop(self) -> None:
        self.wake()  # the first slice runs on_start

    def describe(self) -> str:
        """What this actor is, for close()'s messages."""
        return type(self).__name__

    def wake(self) -> None:
        """Make the actor ready, unless it already is."""
        with self._wake_lock:
            if self._scheduled:
                return
            self._scheduled = True
        self.dispatcher.schedule(self)

    def run_slice(self) -> None:
        """On a scheduler: handle up to `SLICE` messages, then give the thread back."""
        self.end.ident = threading.get_ident()
        if not self._set_up:
            self._set_up = True
            self._actor_loop_setup()
        inbox: _Mailbox = self.actor_inbox  # type: ignore[assignment]
        for _ in range(SLICE):
            if self.actor_stopped.is_set():
                break
            envelope = inbox.take()
            if envelope is None:
                break
            self._handle(envelope)
        if self.actor_stopped.is_set():
            if not self._torn_down:
                self._torn_down = True
                self._actor_loop_teardown()
                self.end.ended.set()
            return
        with self._wake_lock:
            if inbox.empty():
                self._scheduled = False
                return
        self.dispatcher.schedule(self)  # more to do: the back of the line, so others get their turn

    def _handle(self, envelope: Any) -> None:
        """One message, as pykka's own loop handles it (replies, failures, a BaseException stops all)."""
        try:
            response = self._handle_receive(envelope.message)
            if envelope.reply_to is not None:
                envelope.reply_to.set(response)
        except Exception:  # noqa: BLE001 - pykka's rule: the asker gets it, else on_failure
            if envelope.reply_to is not None:
                envelope.reply_to.set_exception()
            else:
                self._handle_failure(*sys.exc_info())
                try:
                    self.on_failure(*sys.exc_info())
                except Exception:  # noqa: BLE001
                    self._handle_failure(*sys.exc_info())
        except BaseException:  # noqa: BLE001 - pykka's rule: stop every actor
            self._stop()
            ActorRegistry.stop_all()
