"""The actors behind one compiled graph: its coordinators, vertex pools and timer."""

from __future__ import annotations

import concurrent.futures
import sys
import threading
import time
import traceback
import warnings
from collections import Counter
from collections.abc import Callable

from actorgraph._actors.backend import DEFAULT, Backend, ThreadBackend, Worker
from actorgraph._actors.bounded import Joinable
from actorgraph._actors.coordinator import CoordinatorPool
from actorgraph._actors.dispatcher import shared_dispatcher
from actorgraph._actors.handle import STOP_WAIT
from actorgraph._actors.live import release_all
from actorgraph._actors.log import log
from actorgraph._actors.messages import Launch, Order
from actorgraph._actors.subgraphs import ChildRunner
from actorgraph._actors.timer import Timer
from actorgraph._engine.clock import Clock
from actorgraph._model.errors import ActorGraphError
from actorgraph._model.spec import GraphSpec
from actorgraph._model.warnings import StuckVertexWarning

__all__ = ["Runtime"]


class Runtime:
    """Owns every thread a compiled graph starts; `close()` stops them all.

    It is also what a run needs of them (`_setup.Workers`): submitting an attempt
    to its vertex's pool, abandoning a stuck one, and calling back after a backoff.
    """

    def __init__(
        self,
        spec: GraphSpec,
        clock: Clock | None,
        *,
        coordinators: int = 4,
        shared: dict[int, Runtime] | None = None,
        backend: Backend = DEFAULT,
    ) -> None:
        """Prepare the actors of `spec` (started on demand).

        Args:
            spec: the graph.
            clock: where retry backoff waits (None: the timer thread).
            coordinators: the most coordinator actors (each drives many runs).
            shared: the runtimes of subgraphs already made, by spec: two vertices
                running one subgraph share its actors and their bounds.
            backend: where vertex work runs (the subgraphs' too).
        """
        self.spec = spec
        self._clock = clock
        self._lock = threading.Lock()
        self._timer: Timer | None = None
        self.pools = {name: backend.pool(spec, vertex, self.timer) for name, vertex in spec.vertices.items()}
        pooled = isinstance(backend, ThreadBackend) and backend.pooled
        self.coordinators = CoordinatorPool(coordinators, shared_dispatcher() if pooled else None)
        self.closed = False
        self._stopping: list[Joinable] = []  # the threads the first close() left to end
        self.children: dict[str, ChildRunner] = {}
        self._inner: list[Runtime] = []  # the subgraphs' runtimes this one made
        shared = {} if shared is None else shared
        for name, vertex in spec.vertices.items():
            if vertex.child is None:
                continue
            inner = shared.get(id(vertex.child.spec))
            if inner is None:
                inner = Runtime(vertex.child.spec, clock, shared=shared, backend=backend)
                shared[id(vertex.child.spec)] = inner
                self._inner.append(inner)
            self.children[name] = ChildRunner(spec, vertex, inner, self.timer)

    def timer(self) -> Timer:
        """The graph's timer thread, started on first use."""
        with self._lock:
            if self._timer is None:
                self._timer = Timer(f"actorgraph-timer-{self.spec.name}")
            return self._timer

    def submit(self, order: Order) -> None:
        """Hand an attempt to an actor of its vertex (a subgraph task: launch its subgraph's run)."""
        if order.child is not None and order.failure is None:
            self.children[order.task.vertex].start(order)
        else:
            self.pools[order.task.vertex].submit(order)

    def abandon(self, vertex: str, token: int) -> bool:
        """Give up on the attempt `token` of `vertex` (it overran its timeout)."""
        runner = self.children.get(vertex)
        if runner is not None and runner.abandon(token):
            return True
        return self.pools[vertex].abandon(token)

    def later(self, seconds: float, fn: Callable[[], None]) -> None:
        """Call `fn()` after `seconds`, on the compile-time clock or the timer thread."""
        (self._clock or self.timer()).call_later(seconds, fn)

    def start(self, launch: Launch) -> None:
        """Give a run to a coordinator, which builds and starts it."""
        self.coordinators.assign(launch)

    def cancel(self, launch: Launch, *, wait: bool = True) -> None:
        """Stop `run`; with `wait`, return once its coordinator has let go of it.

        Waiting makes a cancelled run's thread safe to resume at once: no commit of
        the cancelled run can land after this returns. A coordinator never waits for
        itself (a listener may cancel the run it listens to).
        """
        self.coordinators.cancel(launch)
        if not wait or self.coordinators.on_coordinator_thread():
            return
        done, _ = concurrent.futures.wait([launch.stopped], timeout=STOP_WAIT)
        if not done:
            log(
                "warning",
                "a cancelled run's coordinator did not let go of it in time",
                run_id=launch.run_id,
                seconds=STOP_WAIT,
            )

    def close(self, timeout: float = 10.0) -> None:
        """Stop every coordinator, every vertex actor and the timer, waiting up to `timeout` in all.

        Actors still running a task are waited for; past a short grace a
        `StuckVertexWarning` names their vertices, and another one says so if
        they outlast `timeout` (their threads then end on their own; their stacks
        are logged).
        """
        with self._lock:
            closed, self.closed = self.closed, True
            timer = self._timer
        deadline = time.monotonic() + timeout
        if closed:  # closed before (from a listener, say, without waiting): wait for what it left
            _join(self._stopping, deadline)
            return
        threads: list[Joinable] = [*self.coordinators.stop()]
        actors = self._stop_actors()
        self._stopping = [*threads, *(a.thread for _, a in actors if a.thread is not None)]
        grace = min(deadline, time.monotonic() + _GRACE)
        _join(threads, grace)  # the coordinators fail their runs as they stop
        self.coordinators.abandon(self._closed_error)  # the runs of a coordinator stuck in a call
        threads.extend(a.thread for _, a in actors if a.thread is not None)
        _join(threads, grace)
        busy = [(name, a) for name, a in actors if a.busy]
        if busy and time.monotonic() < deadline:
            left = max(0.0, deadline - time.monotonic())
            _warn(
                f"closing graph {self.spec.name!r}: {_describe(busy)} still running a task; waiting up to "
                f"{left:.1f} s more for them (close(timeout=...) sets the wait)"
            )
        _join(threads, deadline)
        stuck = [(name, a) for name, a in busy if a.thread is not None and a.thread.is_alive()]
        if stuck:
            _warn(
                f"closing graph {self.spec.name!r}: gave up waiting for {_describe(stuck)}; their "
                "threads go on in the background until the calls return (their stacks are in the "
                "'actorgraph' log)"
            )
            for name, actor in stuck:
                log("warning", "stuck vertex actor", vertex=name, stack=_stack(actor.thread))
        if timer is not None:
            timer.close()

    def _closed_error(self) -> ActorGraphError:
        return ActorGraphError(
            f"graph {self.spec.name!r} was closed while this run was going; compile the graph again and "
            "resume its thread with invoke(None, thread_id=...) if it keeps checkpoints, else run it again"
        )

    def _stop_actors(self, path: str = "") -> list[tuple[str, Worker]]:
        """Stop the vertex actors of this graph and of its subgraphs; return them by vertex path.

        The vertices waiting live in runs nested in this graph's tasks (a `@task`'s
        call, a graph invoked from a vertex) unwind too, though their graphs stay open.
        """
        release_all(self)  # after `closed` is set: a nested vertex asking from now on finds it closed
        for runner in self.children.values():
            runner.stop()
        actors = [(path + name, actor) for name, pool in self.pools.items() for actor in pool.stop()]
        for name, runner in self.children.items():
            inner = runner.workers
            if isinstance(inner, Runtime) and inner in self._inner and not inner.closed:
                inner.closed = True
                actors.extend(inner._stop_actors(f"{path}{name}/"))  # noqa: SLF001 - its own kind
                if inner._timer is not None:  # noqa: SLF001
                    inner._timer.close()  # noqa: SLF001
        return actors


_GRACE = 0.5  # seconds close() waits quietly before it says what it is waiting for


def _join(threads: list[Joinable], deadline: float) -> None:
    current = threading.current_thread()
    for thread in threads:
        if thread is not current and thread.ident != current.ident:
            thread.join(max(0.0, deadline - time.monotonic()))


def _describe(busy: list[tuple[str, Worker]]) -> str:
    counts = Counter(name for name, _ in busy)
    names = ", ".join(f"{name!r}" + (f" ({n} tasks)" if n > 1 else "") for name, n in counts.items())
    return f"vertex {names}" if len(busy) == 1 else f"vertices {names}"


def _stack(thread: Joinable | None) -> str:
    frame = sys._current_frames().get(thread.ident) if thread is not None and thread.ident else None  # noqa: SLF001
    return "".join(traceback.format_stack(frame)) if frame is not None else ""


def _warn(message: str) -> None:
    # stacklevel: _warn, Runtime.close, CompiledGraph.close, the caller
    warnings.warn(message, StuckVertexWarning, stacklevel=4)
