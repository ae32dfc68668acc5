"""The run routes: stream, wait and start a run (on a thread, or stateless); list, get, join, cancel, delete.

Every run is a row of the run queue (`_queued.py`), created with its
`multitask_strategy` in one transaction. A streamed or waited run is run by
this server (at once when its thread is free, else when its turn comes); a
background run (`POST .../runs`) by whichever server or `actorgraph worker` of
the store takes it first. A streamed run answers with `Content-Location:
/threads/{thread_id}/runs/{run_id}` and `Location: .../stream` (where a client
reconnects); a waited one with `Location: .../join`. The run goes on when a
streaming client leaves (`on_disconnect="continue"`), unless it asked for
`"cancel"`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, Final

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response

from actorgraph.server._access import allowed
from actorgraph.server._body import ApiError, check_id, json_body, query_int
from actorgraph.server._context import Json, Server, server_of, thread_of
from actorgraph.server._execute import new_id, run_input, run_keywords
from actorgraph.server._joining import ended, kept_parts, last_event_id, until_ended, wanted_modes
from actorgraph.server._live import LiveRun, SseResponse
from actorgraph.server._models import RunCreate
from actorgraph.server._queued import STATUS, Created, RunSpec, run_json
from actorgraph.server._tables import BusyError
from actorgraph.server._webhooks import check_webhook

__all__ = ["ROUTES"]

_RUN_STATUSES: Final = frozenset({"pending", "running", "error", "success", "timeout", "interrupted"})
_ACTIONS: Final = ("interrupt", "rollback")
_background: set[asyncio.Task[Any]] = set()  # cancels started by a client that left (kept until done)


async def _created(request: Request, body: RunCreate, *, here: bool) -> tuple[Server, Created, str]:
    """Create the request's run (on its thread, or on a new thread when stateless); and its path."""
    server = server_of(request)
    served = server.assistant(body.assistant_id)
    stateless = "thread_id" not in request.path_params
    thread_id = new_id() if stateless else check_id(request.path_params["thread_id"], "thread_id")
    run_input(body)  # options that do not fit the graph are refused before anything is written
    run_keywords(served, body, thread_id)
    if body.webhook is not None:  # 422 for a URL the server would not send to, before anything is written
        await check_webhook(body.webhook, server.webhooks)
    run_id = new_id()
    access = await allowed(
        request, "threads", "create_run", _run_value(body, served, None if stateless else thread_id, run_id)
    )
    body = body.model_copy(update={"metadata": access.metadata() or None})
    if here:  # the taker may take it before this request comes back: it knows whose it is
        server.runner.awaited.add(run_id)
    try:
        created = await run_in_threadpool(
            server.runs.create, served, body, thread_id, create=stateless or body.if_not_exists == "create",
            temporary=stateless and body.on_completion == "delete", here=here, run_id=run_id,
            where=access.where,
        )  # fmt: skip
    except BaseException as exc:
        server.runner.awaited.discard(run_id)
        if isinstance(exc, BusyError):
            raise ApiError(409, str(exc)) from None
        if isinstance(exc, LookupError):
            msg = f"thread {thread_id} not found (send if_not_exists='create' to create it)"
            raise ApiError(404, msg) from None
        raise
    for run_id in created.asked:  # a run of this thread going on here stops now; elsewhere, at a heartbeat
        server.runner.cancel(run_id)
    where = f"/runs/{created.row.run_id}" if stateless else f"/threads/{thread_id}/runs/{created.row.run_id}"
    return server, created, where


def _run_value(body: RunCreate, served: Any, thread_id: str | None, run_id: str) -> dict[str, Any]:
    """What `threads.create_run` handlers are given (LangGraph's `RunsCreate`); they may change `metadata`."""
    kwargs = body.model_dump(mode="json", exclude={"assistant_id", "metadata", "multitask_strategy"})
    return {
        "thread_id": thread_id,
        "assistant_id": served.assistant_id,
        "run_id": run_id,
        "status": "pending",
        "metadata": dict(body.metadata or {}),
        "prevent_insert_if_inflight": body.multitask_strategy == "reject",
        "multitask_strategy": body.multitask_strategy,
        "if_not_exists": body.if_not_exists,
        "after_seconds": body.after_seconds or 0,
        "kwargs": kwargs,
    }


