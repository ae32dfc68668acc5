"""Workers that run queued runs: `CompiledGraph.submit` (or `Entrypoint.submit`) queues, `run` finishes.

```python
import actorgraph.worker

actorgraph.worker.run("myapp.flows:graph", dsn="postgresql://...", concurrency=8)
```

Several workers, on any machines sharing one PostgreSQL database (or on one
machine sharing a SQLite file, `db=PATH`), take the runs that `submit` queued.
Each holds a lease on each run it works on and renews it every third of the
lease; a worker that dies (SIGKILL, its machine gone) stops renewing, and
another takes its runs over once the lease ran out, resuming each from its
checkpoint: finished tasks are not run again, and the compare-and-set on the
thread's head keeps a superstep from being committed twice.

Layer (docs/design.md): a front end, on the public API and the facade; it imports no other front end.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Mapping
from types import FrameType
from typing import Any

from actorgraph._api.queued import Submitted
from actorgraph._model.errors import ConfigError
from actorgraph.checkpoint._queue import check_lease, worker_name
from actorgraph.worker._loop import Worker
from actorgraph.worker._target import Target, compiled_on_store

__all__ = ["Submitted", "run"]

_LARGEST = 1024


def _check_concurrency(concurrency: object) -> int:
    if isinstance(concurrency, bool) or not isinstance(concurrency, int) or not 1 <= concurrency <= _LARGEST:
        msg = f"concurrency={concurrency!r}: give how many runs a worker runs at once, 1 to {_LARGEST}"
        raise ConfigError(msg)
    return concurrency


def run(  # noqa: PLR0913 - the target, its store and the worker's bounds, all keyword-only
    target: Target,
    *,
    dsn: str | None = None,
    db: str | None = None,
    concurrency: int = 4,
    lease: float = 30.0,
    name: str | None = None,
    stop: threading.Event | None = None,
    labels: Mapping[str, str] | None = None,
) -> int:
    """Run queued runs of `target` until stopped (SIGTERM, Ctrl-C, or `stop` set); return how many finished.

    Args:
        target: a `Graph` (compiled here on the store), a `CompiledGraph` with its
            own SQL checkpointer, an `@entrypoint` (compiled here on the store if one
            is given, else on its own checkpointer), a function returning one, or TARGET
            text as the command line takes it (`flow.yaml`, `package.module:graph`,
            `file.py:graph`).
        dsn: the PostgreSQL database the workers share (workers on any machines).
        db: the SQLite file the workers share (workers on one machine).
        concurrency: how many runs this worker runs at once.
        lease: seconds a run stays this worker's without a heartbeat; another
            worker takes it over this long after this one died.
        name: the worker's name in the queue and `actorgraph threads` (default `host:pid`).
        stop: set it to stop the worker (from another thread).
        labels: thread metadata to record with each thread the worker ran, where the
            thread has none of it (`actorgraph worker` records its TARGET, so
            `actorgraph answer` needs no `-g`).

    On SIGTERM or Ctrl-C (in the main thread), the runs still going are cancelled
    and queued again, so another worker resumes them from their checkpoints at once.

    Raises:
        ConfigError: a bad target, store, lease or concurrency.
        CheckpointError: the database cannot be reached.
    """
    lease, concurrency = check_lease(lease), _check_concurrency(concurrency)
    stop = stop if stop is not None else threading.Event()
    with compiled_on_store(target, dsn, db) as app, _signals(stop):
        worker = Worker(app, name or worker_name(), concurrency, lease, labels=dict(labels or {}))
        try:
            worker.serve(stop)
        except KeyboardInterrupt:
            stop.set()
        return worker.finished


class _signals:  # noqa: N801 - a context manager used as a function
    """SIGTERM sets `stop` while the worker runs (in the main thread only; elsewhere nothing changes)."""

    def __init__(self, stop: threading.Event) -> None:
        self._stop = stop
        self._before: Any = None

    def __enter__(self) -> None:
        if threading.current_thread() is threading.main_thread():
            self._before = signal.signal(signal.SIGTERM, self._handle)

    def _handle(self, _signum: int, _frame: FrameType | None) -> None:
        self._stop.set()

    def __exit__(self, *_exc: object) -> None:
        if self._before is not None:
            signal.signal(signal.SIGTERM, self._before)
