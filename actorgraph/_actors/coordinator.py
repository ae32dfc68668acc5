"""Coordinator actors: they drive runs through their supersteps.

A coordinator is event-driven: it never waits for a vertex. It reacts to
messages (a run to start, an attempt's outcome, a timeout, a cancellation)
by calling into the run's state machine, so one coordinator can drive many
runs at once, and a slow vertex never holds up another run.
"""

from __future__ import annotations

import contextlib
import dataclasses
import threading
from collections.abc import Callable
from concurrent.futures import InvalidStateError
from typing import Any

import pykka

from actorgraph._actors.bounded import Joinable
from actorgraph._actors.dispatcher import Dispatcher, PooledActor, running_actor
from actorgraph._actors.handle import settle
from actorgraph._actors.messages import CancelRun, Done, Flush, Launch, StartRun, TimedOut
from actorgraph._actors.run import Run
from actorgraph._actors.start import build_run
from actorgraph._actors.threaded import ThreadActor
from actorgraph._model.errors import ActorGraphError
from actorgraph._model.records import UNSET

__all__ = ["CoordinatorActor", "CoordinatorPool", "PooledCoordinatorActor"]


class _Coordinating(pykka.Actor):
    """What a coordinator does, whichever thread runs it: drive the runs it was given."""

    def _join(self, pool: CoordinatorPool, born: list[_Coordinating]) -> None:
        born.append(self)
        self.pool = pool
        self.runs: dict[str, Run] = {}

    def on_receive(self, message: Any) -> None:
        """Route a message to the run it concerns; contain anything that escapes."""
        try:
            self._receive(message)
        except BaseException as exc:  # noqa: BLE001 - pykka would stop every actor in the process
            self._die(exc)

    def _die(self, exc: BaseException) -> None:
        """Fail this coordinator's runs (they stay resumable from their checkpoints) and stop."""

        def failure(resume: str) -> ActorGraphError:
            error = ActorGraphError(
                f"the coordinator driving this run died ({type(exc).__name__}: {exc}); {resume}"
            )
            error.__cause__ = exc
            return error

        self._end_all(failure)
        self.stop()

    def _receive(self, message: Any) -> None:
        match message:
            case Done(run_id=run_id):
                self._step(run_id, lambda run: run.on_done(message))
            case StartRun(launch=launch):
                self._launch(launch)
            case TimedOut(run_id=run_id):
                self._step(run_id, lambda run: run.on_timeout(message))
            case Flush(run_id=run_id):
                self._step(run_id, _flush)
            case CancelRun(run_id=run_id):
                self._step(run_id, _cancel)

    def _launch(self, launch: Launch) -> None:
        """Build the run (reading its thread's checkpoint) and start it; a failure is the run's error."""
        try:
            run = build_run(launch)
        except Exception as exc:  # noqa: BLE001 - a bad input or an unreadable thread is this run's error
            with contextlib.suppress(InvalidStateError):
                launch.started.set_exception(exc)
            settle(launch.future, error=exc)
            self._release(launch)
            _stopped(launch)
            return
        with contextlib.suppress(InvalidStateError):
            launch.started.set_result(None)
        # the run holds its state from here on: a big input is not kept alive a second time
        launch.order = dataclasses.replace(launch.order, input=None, fresh=UNSET)
        self.runs[run.id] = run
        if run.recorder is not None:  # results that finish together are written together
            ref, run_id = self.actor_ref, run.id
            run.recorder.later = lambda: ref.tell(Flush(run_id))
        self._step(run.id, lambda r: r.begin(self.actor_ref))

    def on_stop(self) -> None:
        """Fail the runs still going (the graph is being closed, or someone stopped us)."""
        self._end_all(lambda resume: ActorGraphError(f"{CLOSED} {resume}"))

    def _end_all(self, failure: Callable[[str], ActorGraphError]) -> None:
        """Fail every run given to this coordinator, built or not: nobody waiting on one is left waiting.

        `failure(resume)` makes a run's error; `resume` says how to go on. A
        run's launch still in the inbox is dropped when the actor stops, so it
        is failed here too.
        """
        self.pool.forget(self)
        for run in list(self.runs.values()):
            error = failure(_resume_hint(run.recorder is not None))
            with contextlib.suppress(BaseException):  # a failing crash must not keep the others waiting
                _flush(run)  # the results waiting for their Flush, which this inbox will not deliver
                run.crash(error)
            _stopped(run.launch)
            if run.closed:
                run.deliver()
            else:
                settle(run.launch.future, error=error)
        self.runs.clear()
        for launch in self.pool.orphans(self):
            _unbuilt(launch, failure(_resume_hint(recorded=None)))
            _stopped(launch)

    def _step(self, run_id: str, action: Any) -> None:
        run = self.runs.get(run_id)
        if run is None:
            return  # the run already ended; a late message
        try:
            action(run)
        except Exception as exc:  # noqa: BLE001 - a failing run must not take the coordinator down
            run.crash(exc)
        if run.closed:
            del self.runs[run_id]
            self._release(run.launch)
            _stopped(run.launch)
            run.deliver()

    def _release(self, launch: Launch) -> None:
        """A run ended here: one fewer for the pool to count (a subgraph's run was never counted)."""
        if not launch.nested:
            self.pool.release(self, launch)


