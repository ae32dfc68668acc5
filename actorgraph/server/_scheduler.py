"""The crons' scheduler: each tick of a cron queues one run, however many servers and workers share the store.

Every server (and every `actorgraph worker --config`) runs one, beside its
taker, for the graphs it serves. Each tick is one transaction of the store
(`fire_due`): the earliest due cron is picked and locked (`_crons.due_in`), its
`next_run_at` moved by compare-and-set to its first tick after now, and its run
created with the thread's `multitask_strategy` (`Runs.create_in`). Both are
committed together or not at all, so a tick makes one run: a process that dies
in the middle commits neither, and the next one to look fires the tick. The
run's id is made from the cron and the tick (`tick_run_id`), so even two
schedulers that read the same tick could not both queue it (the queue's key
refuses the second).

After downtime, a cron whose ticks were missed fires once, for the first of
them, and then goes on from its first tick after now: never once per missed
tick. A tick past the cron's `end_time` does not fire. A tick that cannot run
is passed, logged, and the cron goes on: `reject` on a busy thread, a stored
request that is no longer valid for the graph. A cron whose thread was deleted
is deleted at its next tick; one whose row is damaged stops (no next tick).

Between rounds it sleeps until the earliest next tick of its graphs' crons,
at most `poll` seconds (crons another process made), and wakes at once when a
route of this process made or changed one.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from dataclasses import dataclass
from typing import Any, Final

from pydantic import ValidationError
from starlette.concurrency import run_in_threadpool

from actorgraph._model.errors import ActorGraphError
from actorgraph.server._body import ApiError
from actorgraph.server._cron_rows import Cron
from actorgraph.server._cron_specs import tick_request, tick_run_id
from actorgraph.server._crons import CronTable
from actorgraph.server._execute import new_id, run_input, run_keywords
from actorgraph.server._graphs import Graphs
from actorgraph.server._queued import Created, Runs, RunSpec
from actorgraph.server._runner import Runner
from actorgraph.server._schedule import next_tick
from actorgraph.server._tables import BusyError
from actorgraph.server._wire import iso

__all__ = ["Fired", "Scheduler"]

log = logging.getLogger("actorgraph.server")

_SOONEST: Final = 0.02  # seconds between looks while a due tick is held by another process
_BATCH: Final = 100  # ticks fired in one round before the loop yields


@dataclass(frozen=True, slots=True)
class Fired:
    """One tick handled: its cron, its time, and the run it queued (None when it was passed: `why`)."""

    cron_id: str
    tick: float | None
    created: Created | None = None
    why: str = ""


class Scheduler:
    """Queues the runs of the crons of some graphs at their ticks (see the module)."""

    def __init__(
        self, crons: CronTable, runs: Runs, graphs: Graphs, runner: Runner, *, poll: float = 1.0
    ) -> None:
        """Fire the crons of `graphs` (in `crons`) as runs of `runs`' queue, for `runner` to be told of."""
        self.crons = crons
        self.runs = runs
        self.graphs = graphs
        self.runner = runner
        self.poll = poll
        self.names = [served.name for served in graphs]
        self._wake: asyncio.Event | None = None

    def wake(self) -> None:
        """A cron was made or changed here: look now (from the event loop's thread)."""
        if self._wake is not None:
            self._wake.set()

    async def serve(self) -> None:
        """Fire due ticks until cancelled (a failure is logged and looked at again, never the end of it)."""
        self._wake = asyncio.Event()
        while True:
            self._wake.clear()
            earliest = None
            try:
                earliest = await self._round()
            except ActorGraphError as exc:
                log.warning("could not fire the crons' ticks", extra={"error": str(exc)})
            except Exception:  # a bug here must not stop the ticks (nor the taker beside it)
                log.exception("could not fire the crons' ticks")
            delay = self.poll if earliest is None else min(self.poll, max(_SOONEST, earliest - time.time()))
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), delay)

    async def _round(self) -> float | None:
        """Fire what is due (a read first: no transaction while nothing is); the earliest next tick after."""
        earliest = await run_in_threadpool(self.crons.earliest, self.names)
        if earliest is None or earliest > time.time():
            return earliest
        fired = await run_in_threadpool(self.fire_due, time.time())
        for done in fired:
            if done.created is not None:
                for run_id in done.created.asked:  # interrupt, rollback: a run going on here stops now
                    self.runner.cancel(run_id)
        if any(done.created is not None for done in fired):
            self.runner.wake()
        return await run_in_threadpool(self.crons.earliest, self.names)

    def fire_due(self, now: float) -> list[Fired]:
        """Fire every tick of the graphs' crons due at `now` (wall-clock seconds), one transaction each."""
        fired: list[Fired] = []
        if not self.names:
            return fired
        for _ in range(_BATCH):
            done: Fired | None = self.runs.queue.transaction(
                "firing a cron's tick", lambda c: self._fire_in(c, now)
            )
            if done is None:
                break
            fired.append(done)
            _log(done)
        return fired

    def _fire_in(self, conn: Any, now: float) -> Fired | None:
        """Claim the earliest due tick and queue its run, in the caller's transaction; None if none is due."""
        found = self.crons.due_in(conn, self.names, now)
        if found is None:
            return None
        key, cron = found
        if cron is None:
            self.crons.stop_in(conn, key)
            return Fired(str(key), None, why="its row is damaged: it is stopped")
        tick = cron.next_run_at
        following = next_tick(cron.schedule, cron.timezone, max(now, tick or now))
        if following is not None and cron.end_time is not None and following > cron.end_time:
            following = None
        if not self.crons.advance_in(conn, key, tick, following):
            return Fired(cron.cron_id, tick, why="another process fired it")
        if tick is None or (cron.end_time is not None and tick > cron.end_time):
            return Fired(cron.cron_id, tick, why="past its end_time")
        return self._queue_in(conn, cron, tick, now)

    def _queue_in(self, conn: Any, cron: Cron, tick: float, now: float) -> Fired:
        """Queue the run of one tick (or say why it was passed)."""
        try:
            request, webhook = tick_request(cron)
            served = self.graphs.get(cron.graph)
            thread_id = cron.thread_id or new_id()
            run_input(request)
            run_keywords(served, request, thread_id)
        except (ValidationError, ApiError, ActorGraphError, LookupError) as exc:
            return Fired(
                cron.cron_id, tick, why=f"its run is not valid for graph {cron.graph!r}: {exc}"[:500]
            )
        body = request.model_dump(mode="json") | ({"webhook": webhook} if webhook else {})
        temporary = cron.thread_id is None and cron.on_run_completed != "keep"
        spec = RunSpec(served.name, served.assistant_id, body, temporary)
        try:
            created = self.runs.create_in(
                conn, served, spec, request, thread_id, create=cron.thread_id is None, here=False,
                run_id=tick_run_id(cron.cron_id, tick), stamp=now, metadata=cron.metadata,
            )  # fmt: skip
        except BusyError:
            return Fired(cron.cron_id, tick, why=f"thread {thread_id} is busy (multitask_strategy 'reject')")
        except LookupError:
            self.crons.forget_in(conn, cron.cron_id)
            return Fired(cron.cron_id, tick, why=f"thread {thread_id} was deleted: the cron is deleted")
        return Fired(cron.cron_id, tick, created)


def _log(done: Fired) -> None:
    fields: dict[str, Any] = {"cron_id": done.cron_id, "tick": iso(done.tick)}
    if done.created is not None:
        row = done.created.row
        log.info("cron fired", extra=fields | {"run_id": row.run_id, "thread_id": row.thread_id})
    elif done.why != "another process fired it":
        log.warning("cron tick passed: %s", done.why, extra=fields)
