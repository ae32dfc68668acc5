"""Runs: a request made a claimed run row, then run through the facade and streamed as it goes.

Claiming comes first: the run's row is written `pending` and its thread
`busy` in one transaction that first finds the thread free (`_tables.py`), so
two requests for one thread never both start. Then the run's task streams it
with `astream(mode="events", subgraphs=True)`: the public facade, whose
answers (`Command(resume=...)`) are claimed in the store before any vertex runs
with them. Its parts go to a `LiveRun`; when it ends, the run's status and the
thread's are written in one transaction: `success` and `idle` (or `interrupted`
when it paused), `error` and `error`, or `interrupted` when it was cancelled.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

from starlette.concurrency import run_in_threadpool

from actorgraph import ActorGraphError, Command
from actorgraph.server._body import ApiError
from actorgraph.server._events import Translator
from actorgraph.server._graphs import Served
from actorgraph.server._live import LiveRun
from actorgraph.server._models import RunCreate
from actorgraph.server._tables import BusyError, RunRow, Tables
from actorgraph.server._wire import error_body

__all__ = ["Runner", "new_id"]

log = logging.getLogger("actorgraph.server")

_DURABILITY: Final = {"sync": "sync", "async": "step", "exit": "exit"}
_ENDED: Final = {"done": "idle", "interrupted": "interrupted", "cancelled": "interrupted", "error": "error"}


def new_id() -> str:
    """A new UUID for a thread or a run (time-ordered enough for logs: version 4 is enough for ids)."""
    return str(uuid.uuid4())


def run_input(served: Served, body: RunCreate) -> Any:
    """The run's input: the body's `input`, or its `command` as a `Command` (answers, an update, a goto).

    Raises:
        ApiError: 422 when both are given.
    """
    command = body.command
    if command is None:
        return served.given(body.input)
    if body.input is not None:
        raise ApiError(422, "input and command: give one of them (command resumes or steers the thread)")
    fields = command.model_fields_set
    options: dict[str, Any] = {}
    if "resume" in fields:
        options["resume"] = command.resume
    if command.update is not None:
        options["update"] = command.update
    if command.goto is not None:
        options["goto"] = command.goto
    return Command(**options)


def run_keywords(served: Served, body: RunCreate, thread_id: str) -> dict[str, Any]:
    """The facade's run keywords for the request's options.

    Raises:
        ApiError: 422 for a breakpoint that names no vertex, or a recursion limit that is not one.
    """
    config = body.config or {}
    configurable = config.get("configurable") if isinstance(config.get("configurable"), dict) else None
    keywords: dict[str, Any] = {
        "thread_id": thread_id,
        "answered_by": f"actorgraph server (thread {thread_id})",
    }
    context = body.context if body.context is not None else configurable
    if context is not None:
        keywords["context"] = context
    limit = config.get("recursion_limit")
    if limit is not None:
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise ApiError(422, f"config.recursion_limit: {limit!r:.40} is not a positive integer")
        keywords["recursion_limit"] = limit
    checkpoint_id = body.checkpoint_id or (body.checkpoint.checkpoint_id if body.checkpoint else None)
    if checkpoint_id is not None:
        keywords["checkpoint_id"] = checkpoint_id
    if body.durability is not None:
        keywords["durability"] = _DURABILITY[body.durability]
    for name in ("interrupt_before", "interrupt_after"):
        value = getattr(body, name)
        if value is not None:
            keywords[name] = _breakpoints(served, name, value)
    if body.input is not None:
        keywords["discard_pending"] = (
            True  # new input on a paused or failed thread starts over, as LangGraph's
        )
    return keywords


def _breakpoints(served: Served, name: str, value: Any) -> Any:
    if value == "*":
        return "*"
    unknown = [v for v in value if v != "*" and "/" not in v and v not in served.app.spec.vertices]
    if unknown:
        vertices = ", ".join(served.app.spec.vertices)
        raise ApiError(
            422, f"{name}: {', '.join(map(repr, unknown))} not vertices of graph {served.name!r} ({vertices})"
        )
    return list(value)


@dataclass
class Started:
    """A started run: its row and its live parts."""

    row: RunRow
    live: LiveRun


class Runner:
    """Starts runs, keeps the live ones, and records how each ended."""

    def __init__(self, tables: Tables, forget: Callable[[str], None] | None = None) -> None:
        """Record runs in `tables`; `forget(thread_id)` deletes a stateless run's thread when it ends."""
        self.tables = tables
        self.live: dict[str, LiveRun] = {}
        self.forget = forget

    async def start(
        self, served: Served, body: RunCreate, thread_id: str, *, create: bool, temporary: bool = False
    ) -> Started:
        """Claim a run on `thread_id` and start it.

        Raises:
            ApiError: 409 when the thread is busy, 404 when it does not exist (and `create` is False),
                422 for options that do not fit the graph.
        """
        value, keywords = run_input(served, body), run_keywords(served, body, thread_id)
        row = _row(served, body, thread_id)
        await self._claim(served, row, create=create)
        live = LiveRun(row.run_id, thread_id, resumable=body.stream_resumable)
        live.emit("metadata", {"run_id": row.run_id, "attempt": 1})
        self.live[row.run_id] = live
        base = {
            "graph_id": served.name,
            "assistant_id": served.assistant_id,
            "run_id": row.run_id,
            "thread_id": thread_id,
            **(body.metadata or {}),
        }
        translator = Translator(served, body.modes(), subgraphs=body.stream_subgraphs, base=base)
        run = _Run(row, live, served, translator, temporary=temporary)
        live.task = asyncio.create_task(self._execute(run, value, keywords))
        return Started(row, live)

    async def _claim(self, served: Served, row: RunRow, *, create: bool) -> None:
        labels = {"graph_id": served.name, "assistant_id": served.assistant_id}
        try:
            await run_in_threadpool(self.tables.claim, row, create=create, metadata=labels)
        except BusyError as exc:
            raise ApiError(409, str(exc)) from None
        except LookupError:
            msg = f"thread {row.thread_id} not found (send if_not_exists='create' to create it)"
            raise ApiError(404, msg) from None

    async def _execute(self, run: _Run, value: Any, keywords: dict[str, Any]) -> None:
        started = time.monotonic()
        status, thread_status, error = "success", "idle", None
        try:
            await run_in_threadpool(self.tables.set_run, run.row.run_id, "running")
            stream = run.served.app.astream(value, mode="events", subgraphs=True, **keywords)
            async for path, event in stream:
                for name, data in run.translator.parts(path, event):
                    run.live.emit(name, data)
            finished = run.translator.finished
            thread_status = _ENDED.get(finished.status if finished else "done", "idle")
        except asyncio.CancelledError:
            status, thread_status = "interrupted", "interrupted"
            raise
        except Exception as exc:  # noqa: BLE001 - a run's failure is its error part, never the server's
            error = error_body(exc)
            status, thread_status = "error", "error"
            run.live.emit("error", error)
        finally:
            await self._finish(run, status, thread_status, error, time.monotonic() - started)

    async def _finish(self, run: _Run, status: str, thread_status: str, error: Any, seconds: float) -> None:
        try:
            await asyncio.shield(run_in_threadpool(self.tables.finish, run.row, status, thread_status, error))
            if run.temporary and self.forget is not None:
                await asyncio.shield(run_in_threadpool(self.forget, run.row.thread_id))
        except ActorGraphError:
            log.exception("could not record the end of run %s", run.row.run_id)
        finally:
            run.live.close()
            self.live.pop(run.row.run_id, None)
            log.info(
                "run %s of thread %s ended: %s (%.3f s)",
                run.row.run_id,
                run.row.thread_id,
                status,
                seconds,
                extra={
                    "run_id": run.row.run_id,
                    "thread_id": run.row.thread_id,
                    "status": status,
                    "duration": round(seconds, 6),
                },
            )

    def cancel(self, run_id: str) -> bool:
        """Cancel a live run of this server (it stays resumable from its last committed superstep)."""
        live = self.live.get(run_id)
        if live is None or live.task is None or live.task.done():
            return False
        live.task.cancel()
        return True

    async def close(self) -> None:
        """Cancel every live run and wait for each to record its end."""
        tasks = [live.task for live in self.live.values() if live.task is not None]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


def _row(served: Served, body: RunCreate, thread_id: str) -> RunRow:
    """The new run's row: pending, with the request's options and metadata."""
    now = time.time()
    kwargs = {
        "input": body.input,
        "command": body.command.model_dump() if body.command else None,
        "stream_mode": list(body.modes()),
        "config": body.config or {},
    }
    metadata = {**(body.metadata or {}), "graph_id": served.name, "assistant_id": served.assistant_id}
    return RunRow(
        new_id(),
        thread_id,
        served.assistant_id,
        "pending",
        metadata,
        kwargs,
        body.multitask_strategy,
        now,
        now,
    )


@dataclass
class _Run:
    row: RunRow
    live: LiveRun
    served: Served
    translator: Translator
    temporary: bool = False