async def _cancel(server: Server, thread_id: str, run_id: str, action: str = "interrupt") -> None:
    """Cancel a run wherever it goes on (a local one at once, another process's at its next heartbeat)."""
    await run_in_threadpool(server.runs.cancel, thread_id, run_id, action)
    server.runner.cancel(run_id)


async def _stream(request: Request) -> Response:
    body = await json_body(request, RunCreate, server_of(request).limits, empty=False)
    server, created, where = await _created(request, body, here=True)
    live = await server.runner.expect(created)
    row = created.row

    gone = _when_gone(server, row.thread_id, row.run_id) if body.on_disconnect == "cancel" else None
    headers = {"content-location": where, "location": f"{where}/stream"}
    return SseResponse(live.follow(), headers, on_gone=gone)


def _when_gone(server: Server, thread_id: str, run_id: str) -> Callable[[], None]:
    """What cancels a run when the client following its stream goes away (on_disconnect="cancel")."""

    def gone() -> None:
        task = asyncio.get_running_loop().create_task(_cancel(server, thread_id, run_id))
        _background.add(task)
        task.add_done_callback(_background.discard)

    return gone


async def _values(server: Server, live: LiveRun, thread_id: str) -> Any:
    """What a waited run returns: its error, its last values, or (run elsewhere) the thread's values."""
    if live.error is not None:
        return {"__error__": live.error}
    if live.values is not None:
        return live.values
    return await _thread_values(server, thread_id)


async def _thread_values(server: Server, thread_id: str) -> Any:
    thread = await run_in_threadpool(server.tables.thread, thread_id)
    served = server.state.graph_of(thread)
    snap = await run_in_threadpool(server.state.snapshot, served, thread_id)
    if served is None or snap is None:
        return None
    return server.state.state_json(served, snap)["values"]


async def _wait(request: Request) -> Response:
    body = await json_body(request, RunCreate, server_of(request).limits, empty=False)
    body = body.model_copy(update={"stream_mode": "values"})
    server, created, where = await _created(request, body, here=True)
    live = await server.runner.expect(created)
    try:
        await live.ended()
        if live.values is None and live.error is None:  # another process took it over: wait for its end
            await ended(server, created.row.run_id)
    except asyncio.CancelledError:
        if body.on_disconnect == "cancel":
            await asyncio.shield(_cancel(server, created.row.thread_id, created.row.run_id))
        raise
    result = await _values(server, live, created.row.thread_id)
    return Json(result, headers={"content-location": where, "location": f"{where}/join"})


async def create(request: Request) -> Response:
    """A background run: queued for whichever server or worker of the store takes it first."""
    body = await json_body(request, RunCreate, server_of(request).limits, empty=False)
    server, created, where = await _created(request, body, here=False)
    server.runner.wake()
    return Json(run_json(created.row, created.spec), headers={"content-location": where})


async def _run(
    request: Request, action: str, more: dict[str, Any] | None = None
) -> tuple[Server, Any, RunSpec | None]:
    """The run of the request's path, if its user may do `action` on its thread (404 when not)."""
    run_id = check_id(request.path_params["run_id"], "run_id")
    server, thread = await thread_of(request, action, {"run_id": run_id, **(more or {})})
    found = await run_in_threadpool(server.runs.get, thread.thread_id, run_id)
    if found is None:
        raise ApiError(404, f"run {run_id} of thread {thread.thread_id} not found")
    return server, found[0], found[1]


async def get(request: Request) -> Response:
    _, row, spec = await _run(request, "read")
    return Json(run_json(row, spec))


