"""A server is a worker with routes: it takes its graphs' runs from the queue and keeps its leases.

Two tasks of the server's event loop (or of `actorgraph worker --config`'s):

- taking: the oldest run of its graphs it may take (first the ones kept for it,
  which a request waits for), whenever it is told one waits and every `poll`
  seconds (runs another process queued), up to `concurrency` runs taken from
  the queue at once (runs a request waits for are not counted: their clients
  are connected here);
- beating: every `tick` seconds it reads the cancels asked of its runs (another
  server's `interrupt` or `rollback`, a cancel request) and stops those, and
  every third of its lease it renews its leases and reservations (a run whose
  lease was lost is let go). Every few minutes it sweeps the parts of resumable
  streams kept past their time.

Beside them run the loops of `also`, as long as they do: the crons' scheduler
(`_scheduler.py`), so that servers and workers alike fire the crons' ticks.

It does not register in `actorgraph_workers`: that registry tells the command
line and the inbox that someone takes `submit`'s runs, which a server does not.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Final

from starlette.concurrency import run_in_threadpool

from actorgraph import ActorGraphError
from actorgraph.server._queued import Runs
from actorgraph.server._runner import Runner

__all__ = ["Taker"]

log = logging.getLogger("actorgraph.server")

_SWEEP_EVERY: Final = 300.0


class Taker:
    """Takes runs of `graphs` for a runner and keeps its leases (see the module)."""

    def __init__(  # noqa: PLR0913 - the runner, its queue, its graphs and its pace, all keyword-only
        self,
        runner: Runner,
        runs: Runs,
        graphs: Sequence[str],
        *,
        concurrency: int,
        poll: float = 0.5,
        tick: float = 0.5,
    ) -> None:
        """Take runs of `graphs` (names) from `runs`' queue for `runner`, at most `concurrency` at once."""
        self.runner = runner
        self.runs = runs
        self.graphs = list(graphs)
        self.concurrency = concurrency
        self.poll = poll
        self.tick = tick
        self._wake = asyncio.Event()
        self.also: list[Callable[[], Awaitable[None]]] = []  # more loops of the process (crons, webhooks)

    def wake(self) -> None:
        """A run waits: look now (from the event loop's thread)."""
        self._wake.set()

    async def serve(self) -> None:
        """Take and beat (and run the loops of `also`) until cancelled."""
        await asyncio.gather(self._taking(), self._beating(), *(loop() for loop in self.also))

    async def _taking(self) -> None:
        queue, name, lease = self.runs.queue, self.runs.name, self.runs.lease
        while True:
            self._wake.clear()
            try:
                row = await run_in_threadpool(
                    queue.claim, name, lease, graphs=self.graphs,
                    mine_only=self.runner.claimed() >= self.concurrency, ended=self.runs.ended_in,
                    settled=self.runner.webhooks.settled_in if self.runner.webhooks is not None else None,
                )  # fmt: skip
            except ActorGraphError as exc:
                log.warning("could not take a run", extra={"worker": name, "error": str(exc)})
                row = None
            if row is not None:
                await self.runner.begin(row)
                continue
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), self.poll)

    async def _beating(self) -> None:
        queue, name, lease = self.runs.queue, self.runs.name, self.runs.lease
        beaten = swept = time.monotonic()
        while True:
            await asyncio.sleep(self.tick)
            now = time.monotonic()
            try:
                if now - beaten >= lease / 3:
                    stop = await run_in_threadpool(
                        queue.heartbeat, name, lease, self.runner.held(), register=False
                    )
                    beaten = now
                else:
                    stop = await run_in_threadpool(queue.cancels, name)
                if now - swept >= _SWEEP_EVERY:
                    await run_in_threadpool(self.runner.events.sweep)
                    swept = now
            except ActorGraphError as exc:
                log.warning("could not renew the leases", extra={"worker": name, "error": str(exc)})
                continue
            for run_id, why in stop.items():
                if why == "lost" and run_id in self.runner.going:  # (a run only kept for it was cancelled)
                    log.warning("lease lost: letting the run go", extra={"worker": name, "run_id": run_id})
                self.runner.cancel(run_id, "lost" if why == "lost" else "cancel")
