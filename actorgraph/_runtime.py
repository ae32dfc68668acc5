"""The actors behind one compiled graph: its coordinators, vertex pools and timer."""

from __future__ import annotations

import concurrent.futures
import threading
import time

from actorgraph._clock import Clock
from actorgraph._coordinator import CoordinatorPool
from actorgraph._handle import STOP_WAIT
from actorgraph._log import log
from actorgraph._pool import VertexPool
from actorgraph._run import Run
from actorgraph._spec import GraphSpec
from actorgraph._timer import Timer

__all__ = ["Runtime"]


class Runtime:
    """Owns every thread a compiled graph starts; `close()` stops them all."""

    def __init__(self, spec: GraphSpec, clock: Clock, *, coordinators: int = 4) -> None:
        self.spec = spec
        self.clock = clock
        self._lock = threading.Lock()
        self._timer: Timer | None = None
        self.pools = {
            name: VertexPool(spec, vertex, clock, self.timer) for name, vertex in spec.vertices.items()
        }
        self.coordinators = CoordinatorPool(coordinators)
        self.closed = False

    def timer(self) -> Timer:
        """The graph's timer thread, started on first use."""
        with self._lock:
            if self._timer is None:
                self._timer = Timer(f"actorgraph-timer-{self.spec.name}")
            return self._timer

    def start(self, run: Run) -> None:
        """Give `run` to a coordinator."""
        self.coordinators.assign(run)

    def cancel(self, run: Run, *, wait: bool = True) -> None:
        """Stop `run`; with `wait`, return once its coordinator has let go of it.

        Waiting makes a cancelled run's thread safe to resume at once: no commit of
        the cancelled run can land after this returns. A coordinator never waits for
        itself (a listener may cancel the run it listens to).
        """
        self.coordinators.cancel(run)
        if not wait or self.coordinators.on_coordinator_thread():
            return
        done, _ = concurrent.futures.wait([run.stopped], timeout=STOP_WAIT)
        if not done:
            log(
                "warning",
                "a cancelled run's coordinator did not let go of it in time",
                run_id=run.id,
                seconds=STOP_WAIT,
            )

    def close(self, timeout: float = 10.0) -> None:
        """Stop every coordinator, every vertex actor and the timer (waiting up to `timeout` in all)."""
        with self._lock:
            if self.closed:
                return
            self.closed = True
            timer = self._timer
        deadline = time.monotonic() + timeout
        self.coordinators.close()
        for pool in self.pools.values():
            pool.close(deadline)
        if timer is not None:
            timer.close()