async def listing(request: Request) -> Response:
    server, thread = await thread_of(request, "search", {"metadata": {}})
    status = request.query_params.get("status")
    if status is not None and status not in _RUN_STATUSES:
        raise ApiError(422, f"status: {status[:40]!r} is not one of {', '.join(sorted(_RUN_STATUSES))}")
    limit, offset = query_int(request, "limit", 10, 1, 1000), query_int(request, "offset", 0, 0, 1_000_000)
    found = await run_in_threadpool(
        server.runs.listing, thread.thread_id, status=status, limit=limit, offset=offset
    )
    return Json([run_json(row, spec) for row, spec in found])


async def join(request: Request) -> Response:
    server, row, _ = await _run(request, "read")
    await ended(server, row.run_id)
    return Json(await _thread_values(server, row.thread_id))


async def join_stream(request: Request) -> Response:
    """Join a run's stream: its parts from the start, or after `Last-Event-ID` (a resumable run)."""
    server, row, spec = await _run(request, "read")
    where = {"content-location": f"/threads/{row.thread_id}/runs/{row.run_id}"}
    after = last_event_id(request.headers.get("last-event-id"))
    wanted = wanted_modes(request.query_params.getlist("stream_mode"))
    gone = None
    if request.query_params.get("cancel_on_disconnect") in ("1", "true", "True"):
        gone = _when_gone(server, row.thread_id, row.run_id)
    live = server.runner.following(row.run_id)
    if live is not None and (after is None or after + 1 >= live.first_id):
        start = 0 if after is None else after + 1 - live.first_id
        return SseResponse(live.follow(start, wanted), where, on_gone=gone)
    if spec is not None and spec.body.get("stream_resumable") is True:
        parts = kept_parts(server, row.run_id, -1 if after is None else after, wanted)
        return SseResponse(parts, where, on_gone=gone)
    return SseResponse(until_ended(server, row.run_id, wanted), where, on_gone=gone)


async def cancel(request: Request) -> Response:
    action = request.query_params.get("action", "interrupt")
    if action not in _ACTIONS:
        raise ApiError(422, f"action: {action[:40]!r} is not 'interrupt' or 'rollback'")
    server, row, _ = await _run(request, "update", {"action": action})
    await run_in_threadpool(server.runs.cancel, row.thread_id, row.run_id, action)
    server.runner.cancel(row.run_id)
    if request.query_params.get("wait") in ("1", "true", "True"):
        await ended(server, row.run_id)
    return Response(status_code=202)


async def delete(request: Request) -> Response:
    server, row, _ = await _run(request, "delete")
    if row.state in ("queued", "running"):
        raise ApiError(409, f"run {row.run_id} is {STATUS[row.state]}; cancel it first")
    await run_in_threadpool(server.runs.queue.delete, row.run_id)
    await run_in_threadpool(server.events.forget, row.run_id)
    return Response(status_code=204)


async def stream(request: Request) -> Response:
    return await _stream(request)


async def wait(request: Request) -> Response:
    return await _wait(request)


ROUTES: list[tuple[str, str, Any]] = [
    ("POST", "/threads/{thread_id}/runs/stream", stream),
    ("POST", "/threads/{thread_id}/runs/wait", wait),
    ("POST", "/threads/{thread_id}/runs", create),
    ("GET", "/threads/{thread_id}/runs", listing),
    ("GET", "/threads/{thread_id}/runs/{run_id}", get),
    ("DELETE", "/threads/{thread_id}/runs/{run_id}", delete),
    ("GET", "/threads/{thread_id}/runs/{run_id}/join", join),
    ("GET", "/threads/{thread_id}/runs/{run_id}/stream", join_stream),
    ("POST", "/threads/{thread_id}/runs/{run_id}/cancel", cancel),
    ("POST", "/runs/stream", stream),
    ("POST", "/runs/wait", wait),
    ("POST", "/runs", create),
]
