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
import sys
import threading
from collections.abc import Awaitable
from typing import Any

import cloudpickle

from actorgraph._engine.call import Call, Called, Code, call_vertex
from actorgraph._model.errors import RecordedError, SerializationError
from actorgraph._model.records import ErrorInfo

__all__ = ["NEED_CODE", "PartitionWorker", "portable_error"]

NEED_CODE = b"actorgraph:need-code"  # the answer of a partition asked to run a vertex it does not know


class PartitionWorker:
    """What a partition actor does (wrapped by `ray.remote` in `_backend`)."""

    def __init__(self, switch_interval: float | None = None) -> None:
        """An empty partition: it learns vertex code as tasks arrive.

        Args:
            switch_interval: the process's GIL switch interval (`sys.setswitchinterval`):
                longer than CPython's 5 ms, many threads of CPU-bound tasks waste less
                time handing the GIL to each other.
        """
        self._code: dict[str, Code] = {}
        self._lock = threading.Lock()
        if switch_interval is not None:
            sys.setswitchinterval(switch_interval)

    def run(self, key: str, code: list[Any], call: bytes, state: bytes) -> bytes:
        """Run one attempt and return the pickled `Called`.

        Returns `NEED_CODE` when it was given no code for a vertex it does not know.

        Args:
            key: the vertex's code key.
            code: `[ObjectRef]` of the vertex's pickled `VertexCode`, fetched when this
                partition has not run the vertex yet (nested in a list so Ray does not
                fetch it on every call); `[]` once the driver saw this partition run it.
            call: the pickled `Call`.
            state: the pickled private input state.
        """
        vertex = self._code.get(key)
        if vertex is None:
            if not code:  # the driver thought this partition knew the vertex: it restarted since
                return NEED_CODE
            import ray  # noqa: PLC0415 - runs inside a Ray worker

            vertex = cloudpickle.loads(ray.get(code[0]))
            with self._lock:
                self._code[key] = vertex
        task: Call = cloudpickle.loads(call)
        emitted: list[Any] = []
        ctx = task.context_for(emitted.append)
        called = call_vertex(
            vertex,
            cloudpickle.loads(state),
            ctx,
            resumes=task.resumes,
            failure=task.failure,
            run_async=_run_coroutine,
            line=task.line,
        )
        called.emitted = emitted
        return _dumped(vertex.name, called)

    def where(self) -> tuple[str, int]:
        """The node id and process id of this partition (for tests and `RayBackend.partitions`)."""
        import ray  # noqa: PLC0415 - runs inside a Ray worker

        return ray.get_runtime_context().get_node_id(), os.getpid()


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
        blob: bytes = cloudpickle.dumps(called)
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
