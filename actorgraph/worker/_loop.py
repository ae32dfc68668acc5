"""One worker process: take queued runs, run them, renew their leases, let go cleanly when told to stop.

It logs to the `actorgraph.worker` logger, each event with its fields as the
record's extras (`worker`, `thread_id`, `run_id`, `vertex`, `error`...), as the
library's own events are: `actorgraph.logging.configure()` (or `actorgraph
worker`) shows them.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Mapping
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

from actorgraph import ActorGraphError, CompiledGraph, RunCancelledError, RunHandle, VertexError
from actorgraph._api.queued import decode_submission
from actorgraph.checkpoint._queue import QueuedRow, RunQueue, run_queue

__all__ = ["Worker"]

log = logging.getLogger("actorgraph.worker")


def _described(error: BaseException) -> dict[str, Any]:
    """The fields of a failed run's log line: the vertex that failed (if one did) and the error."""
    if isinstance(error, VertexError):
        kind = error.error_type.removeprefix("builtins.")
        return {"vertex": error.vertex, "step": error.step, "error": f"{kind}: {error.error_message}"}
    return {"error": f"{type(error).__name__}: {error}"}


@dataclass
class _Held:
    """A run this worker holds: its thread, its handle, and how it stops when it does.

    `dropped`: the worker let go of it (lease lost, stopping); `cancelled`: it was
    asked to stop (a cancel: the queue then ends it as asked).
    """

    thread_id: str
    handle: RunHandle[Any]
    dropped: bool = False
    cancelled: bool = False


