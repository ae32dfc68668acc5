"""A partition: one Ray actor (a worker process) that runs the attempts of many vertices.

Pregel's workers: a bounded set of them per backend, each running tasks for any
vertex placed on it, on threads (a threaded Ray actor), so a vertex's tasks run
in parallel up to its `concurrency` and CPU-bound vertices spread over the
partitions' processes. A partition keeps no state a run needs: it holds the
code of the vertices it has run (fetched from the object store the first time,
so a restarted partition fetches it again) and nothing else.

The attempt itself is `actorgraph._engine.call.call_vertex`, the same function the
thread backend calls: what a vertex returns, raises or pauses for travels back
as a pickled `Called`, and the driver finishes the task.
"""

from __future__ import annotations

import os
import pickle
import select
import sys
import threading
import time
from collections.abc import Awaitable
from typing import Any

import cloudpickle

from actorgraph._engine.call import Called, Code, call_vertex
from actorgraph._engine.context import current_nest
from actorgraph._engine.nesting import NoNest
from actorgraph._model.errors import RecordedError, SerializationError
from actorgraph._model.records import ErrorInfo
from actorgraph.ray._tracing import attached
from actorgraph.ray._wire import dumps

__all__ = ["NEED_CODE", "PartitionWorker", "portable_error"]

_PID_POLL = 0.1  # seconds between checks of the driver's process where pidfd is missing

NEED_CODE = b"actorgraph:need-code"  # the answer of a partition asked to run a vertex it does not know


class PartitionWorker:
    """What a partition actor does (wrapped by `ray.remote` in `_backend`)."""

    def __init__(self, switch_interval: float | None = None, driver: tuple[str, int] | None = None) -> None:
        """An empty partition: it learns vertex code as tasks arrive.

        Args:
            switch_interval: the process's GIL switch interval (`sys.setswitchinterval`):
                longer than CPython's 5 ms, many threads of CPU-bound tasks waste less
                time handing the GIL to each other.
            driver: the node id and pid of the driver: the partition ends its process
                when that driver is gone, so no task of a dead run goes on (`_end_with`).
        """
        self._code: dict[str, Code] = {}
        self._lock = threading.Lock()
        if switch_interval is not None:
            sys.setswitchinterval(switch_interval)
        if driver is not None:
            threading.Thread(
                target=_end_with, args=driver, name="actorgraph-driver-watch", daemon=True
            ).start()

    def run(self, *call: Any) -> bytes:
        """Run one attempt and return the pickled `Called`.

        Returns `NEED_CODE` when it was given no code for a vertex it does not know.

        Args:
            *call: `blob`, then `stored` and `code` when they are needed (a signature of
                `*call` alone: Ray checks each call's arguments against the method's
                parameters, ~10 us for three named ones, about half that for `*call`).
                `blob` is the pickled `(code key, Call, pickled input state or None, trace
                carrier or None)`: one argument, since each argument of a Ray call costs
                tens of microseconds on both sides. `stored` is the pickled input state
                when it came through the object store (a large state: Ray fetches it
                before the call), else None. `code` is `[ObjectRef]` of the vertex's
                pickled `VertexCode`, fetched when this partition has not run the vertex
                yet (nested in a list so Ray does not fetch it on every call); None once
                the driver saw this partition run it.
        """
        blob, stored, code = (*call, None, None)[:3]
        key, task, state, carrier = pickle.loads(blob)  # noqa: S301 - the driver's own call
        vertex = self._code.get(key) or self._learn(key, code)
        if vertex is None:  # the driver thought this partition knew the vertex: it restarted since
            return NEED_CODE
        emitted: list[Any] = []
        ctx = task.context_for(emitted.append)
        # a graph the vertex invokes here could not nest in its task's run: refused, never run unrecorded
        unnested = current_nest.set(NoNest(vertex.name))
        try:
            with attached(carrier):  # the driver's attempt span is current: the vertex's own spans nest in it
                called = call_vertex(
                    vertex,
                    pickle.loads(stored if state is None else state),  # noqa: S301 - the driver's own state
                    ctx,
                    resumes=task.resumes,
                    failure=task.failure,
                    run_async=_run_coroutine,
                    line=task.line,
                )
        finally:
            current_nest.reset(unnested)
        called.emitted = emitted
        return _dumped(vertex.name, called)

    def _learn(self, key: str, code: list[Any] | None) -> Code | None:
        """The vertex's code fetched from the object store (None when it was not sent)."""
        if not code:
            return None
        import ray  # noqa: PLC0415 - runs inside a Ray worker

        vertex: Code = cloudpickle.loads(ray.get(code[0]))
        with self._lock:
            self._code[key] = vertex
        return vertex

    def where(self) -> tuple[str, int]:
        """The node id and process id of this partition (for tests and `RayBackend.partitions`)."""
        import ray  # noqa: PLC0415 - runs inside a Ray worker

        return ray.get_runtime_context().get_node_id(), os.getpid()


def _end_with(node: str, pid: int) -> None:
    """End this process as soon as the driver is gone: its runs will never read what its tasks do.

    On the driver's machine the partition waits on the driver's process itself
    (a pidfd: woken the moment it ends, however it ends). On another machine Ray
    ends the actors of a job whose driver is gone (measured in 0.2 s here on a
    cluster started with `ray start`).
    """
    import ray  # noqa: PLC0415 - runs inside a Ray worker

    if ray.get_runtime_context().get_node_id() != node or not _alive(pid):
        return  # another machine, or a driver this process cannot see (another pid namespace)
    try:
        handle = os.pidfd_open(pid)
    except OSError:  # no pidfd here: poll instead
        while _alive(pid):
            time.sleep(_PID_POLL)
    else:
        select.select([handle], [], [])  # readable once the process has ended
    os._exit(1)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _run_coroutine(awaitable: Awaitable[Any]) -> Any:
    import asyncio  # noqa: PLC0415 - only async vertices need it

    async def wait() -> Any:
        return await awaitable

    return asyncio.run(wait())


def portable_error(error: ErrorInfo) -> ErrorInfo:
    """`error`, its exception replaced by a `RecordedError` when it cannot be pickled and loaded again."""
    if error.exception is None:
        return error
    try:
        cloudpickle.loads(cloudpickle.dumps(error.exception))
    except Exception:  # noqa: BLE001 - any pickling failure: keep the text, drop the object
        stand_in = RecordedError(error.type, error.message, error.traceback)
        return ErrorInfo(error.type, error.message, error.traceback, stand_in, error.retryable)
    return error


def _dumped(vertex: str, called: Called) -> bytes:
    """`called`, pickled; what cannot be pickled becomes the task's error, saying what."""
    if called.error is not None:
        called.error = portable_error(called.error)
    try:
        blob = dumps(called)
    except Exception as exc:  # noqa: BLE001 - a value that cannot travel back is the task's error
        plain = called.error is None and called.pending is None
        what = "returned a value" if plain else "paused or failed with a value"
        msg = (
            f"vertex {vertex!r} {what} that cannot be pickled to travel back from its Ray worker "
            f"({type(exc).__name__}: {exc}); return plain data (its ctx.value and ctx.emit payloads too)"
        )
        error = ErrorInfo.from_exception(SerializationError(msg), retryable=False)
        blob = cloudpickle.dumps(Called(error=portable_error(error)))
    return blob
