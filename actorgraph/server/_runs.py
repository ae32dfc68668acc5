"""The run routes: stream, wait and start a run (on a thread, or stateless); list, get, join, cancel, delete.

A streamed run answers with `Content-Location: /threads/{thread_id}/runs/{run_id}`
and `Location: .../stream` (where a client reconnects); a waited one with
`Location: .../join`. The run goes on when a streaming client leaves
(`on_disconnect="continue"`), unless it asked for `"cancel"`.
"""

from __future__ import annotations

import asyncio
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response

from actorgraph.server._body import ApiError, check_id, json_body, query_int
from actorgraph.server._context import Json, Server, server_of
from actorgraph.server._execute import Started, new_id
from actorgraph.server._live import SseResponse
from actorgraph.server._models import RunCreate
from actorgraph.server._tables import RunRow
from actorgraph.server._wire import iso

__all__ = ["ROUTES", "run_json"]

_RUN_STATUSES = frozenset({"pending", "running", "error", "success", "timeout", "interrupted"})


def run_json(row: RunRow) -> dict[str, Any]:
    """A run as the API shows it."""
    return {
        "run_id": row.run_id,
        "thread_id": row.thread_id,
        "assistant_id": row.assistant_id,
        "created_at": iso(row.created_at),
        "updated_at": iso(row.updated_at),
        "status": row.status,
        "metadata": row.metadata,
        "kwargs": row.kwargs,
        "multitask_strategy": row.multitask_strategy,
    }


async def _started(request: Request, body: RunCreate, *, stateless: bool) -> tuple[Server, Started, str]:
    """Start the request's run; and the path of its run resource."""
    server = server_of(request)
    served = server.assistant(body.assistant_id)
    if stateless:
        thread_id = new_id()
        started = await server.runner.start(
            served, body, thread_id, create=True, temporary=body.on_completion == "delete"
        )
        return server, started, f"/runs/{started.row.run_id}"
    thread_id = check_id(request.path_params["thread_id"], "thread_id")
    if body.after_seconds:
        await asyncio.sleep(body.after_seconds)
    started = await server.runner.start(served, body, thread_id, create=body.if_not_exists == "create")
    return server, started, f"/threads/{thread_id}/runs/{started.row.run_id}"


async def _stream(request: Request, *, stateless: bool) -> Response:
    body = await json_body(request, RunCreate, server_of(request).limits, empty=False)
    server, started, where = await _started(request, body, stateless=stateless)
    run_id = started.row.run_id

    def gone() -> None:
        if body.on_disconnect == "cancel":
            server.runner.cancel(run_id)

    headers = {"content-location": where, "location": f"{where}/stream"}
    return SseResponse(started.live.follow(), headers, on_gone=gone)


async def stream(request: Request) -> Response:
    return await _stream(request, stateless=False)


async def stream_stateless(request: Request) -> Response:
    return await _stream(request, stateless=True)


async def _wait(request: Request, *, stateless: bool) -> Response:
    body = await json_body(request, RunCreate, server_of(request).limits, empty=False)
    body = body.model_copy(update={"stream_mode": "values"})
    server, started, where = await _started(request, body, stateless=stateless)
    live = started.live
    try:
        await live.ended()
    except asyncio.CancelledError:
        if body.on_disconnect == "cancel":
            server.runner.cancel(started.row.run_id)
        raise
    result = {"__error__": live.error} if live.error is not None else live.values
    return Json(result, headers={"content-location": where, "location": f"{where}/join"})


async def wait(request: Request) -> Response:
    return await _wait(request, stateless=False)


async def wait_stateless(request: Request) -> Response:
    return await _wait(request, stateless=True)


async def create(request: Request) -> Response:
    """A run in the background of this server (phase 1: it lives in this process)."""
    body = await json_body(request, RunCreate, server_of(request).limits, empty=False)
    _, started, where = await _started(request, body, stateless="thread_id" not in request.path_params)
    return Json(run_json(started.row), headers={"content-location": where})


async def _run(request: Request) -> tuple[Server, RunRow]:
    server = server_of(request)
    row = await server.thread(request.path_params["thread_id"])
    run_id = check_id(request.path_params["run_id"], "run_id")
    found = await run_in_threadpool(server.tables.run, row.thread_id, run_id)
    if found is None:
        raise ApiError(404, f"run {run_id} of thread {row.thread_id} not found")
    return server, found


async def get(request: Request) -> Response:
    _, row = await _run(request)
    return Json(run_json(row))


async def listing(request: Request) -> Response:
    server = server_of(request)
    row = await server.thread(request.path_params["thread_id"])
    status = request.query_params.get("status")
    if status is not None and status not in _RUN_STATUSES:
        raise ApiError(422, f"status: {status[:40]!r} is not one of {', '.join(sorted(_RUN_STATUSES))}")
    limit, offset = query_int(request, "limit", 10, 1, 1000), query_int(request, "offset", 0, 0, 1_000_000)
    found = await run_in_threadpool(
        server.tables.runs, row.thread_id, status=status, limit=limit, offset=offset
    )
    return Json([run_json(r) for r in found])


async def join(request: Request) -> Response:
    server, row = await _run(request)
    live = server.runner.live.get(row.run_id)
    if live is not None:
        await live.ended()
    thread = await server.thread(row.thread_id)
    served = server.state.graph_of(thread)
    snap = await run_in_threadpool(server.state.snapshot, served, row.thread_id)
    if served is None or snap is None:
        return Json(None)
    return Json(server.state.state_json(served, snap)["values"])


async def join_stream(request: Request) -> Response:
    server, row = await _run(request)
    live = server.runner.live.get(row.run_id)
    where = f"/threads/{row.thread_id}/runs/{row.run_id}"
    if live is None:  # ended: nothing more will come
        return SseResponse(_nothing(), {"content-location": where})
    return SseResponse(live.follow(), {"content-location": where})


async def _nothing() -> Any:
    return
    yield


async def cancel(request: Request) -> Response:
    server, row = await _run(request)
    live = server.runner.live.get(row.run_id)
    if live is not None:
        server.runner.cancel(row.run_id)
        if request.query_params.get("wait") in ("1", "true", "True"):
            await live.ended()
    return Response(status_code=202)


async def delete(request: Request) -> Response:
    server, row = await _run(request)
    if row.status in ("pending", "running"):
        raise ApiError(409, f"run {row.run_id} is {row.status}; cancel it first")
    await run_in_threadpool(server.tables.delete_run, row.thread_id, row.run_id)
    return Response(status_code=204)


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
    ("POST", "/runs/stream", stream_stateless),
    ("POST", "/runs/wait", wait_stateless),
    ("POST", "/runs", create),
]