def _flush(run: Run) -> None:
    if run.recorder is not None and not run.closed:
        run.recorder.flush()


def _cancel(run: Run) -> None:
    _flush(run)  # what finished before the cancel is stored, as it would have been at once
    run.cancel()


class CoordinatorActor(_Coordinating, ThreadActor):
    """A coordinator on a thread of its own (the thread design)."""

    def __init__(self, pool: CoordinatorPool, born: list[_Coordinating]) -> None:
        ThreadActor.__init__(self)
        self._join(pool, born)


class PooledCoordinatorActor(_Coordinating, PooledActor):
    """A coordinator on the dispatcher's schedulers: a vertex it orders runs next on the same thread."""

    def __init__(self, pool: CoordinatorPool, born: list[_Coordinating]) -> None:
        assert pool.dispatcher is not None  # noqa: S101 - only pooled coordinator pools make these
        PooledActor.__init__(self, pool.dispatcher)
        self._join(pool, born)


CLOSED = "the compiled graph was closed while this run was going; compile the graph again and"


def _resume_hint(recorded: bool | None) -> str:
    """How to go on with a run its coordinator let go of (`recorded`: None when unknown, not built)."""
    if recorded is None:
        return "resume its thread with invoke(None, thread_id=...) if it keeps checkpoints, else run it again"
    if recorded:
        return "resume its thread with invoke(None, thread_id=...)"
    return "run it again (it kept no checkpoint)"


def _unbuilt(launch: Launch, error: BaseException) -> None:
    """Fail a run its coordinator may never get to: its future, and `wait_started()` if it was not built."""
    settle(launch.future, error=error)
    with contextlib.suppress(InvalidStateError):
        launch.started.set_exception(error)


def _stopped(launch: Launch) -> None:
    """Tell whoever cancelled the run that its coordinator has let go of it."""
    with contextlib.suppress(InvalidStateError):
        launch.started.set_result(None)  # let go before it was built: `result()` says why
    with contextlib.suppress(InvalidStateError):
        launch.stopped.set_result(None)


