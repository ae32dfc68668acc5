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

An actor made ready *by an actor running on a scheduler* (a coordinator
ordering a vertex, a vertex reporting to its coordinator) goes into that
scheduler's `runnext` slot and runs there as soon as the current slice ends:
a hand-off between two pooled actors wakes no thread. Should the slice go on
for longer than `BLOCKED_AFTER` (the code blocks), the watcher moves the waiting
actor to another scheduler; and while other actors wait in the ready queue, the
slot's actor queues behind them, so two actors handing work to each other
cannot starve the rest.

One dispatcher serves the whole process (`shared_dispatcher()`); each pool that
uses it holds a claim (`acquire`/`release`), and when the last claim goes its
threads end, so a closed graph leaves no thread behind.
"""

from __future__ import annotations

import contextlib
import os
import queue
import threading
import time
from collections import deque

from actorgraph._actors.pooled import ActorEnd, PooledActor

__all__ = ["ActorEnd", "Dispatcher", "PooledActor", "running_actor", "shared_dispatcher"]

BLOCKED_AFTER = 0.002  # seconds inside one slice after which a scheduler counts as blocked
BUSY_SHARE = 0.2  # a slice whose thread used at least this share of a watcher interval's CPU is computing
IDLE_RETIRE = 1.0  # seconds an extra scheduler waits for work before it ends
MOST = 1024  # scheduler threads at most
GROW = 64  # schedulers the watcher may add in one interval (or as many as there are, if more)

_local = threading.local()  # on a scheduler thread: `scheduler`, the _Scheduler it is


def running_actor() -> PooledActor | None:
    """The pooled actor whose slice the calling thread is running now, if any."""
    me: _Scheduler | None = getattr(_local, "scheduler", None)
    return None if me is None else me.actor


class _Scheduler:
    """One scheduler thread, what it runs now (read by other threads), and where an actor is handed to it."""

    def __init__(self) -> None:
        self.thread: threading.Thread | None = None
        self.since: float | None = None  # when the current slice began (None: idle)
        self.actor: PooledActor | None = None
        self.runnext: PooledActor | None = None  # made ready by this scheduler's slice: runs next here
        self.clock: int | None = None  # the thread's CPU-time clock, when the platform has one
        self.seen: tuple[float, float, float] | None = None  # the watcher's last look: since, wall, CPU
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

    def __init__(self, cores: int | None = None, *, blocked_after: float = BLOCKED_AFTER) -> None:
        """A dispatcher with no thread yet (they start with the first ready actor).

        Args:
            cores: schedulers kept while there is work (at least 2; default: the CPU count).
            blocked_after: seconds inside one slice after which a scheduler counts as blocked.
        """
        self.cores = max(2, cores or os.cpu_count() or 2)
        self.blocked_after = blocked_after
        self._lock = threading.Lock()
        self._ready: deque[PooledActor] = deque()
        self._schedulers: list[_Scheduler] = []
        self._idle: list[_Scheduler] = []  # waiting on their `handed` queues, the last to wait on top
        self._claims = 0
        self._closing = False
        self._watch = threading.Event()  # set when actors wait and no scheduler is idle
        self._released = threading.Event()  # set while no claim holds (the watcher then ends at once)
        self._watcher: threading.Thread | None = None
        self._count = 0

    def acquire(self) -> None:
        """Claim the dispatcher for a pool (it keeps its threads while any claim holds)."""
        with self._lock:
            self._claims += 1
            self._closing = False
            self._released.clear()

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
            self._released.set()
            idle, self._idle = self._idle, []
            schedulers = list(self._schedulers)
        for scheduler in idle:
            scheduler.handed.put(None)
        self._watch.set()
        return schedulers

    def schedule(self, actor: PooledActor) -> None:
        """Make `actor` ready: next on this scheduler, to an idle one, or queued (one per core at most)."""
        me: _Scheduler | None = getattr(_local, "scheduler", None)
        with self._lock:
            if me is not None and me.runnext is None and me.actor is not actor and not self._closing:
                me.runnext = actor  # runs when the current slice ends; the watcher moves it if that blocks
                self._watch_blocked()
                return
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

    def blocking(self) -> None:
        """The calling slice is about to wait for long (a vertex waiting for its answer).

        Its `runnext` actor goes to another scheduler now rather than after the
        watcher's delay, and a scheduler starts when none is idle, as the
        watcher would for a blocked one.
        """
        me: _Scheduler | None = getattr(_local, "scheduler", None)
        if me is None:
            return
        with self._lock:
            actor, me.runnext = me.runnext, None
            if actor is None:
                return
            if not self._idle:
                self._ready.append(actor)
                if len(self._schedulers) < MOST:
                    self._start()
                return
            scheduler = self._idle.pop()
        scheduler.handed.put(actor)

    def _watch_blocked(self) -> None:
        """Have the watcher look for blocked schedulers (with `_lock` held)."""
        if not self._watch.is_set():  # the watcher clears it under `_lock` too: no wake-up is lost
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
        _local.scheduler = me
        with contextlib.suppress(AttributeError, OSError):  # no per-thread CPU clock: judged by time alone
            me.clock = time.pthread_getcpuclockid(threading.get_ident())
        while self._slice(me):
            pass

    def _slice(self, me: _Scheduler) -> bool:
        """Run a slice of the next ready actor; False when this scheduler ends.

        The actor is this call's local only: a scheduler waiting for work keeps
        nothing alive (a closed graph's last actor would keep its pools, its
        vertex functions and whatever they close over, a `@task` made in a
        function whose graph closes only once it is collected).
        """
        actor = self._next(me)
        if actor is None:
            return False
        me.actor, me.since = actor, time.monotonic()
        try:
            actor.run_slice()
        finally:
            me.actor, me.since = None, None
        return True

    def _next(self, me: _Scheduler) -> PooledActor | None:
        """The next ready actor, waiting to be handed one; None when this scheduler ends."""
        with self._lock:
            if me.runnext is not None:
                following, me.runnext = me.runnext, None
                if not self._ready:
                    return following
                self._ready.append(following)  # others waited first
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
            self._released.wait(self.blocked_after)  # cut short when the last claim goes
            with self._lock:
                now = time.monotonic()
                waiting = self._rescue(now)
                if self._closing and not self._ready and not waiting:
                    self._watcher = None
                    self._watch.clear()
                    return
                if not self._ready or self._idle:
                    if not waiting:
                        self._watch.clear()
                    continue
                blocked = [self._blocked(s, now) for s in self._schedulers]  # looks at each (CPU readings)
                if all(blocked):  # a bounded step per interval: a misjudged one cannot add hundreds
                    step = max(len(self._schedulers), GROW)
                    for _ in range(min(len(self._ready), step, MOST - len(self._schedulers))):
                        self._start()

    def _blocked(self, scheduler: _Scheduler, now: float) -> bool:
        """Whether `scheduler` waits inside a slice (with `_lock` held): long in it, and not computing.

        A slice that runs Python code for a while (a coordinator dispatching
        300 branches) is not blocked: more threads would only wait for the GIL.
        Where threads have CPU clocks, a slice counts as blocked when its thread
        used less than `BUSY_SHARE` of the watcher's last interval in CPU time
        (judged from the second look at a slice); elsewhere, when it has lasted
        `blocked_after`. (The kernel's thread state cannot tell: a computing
        thread waiting for the GIL sleeps as a blocked one does.)
        """
        since = scheduler.since
        if since is None or now - since < self.blocked_after:
            scheduler.seen = None
            return False
        if scheduler.clock is None:
            return True
        try:
            cpu = time.clock_gettime(scheduler.clock)
        except OSError:  # the thread just ended
            return False
        last, scheduler.seen = scheduler.seen, (since, now, cpu)
        if last is None or last[0] != since or now <= last[1]:
            return False  # first look at this slice: judged at the next
        return (cpu - last[2]) / (now - last[1]) < BUSY_SHARE

    def _rescue(self, now: float) -> bool:
        """Move `runnext` actors stuck behind a blocked slice to other schedulers (with `_lock` held).

        Returns:
            True while some scheduler holds a `runnext` actor that may still run there.
        """
        waiting = False
        for scheduler in self._schedulers:
            actor = scheduler.runnext
            if actor is None:
                continue
            if scheduler.since is None or now - scheduler.since < self.blocked_after:
                waiting = True  # its slice is short so far (or just ended): it runs the actor soon
                continue
            scheduler.runnext = None
            if self._idle:
                self._idle.pop().handed.put(actor)
            else:
                self._ready.append(actor)
        return waiting


_SHARED: Dispatcher | None = None
_SHARED_LOCK = threading.Lock()


def shared_dispatcher() -> Dispatcher:
    """The process's dispatcher (one scheduler per core, more while vertex code blocks)."""
    global _SHARED  # noqa: PLW0603 - one per process, made on first use
    with _SHARED_LOCK:
        if _SHARED is None:
            _SHARED = Dispatcher()
        return _SHARED
