"""Running the server's queued runs in this process, through the facade.

Each is streamed to the responses that follow it, its parts kept when the
stream is resumable, its end recorded in the queue.

A run this process holds (taken from the queue, or created taken by a request
that waits for it) is a task of the event loop that streams it with
`astream(mode="events", subgraphs=True)`: the public facade, whose answers
(`Command(resume=...)`) are claimed in the store before any vertex runs with
them. Its parts go to a `LiveRun`, which any number of responses follow. A run
taken over from a process that died goes on from the thread's checkpoint when
that process got as far as recording its input or its answers: what was
committed does not run again.

When it ends, the queue records how (`done`, `failed`, `interrupted` when a
cancel stopped it, a rollback deletes it) and the thread's new status in one
transaction. A run whose lease was lost (another worker holds it) records
nothing; a run still going when the server stops is given back to the queue,
for another process (or this one, restarted) to finish.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final

from starlette.concurrency import run_in_threadpool

from actorgraph import ActorGraphError
from actorgraph.checkpoint._queue import QueuedRow
from actorgraph.server._events import Translator
from actorgraph.server._execute import run_input, run_keywords
from actorgraph.server._graphs import Graphs, Served
from actorgraph.server._live import LiveRun
from actorgraph.server._queued import Created, Runs, RunSpec, decode
from actorgraph.server._resumable import Events
from actorgraph.server._webhook_body import Ends
from actorgraph.server._wire import error_body

__all__ = ["Runner", "answerer"]

log = logging.getLogger("actorgraph.server")

_KEEP_EVERY: Final = 0.1  # seconds between writes of a resumable run's parts
_LINGER: Final = 10.0  # seconds an ended run's parts stay here for a client that joins its stream late
_THREAD_STATUS: Final = {
    "done": "idle",
    "interrupted": "interrupted",
    "cancelled": "interrupted",
    "error": "error",
}


def answerer(run_id: str) -> str:
    """Who answers a run's questions (`Command(resume=...)`), as the claim records it."""
    return f"actorgraph server (run {run_id})"


@dataclass
class _Run:
    row: QueuedRow
    spec: RunSpec
    served: Served
    live: LiveRun
    translator: Translator
    claimed: bool  # taken from the queue (not created taken by a request)
    why: str = ""  # why its task was cancelled: "cancel", "lost" (another holds it) or "stop" (give it back)
    kept: int = 0  # how many of its resumable parts are written
    kept_at: float = field(default_factory=time.monotonic)
    task: asyncio.Task[None] | None = None
    began: float = field(default_factory=time.time)  # wall-clock seconds it began here (for its webhook)


