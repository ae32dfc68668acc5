"""One worker process: take queued runs, run them, renew their leases, let go cleanly when told to stop."""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Mapping
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

from actorgraph import ActorGraphError, CompiledGraph, RunCancelledError, RunHandle
from actorgraph._api.queued import decode_submission
from actorgraph.checkpoint._queue import QueuedRow, RunQueue, run_queue

__all__ = ["Worker"]

log = logging.getLogger("actorgraph.worker")


@dataclass
class _Held:
    """A run this worker holds: its handle, and whether the worker let go of it (lease lost, stopping)."""

    handle: RunHandle[Any]
    dropped: bool = False


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
            log.warning("worker %s could not take a run: %s", self.name, exc)
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
        except ActorGraphError as exc:
            self._finish(row.thread_id, "failed", str(exc))
            return
        with self._lock:
            self._held[row.thread_id] = _Held(handle)
        log.info("worker %s runs thread %s (attempt %d)", self.name, row.thread_id, row.attempts)
        handle.future.add_done_callback(lambda done: self._stopped(row.thread_id, done))

    def _stopped(self, thread_id: str, done: Future[Any]) -> None:
        """A run stopped: record how in the queue (unless this worker let go of it)."""
        with self._lock:
            held = self._held.pop(thread_id, None)
        self._wake.set()
        if held is None or held.dropped:
            return
        error = done.exception()
        if error is None:
            self._label(thread_id)
            self._finish(thread_id, "done")
        elif isinstance(error, RunCancelledError):
            self._finish(thread_id, "queued")
        else:
            self._finish(thread_id, "failed", f"{type(error).__name__}: {error}")

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
            log.warning("worker %s could not label thread %s: %s", self.name, thread_id, exc)

    def _finish(self, thread_id: str, state: str, error: str | None = None) -> None:
        try:
            if self.queue.finish(thread_id, self.name, state=state, error=error):
                self.finished += 1
        except ActorGraphError as exc:  # the lease runs out and another worker goes on with the thread
            log.warning("worker %s could not record the end of thread %s: %s", self.name, thread_id, exc)

    def _beat(self, stop: threading.Event) -> None:
        """Renew the leases every third of a lease; a run whose lease was lost is cancelled."""
        while not stop.wait(self.lease / 3):
            with self._lock:
                threads = list(self._held)
            try:
                lost = self.queue.heartbeat(self.name, self.lease, threads)
            except ActorGraphError as exc:
                log.warning("worker %s could not renew its leases: %s", self.name, exc)
                continue
            for thread_id in lost:
                self._drop(thread_id)

    def _drop(self, thread_id: str) -> None:
        """Let go of a run another worker took over (its commits would be refused anyway)."""
        with self._lock:
            held = self._held.get(thread_id)
            if held is None:
                return
            held.dropped = True
        log.warning("worker %s lost its lease on thread %s: cancelling its run there", self.name, thread_id)
        held.handle.cancel()

    def _give_back(self) -> None:
        """Cancel the runs still going and queue them again for another worker (stopping)."""
        with self._lock:
            held = dict(self._held)
            for h in held.values():
                h.dropped = True
        for thread_id, h in held.items():
            h.handle.cancel()
            self._finish(thread_id, "queued")