class CoordinatorPool:
    """Up to `size` coordinators; a new run goes to the least busy one."""

    def __init__(self, size: int, dispatcher: Dispatcher | None = None) -> None:
        """No coordinator yet (they start with the first runs); with `dispatcher`, they are pooled."""
        self.size = size
        self.dispatcher = dispatcher
        self._claimed = False  # holds a claim on the dispatcher (from its first coordinator to stop())
        self._lock = threading.Lock()
        self._load: dict[_Coordinating, int] = {}
        self._all: list[_Coordinating] = []
        self._live: dict[str, tuple[Launch, _Coordinating]] = {}  # by run id: given, not yet ended
        self._closed = False

    def assign(self, launch: Launch) -> None:
        """Hand a run to a coordinator, which builds and starts it."""
        with self._lock:
            if self._closed:
                msg = "the compiled graph is closed; compile the graph again to run it"
                raise ActorGraphError(msg)
            idle = [c for c, n in self._load.items() if n == 0]
            if idle:
                chosen = idle[0]
            elif len(self._load) < self.size:
                self._start()
                chosen = self._all[-1]
            else:
                chosen = min(self._load, key=self._load.__getitem__)
            self._load[chosen] = self._load.get(chosen, 0) + 1
            self._live[launch.run_id] = (launch, chosen)
        launch.coordinator = chosen.actor_ref
        try:
            chosen.actor_ref.tell(StartRun(launch))
        except pykka.ActorDeadError:  # stopped from outside (ActorRegistry.stop_all), or closed meanwhile
            self.forget(chosen)
            with self._lock:
                self._live.pop(launch.run_id, None)
            if not launch.future.done():  # else the stopping coordinator failed it already
                self.assign(launch)

    def _start(self) -> None:
        """Start one more coordinator (with `_lock` held)."""
        if self.dispatcher is None:
            CoordinatorActor.start(self, self._all)
            return
        if not self._claimed:  # a graph never run holds no claim
            self.dispatcher.acquire()
            self._claimed = True
        PooledCoordinatorActor.start(self, self._all)

    def forget(self, coordinator: _Coordinating) -> None:
        """Stop handing runs to a coordinator that has stopped."""
        with self._lock:
            self._load.pop(coordinator, None)

    def release(self, coordinator: _Coordinating, launch: Launch) -> None:
        """The run of `launch` on `coordinator` ended."""
        with self._lock:
            self._live.pop(launch.run_id, None)
            if coordinator in self._load:
                self._load[coordinator] = max(0, self._load[coordinator] - 1)

    def orphans(self, coordinator: _Coordinating) -> list[Launch]:
        """The unended launches given to `coordinator`, which is stopping: the caller ends them."""
        with self._lock:
            mine = [rid for rid, (_, owner) in self._live.items() if owner is coordinator]
            return [self._live.pop(rid)[0] for rid in mine]

    def abandon(self, error: Callable[[], BaseException]) -> int:
        """Fail every run still given to a coordinator with `error()` (after `stop()`); return how many.

        A coordinator stuck in a call (a store that does not answer) cannot fail
        its runs itself; their callers are released here instead, and the
        coordinator finds them settled when it gets to them.
        """
        with self._lock:
            launches = [launch for launch, _ in self._live.values()]
            self._live.clear()
        for launch in launches:
            _unbuilt(launch, error())
        return len(launches)

    def cancel(self, launch: Launch) -> None:
        """Stop a run: nothing new starts from now on; its coordinator lets go of it soon after."""
        launch.cancel.set()  # seen at once by the coordinator and by vertex actors about to start
        if launch.coordinator is None:  # never given to one: nothing holds it
            _stopped(launch)
            return
        try:
            launch.coordinator.tell(CancelRun(launch.run_id))
        except pykka.ActorDeadError:
            _stopped(launch)

    def on_coordinator_thread(self) -> bool:
        """True when called by one of these coordinators (which must never wait for itself)."""
        if self.dispatcher is not None:
            actor: object = running_actor()
            with self._lock:
                return any(c is actor for c in self._all)
        current = threading.current_thread()
        with self._lock:
            return any(isinstance(c, CoordinatorActor) and c.thread is current for c in self._all)

    def stop(self) -> list[Joinable]:
        """Stop every coordinator (their runs fail) without waiting; return what the caller may join.

        That is their threads, or for pooled coordinators their ends and, when
        this was the dispatcher's last claim, its scheduler threads.
        """
        with self._lock:
            self._closed = True
            coordinators = list(self._all)
            self._load.clear()
            claimed, self._claimed = self._claimed, False
        for coordinator in coordinators:
            with contextlib.suppress(pykka.ActorDeadError):
                coordinator.actor_ref.stop(block=False)
        if self.dispatcher is None:
            threads = [c.thread for c in coordinators if isinstance(c, CoordinatorActor)]
            return [thread for thread in threads if thread is not None]
        ends: list[Joinable] = [c.end for c in coordinators if isinstance(c, PooledCoordinatorActor)]
        schedulers = self.dispatcher.release() if claimed else []
        return [*ends, *(s.thread for s in schedulers if s.thread is not None)]