class Runner:
    """Runs the runs this process holds, and keeps the live parts of those a request waits for."""

    def __init__(self, runs: Runs, graphs: Graphs, events: Events) -> None:
        """Run with `graphs`, recording ends in `runs`, keeping resumable parts in `events`."""
        self.runs = runs
        self.graphs = graphs
        self.events = events
        self.live: dict[str, LiveRun] = {}
        self.going: dict[str, _Run] = {}
        self.awaited: set[str] = set()  # runs a request of this process is creating, to run here
        self._ended: dict[str, LiveRun] = {}  # awaited runs that ended before their request came back
        self.recent: dict[str, LiveRun] = {}  # runs ended here within `_LINGER` s, for late joiners
        self.forget: Callable[[str], None] | None = None  # deletes a stateless run's thread
        self.wake: Callable[[], None] = lambda: None  # tells the taker a run waits
        self.webhooks: Ends | None = None  # owes the webhooks of the runs that end here

    def held(self) -> list[str]:
        """The runs whose lease (or reservation) this process renews."""
        return list(self.live)

    def claimed(self) -> int:
        """How many runs taken from the queue go on here."""
        return sum(1 for run in self.going.values() if run.claimed)

    async def expect(self, created: Created) -> LiveRun:
        """The live parts of a run a request made to run here: begun now, or when the taker takes it."""
        row = created.row
        self.awaited.discard(row.run_id)
        taken = self.live.get(row.run_id) or self._ended.pop(row.run_id, None)
        if taken is not None:  # the taker took it (kept for us) while the request was being answered
            return taken
        live = LiveRun(row.run_id, row.thread_id, resumable=created.spec.body.get("stream_resumable") is True)
        live.emit("metadata", {"run_id": row.run_id, "attempt": 1})
        self.live[row.run_id] = live
        if row.state == "running":
            await self.begin(row, created.spec)
        else:
            self.wake()
        return live

    async def begin(self, row: QueuedRow, spec: RunSpec | None = None) -> None:
        """Run a row this process holds now (its payload read here when `spec` is None).

        A run a request here waits for (`expect`) is not counted among the runs taken from the queue.
        """
        claimed = row.run_id not in self.live and row.run_id not in self.awaited
        try:
            if spec is None:
                spec = await run_in_threadpool(decode, self.runs.store, row)
            served = self.graphs.get(spec.graph_id)
            body = spec.request()
            translator = Translator(
                served, body.modes(), subgraphs=body.stream_subgraphs, base=_message_base(served, row, body)
            )
            live = self.live.get(row.run_id) or await self._taken_over(row, resumable=body.stream_resumable)
        except Exception as exc:  # noqa: BLE001 - a stored run is hostile: it fails alone
            await run_in_threadpool(self._unreadable, row, exc)
            return
        run = _Run(row, spec, served, live, translator, claimed)
        self.going[row.run_id] = run
        run.task = asyncio.get_running_loop().create_task(self._execute(run))

    async def _taken_over(self, row: QueuedRow, *, resumable: bool) -> LiveRun:
        """The live parts of a run taken from the queue (resumable parts numbered on from the kept ones)."""
        first = await run_in_threadpool(self.events.last, row.run_id) + 1 if resumable else 0
        live = LiveRun(row.run_id, row.thread_id, resumable=resumable, first_id=first)
        live.emit("metadata", {"run_id": row.run_id, "attempt": row.attempts})
        self.live[row.run_id] = live
        return live

    def _let_go(self, run_id: str, live: LiveRun) -> None:
        """Forget an ended run's parts."""
        if self.recent.get(run_id) is live:
            del self.recent[run_id]

    def following(self, run_id: str) -> LiveRun | None:
        """The parts of a run going on here, or that ended here moments ago."""
        return self.live.get(run_id) or self.recent.get(run_id)

    def _unreadable(self, row: QueuedRow, exc: Exception) -> None:
        """A run that cannot be run here (a damaged payload, a graph not served): it fails, saying why."""
        error = {"error": type(exc).__name__, "message": f"the run cannot be started: {exc}"[:2000]}
        fields = {"run_id": row.run_id, "thread_id": row.thread_id, "error": error["message"]}
        log.warning("run not started: marked failed", extra=fields)
        try:
            self.runs.queue.finish(
                row.run_id, self.runs.name, state="failed", error=error["message"],
                ended=lambda conn, thread, how: self.runs.ended_in(conn, thread, how, "error", error),
            )  # fmt: skip
        except ActorGraphError:
            log.exception("could not record the end of run %s", row.run_id)
        live = self.live.pop(row.run_id, None)
        if live is not None:
            live.emit("error", error)
            live.close()

    async def _execute(self, run: _Run) -> None:
        started = time.monotonic()
        how, status, error = "done", "idle", None
        try:
            value, keywords = await run_in_threadpool(self._what_to_run, run)
            faces = run.translator.faces  # learns which runs are an entrypoint's or a task call's
            stream = run.served.app.astream(
                value, mode="events", subgraphs=True, listeners=[faces], **keywords
            )
            async for path, event in stream:
                for name, data in run.translator.parts(path, event):
                    run.live.emit(name, data)
                await self._keep(run, done=False)
            finished = run.translator.finished
            status = _THREAD_STATUS.get(finished.status if finished else "done", "idle")
        except asyncio.CancelledError:
            how, status = ("interrupted", "interrupted") if run.why == "cancel" else ("queued", "busy")
            raise
        except Exception as exc:  # noqa: BLE001 - a run's failure is its error part, never the server's
            error = error_body(exc)
            how, status = "failed", "error"
            run.live.emit("error", error)
        finally:
            await asyncio.shield(self._finish(run, how, status, error, time.monotonic() - started))

    def _what_to_run(self, run: _Run) -> tuple[Any, dict[str, Any]]:
        """The input and keywords of the run.

        A run taken over goes on from the checkpoint its first attempt reached (its input
        recorded, or its answers claimed): nothing committed runs again.
        """
        body, row, store = run.spec.request(), run.row, self.runs.store
        value, keywords = run_input(body), run_keywords(run.served, body, row.thread_id)
        keywords["answered_by"] = answerer(row.run_id)
        if row.attempts > 1:
            head = store.get(row.thread_id)
            at = head.checkpoint_id if head is not None else None
            answered = at is not None and any(
                claim.answered_by == keywords["answered_by"]
                for claim in store.answers_at(row.thread_id, at).values()
            )
            if at != row.base_head or answered:
                value = None
                keywords.pop("checkpoint_id", None)
                keywords.pop("discard_pending", None)
        return value, keywords

    async def _keep(self, run: _Run, *, done: bool) -> None:
        """Write the resumable parts not written yet (every `_KEEP_EVERY` seconds, and at the end)."""
        live = run.live
        if not live.resumable or len(live.parts) == run.kept:
            return
        if not done and time.monotonic() - run.kept_at < _KEEP_EVERY:
            return
        parts, run.kept, run.kept_at = live.parts[run.kept :], len(live.parts), time.monotonic()
        await run_in_threadpool(self.events.append, run.row.run_id, run.row.thread_id, parts)

    async def _finish(self, run: _Run, how: str, status: str, error: Any, seconds: float) -> None:
        row, ended = run.row, how
        try:
            if run.why != "lost":
                await self._keep(run, done=True)
                ended = await run_in_threadpool(self._record, run, how, status, error)
                if self.webhooks is not None:
                    self.webhooks.wake()
            if run.spec.temporary and ended not in ("queued", "lost") and self.forget is not None:
                await run_in_threadpool(self.forget, row.thread_id)
        except ActorGraphError:
            log.exception("could not record the end of run %s", row.run_id)
        finally:
            run.live.close()
            self.live.pop(row.run_id, None)
            if ended not in ("queued", "lost"):  # a client joining just after the end still gets the parts
                self.recent[row.run_id] = run.live
                asyncio.get_running_loop().call_later(_LINGER, self._let_go, row.run_id, run.live)
            if row.run_id in self.awaited:
                self._ended[row.run_id] = run.live
            self.going.pop(row.run_id, None)
            self.wake()
            fields: dict[str, Any] = {"run_id": row.run_id, "thread_id": row.thread_id}
            fields |= {"graph_id": run.spec.graph_id, "status": _shown(ended), "attempt": row.attempts}
            log.info("run ended", extra=fields | {"duration": round(seconds, 6)})

    def _record(self, run: _Run, how: str, status: str, error: Any) -> str:
        """Record the run's end (and its thread's status); how it ended, "lost" when another holds it."""
        message = None if error is None else f"{error['error']}: {error['message']}"
        owe = None if self.webhooks is None else self.webhooks.owed(run.row, run.spec, error, run.began)

        def ended_in(conn: Any, thread: Any, ended: str) -> None:
            self.runs.ended_in(conn, thread, ended, status, error)
            if owe is not None:  # its webhook is owed in the transaction that records its end
                owe(conn, ended)

        how_ended = self.runs.queue.finish(
            run.row.run_id, self.runs.name, state=how, error=message, ended=ended_in
        )
        return how_ended or "lost"

    def cancel(self, run_id: str, why: str = "cancel") -> bool:
        """Stop a run going on here (`why`: "cancel", "lost" or "stop"); False when none goes on here.

        A run only expected here (kept for this server, not begun) ends its live parts: it was
        cancelled while it waited, or another process took it.
        """
        run = self.going.get(run_id)
        if run is None:
            live = self.live.pop(run_id, None)
            if live is not None:
                live.close()
            return False
        if run.task is None or run.task.done():
            return False
        run.why = run.why or why
        run.task.cancel()
        return True

    async def close(self) -> None:
        """Give back every run going on here (another process, or this one restarted, finishes it)."""
        tasks = []
        for run_id, run in list(self.going.items()):
            if self.cancel(run_id, "stop") and run.task is not None:
                tasks.append(run.task)
        await asyncio.gather(*tasks, return_exceptions=True)


def _message_base(served: Served, row: QueuedRow, body: Any) -> dict[str, Any]:
    """Every message part's metadata: the graph, the assistant, the run, the thread and the run's metadata."""
    return {
        "graph_id": served.name,
        "assistant_id": served.assistant_id,
        "run_id": row.run_id,
        "thread_id": row.thread_id,
        **(body.metadata or {}),
    }


def _shown(ended: str) -> str:
    return {"done": "success", "failed": "error", "queued": "given back", "deleted": "rolled back"}.get(
        ended, ended
    )