@dataclass
class Worker:
    """Takes queued runs of `app`'s store and runs them, at most `concurrency` at once.

    `serve(stop)` returns when `stop` is set: runs still going are cancelled and
    given back to the queue (their threads resume from their checkpoints in the
    next worker that takes them).
    """

    app: CompiledGraph[Any]
    name: str
    concurrency: int
    lease: float
    poll: float = 0.2
    labels: Mapping[str, str] = field(default_factory=dict)  # recorded with each thread it runs
    queue: RunQueue = field(init=False)
    _held: dict[str, _Held] = field(default_factory=dict, init=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False)
    _wake: threading.Event = field(default_factory=threading.Event, init=False)
    finished: int = field(default=0, init=False)

    def __post_init__(self) -> None:
        """Find the queue of the graph's store (a SQL checkpointer)."""
        assert self.app.checkpointer is not None  # noqa: S101 - compiled_on_store gives only graphs with a store
        self.queue = run_queue(self.app.checkpointer)

    def serve(self, stop: threading.Event) -> None:
        """Work until `stop` is set; then give back what is still running."""
        self.queue.heartbeat(self.name, self.lease, [])
        beat = threading.Thread(
            target=self._beat, args=(stop,), name=f"actorgraph-worker-heartbeat-{self.name}"
        )
        beat.start()
        try:
            while not stop.is_set():
                if self._free() and self._take():
                    continue
                self._wake.wait(self.poll)
                self._wake.clear()
        finally:
            stop.set()
            self._wake.set()
            beat.join()
            self._give_back()
            with contextlib.suppress(ActorGraphError):
                self.queue.leave(self.name)

    def _free(self) -> bool:
        with self._lock:
            return len(self._held) < self.concurrency

    def _take(self) -> bool:
        """Take one queued run and start it; False when none waits (or the store failed)."""
        try:
            row = self.queue.claim(self.name, self.lease)
        except ActorGraphError as exc:
            log.warning("could not take a run", extra={"worker": self.name, "error": str(exc)})
            return False
        if row is None:
            return False
        self._start(row)
        return True

    def _start(self, row: QueuedRow) -> None:
        store = self.app.checkpointer
        assert store is not None  # noqa: S101 - see __post_init__
        try:
            fresh, given = decode_submission(store, row)
            handle = self.app.start(given if fresh else None, thread_id=row.thread_id)
        except Exception as exc:  # noqa: BLE001 - a stored submission is hostile: it fails its own run only
            error = str(exc) if isinstance(exc, ActorGraphError) else f"{type(exc).__name__}: {exc}"
            log.warning(
                "queued run not started",
                extra={"worker": self.name, "thread_id": row.thread_id, "error": error},
            )
            self._finish(row, "failed", error)
            return
        with self._lock:
            self._held[row.run_id] = _Held(row.thread_id, handle)
        fields = {
            "worker": self.name,
            "thread_id": row.thread_id,
            "run_id": handle.run_id,
            "attempt": row.attempts,
        }
        log.info("queued run started", extra=fields)
        handle.future.add_done_callback(lambda done: self._stopped(row, done))

    def _stopped(self, row: QueuedRow, done: Future[Any]) -> None:
        """A run stopped: record how in the queue (unless this worker let go of it)."""
        with self._lock:
            held = self._held.pop(row.run_id, None)
        self._wake.set()
        if held is None or held.dropped:
            return
        error = done.exception()
        fields = {"worker": self.name, "thread_id": row.thread_id, "run_id": held.handle.run_id}
        if error is None:
            log.info("queued run stopped", extra=fields)
            self._label(row.thread_id)
            self._finish(row, "done")
        elif isinstance(error, RunCancelledError) and held.cancelled:
            log.info("queued run cancelled as asked", extra=fields)
            self._finish(row, "interrupted")
        elif isinstance(error, RunCancelledError):
            log.info("queued run cancelled: queued again", extra=fields)
            self._finish(row, "queued")
        else:
            log.error("queued run failed", extra=fields | _described(error))
            self._finish(row, "failed", f"{type(error).__name__}: {error}")

    def _label(self, thread_id: str) -> None:
        """Record the worker's labels with a thread it ran, where the thread has none of its own."""
        store = self.app.checkpointer
        if not self.labels or store is None:
            return
        try:
            have = store.get_metadata(thread_id)
            missing = {k: v for k, v in self.labels.items() if k not in have}
            if missing:
                store.set_metadata(thread_id, missing)
        except ActorGraphError as exc:  # labels help people later; the run itself is done
            fields = {"worker": self.name, "thread_id": thread_id, "error": str(exc)}
            log.warning("could not label the thread", extra=fields)

    def _finish(self, row: QueuedRow, state: str, error: str | None = None) -> None:
        try:
            if self.queue.finish(row.run_id, self.name, state=state, error=error):
                self.finished += 1
        except ActorGraphError as exc:  # the lease runs out and another worker goes on with the thread
            fields = {"worker": self.name, "thread_id": row.thread_id, "state": state, "error": str(exc)}
            log.warning("could not record how the run ended", extra=fields)

    def _beat(self, stop: threading.Event) -> None:
        """Renew the leases every third of a lease; a run whose lease was lost is cancelled."""
        while not stop.wait(self.lease / 3):
            with self._lock:
                runs = list(self._held)
            try:
                asked = self.queue.heartbeat(self.name, self.lease, runs)
            except ActorGraphError as exc:
                log.warning("could not renew the leases", extra={"worker": self.name, "error": str(exc)})
                continue
            for run_id, why in asked.items():
                self._drop(run_id, lost=why == "lost")

    def _drop(self, run_id: str, *, lost: bool) -> None:
        """Let go of a run another worker took over, or stop one a cancel was asked of.

        A run taken over would have its commits refused anyway; a cancelled one's end
        is recorded as the cancel asks.
        """
        with self._lock:
            held = self._held.get(run_id)
            if held is None or held.dropped or held.cancelled:
                return
            held.dropped, held.cancelled = lost, not lost
        fields = {"worker": self.name, "thread_id": held.thread_id, "run_id": held.handle.run_id}
        if lost:
            log.warning("lease lost to another worker: cancelling the run here", extra=fields)
        else:
            log.info("run asked to stop: cancelling it", extra=fields)
        held.handle.cancel()

    def _give_back(self) -> None:
        """Cancel the runs still going and queue them again for another worker (stopping)."""
        with self._lock:
            held = dict(self._held)
            for h in held.values():
                h.dropped = True
        for run_id, h in held.items():
            h.handle.cancel()
            try:
                self.queue.finish(run_id, self.name, state="queued")
            except ActorGraphError as exc:  # its lease runs out and another worker takes it
                fields = {"worker": self.name, "thread_id": h.thread_id, "run_id": run_id, "error": str(exc)}
                log.warning("could not give the run back", extra=fields)
