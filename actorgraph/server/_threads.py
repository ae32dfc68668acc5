"""The thread routes: create, get, search, count, patch, delete, copy, state (get, update), history."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response

from actorgraph.server._access import allowed
from actorgraph.server._body import ApiError, check_id, json_body, query_int
from actorgraph.server._context import Json, Server, server_of, thread_of
from actorgraph.server._execute import new_id
from actorgraph.server._models import (
    HistoryRequest,
    StateCheckpoint,
    StateUpdate,
    ThreadCount,
    ThreadCreate,
    ThreadPatch,
    ThreadSearch,
)
from actorgraph.server._owners import Filter
from actorgraph.server._state import empty_state, status_of, thread_json
from actorgraph.server._tables import ThreadRow

__all__ = ["ROUTES"]

_SCAN = 10_000  # threads read to filter by metadata or values (the filters are applied here, not in SQL)


def _shown(server: Server, row: ThreadRow) -> dict[str, Any]:
    served = server.state.graph_of(row)
    return thread_json(row, served, server.state.snapshot(served, row.thread_id))


async def create(request: Request) -> Response:
    server = server_of(request)
    body = await json_body(request, ThreadCreate, server.limits)
    thread_id = body.thread_id or new_id()
    value = {"thread_id": thread_id, "metadata": dict(body.metadata or {}), "if_exists": body.if_exists}
    access = await allowed(request, "threads", "create", value)
    row = await run_in_threadpool(
        server.tables.put_thread, thread_id, access.metadata(), if_exists=body.if_exists, where=access.where
    )
    if row is None:
        raise ApiError(409, f"thread {thread_id} exists already (send if_exists='do_nothing' to get it)")
    if body.supersteps:
        await run_in_threadpool(_supersteps, server, row, body.supersteps)
    return Json(await run_in_threadpool(_shown, server, row))


def _supersteps(server: Server, row: ThreadRow, supersteps: list[dict[str, Any]]) -> None:
    served = server.state.graph_of(row)
    if served is None:
        raise ApiError(422, "supersteps: the thread has no graph yet; give metadata.graph_id")
    steps = []
    for step in supersteps:
        updates = step.get("updates") if isinstance(step, Mapping) else None
        if not isinstance(updates, list):
            raise ApiError(
                422, "supersteps: each superstep is {'updates': [{'values': ..., 'as_node': ...}]}"
            )
        steps.append(
            [(u.get("values"), u.get("as_node")) if u.get("as_node") else u.get("values") for u in updates]
        )
    served.app.bulk_update_state(row.thread_id, steps)


async def get(request: Request) -> Response:
    server, row = await thread_of(request, "read")
    return Json(await run_in_threadpool(_shown, server, row))


def _contains(found: Any, wanted: Mapping[str, Any]) -> bool:
    return isinstance(found, Mapping) and all(k in found and found[k] == v for k, v in wanted.items())


def _search(server: Server, body: ThreadSearch | ThreadCount, where: Filter | None) -> list[dict[str, Any]]:
    ids = getattr(body, "ids", None)
    sort = (getattr(body, "sort_by", "created_at"), getattr(body, "sort_order", "desc"))
    filtered = bool(body.metadata or body.values)
    wanted = body.offset + body.limit if isinstance(body, ThreadSearch) and not filtered else _SCAN
    rows = server.tables.threads(status=body.status, ids=ids, sort=sort, limit=wanted, where=where)
    if body.metadata:
        rows = [r for r in rows if _contains(r.metadata, body.metadata)]
    shown = [_shown(server, r) for r in rows] if not isinstance(body, ThreadCount) or body.values else []
    if body.values:
        shown = [t for t in shown if _contains(t["values"], body.values)]
    if isinstance(body, ThreadCount):
        return shown if body.values else [{} for _ in rows]
    if filtered:
        return shown[body.offset : body.offset + body.limit]
    return shown[body.offset :]


def _searched(body: ThreadSearch | ThreadCount) -> dict[str, Any]:
    """What `threads.search` handlers are given (LangGraph's `ThreadsSearch`: metadata always a dict)."""
    shown = body.model_dump(mode="json", include={"status", "limit", "offset", "ids"})
    return {**shown, "metadata": dict(body.metadata or {}), "values": dict(body.values or {})}


async def search(request: Request) -> Response:
    server = server_of(request)
    body = await json_body(request, ThreadSearch, server.limits)
    access = await allowed(request, "threads", "search", _searched(body))
    return Json(await run_in_threadpool(_search, server, body, access.where))


async def count(request: Request) -> Response:
    server = server_of(request)
    body = await json_body(request, ThreadCount, server.limits)
    access = await allowed(request, "threads", "search", _searched(body))
    return Json(len(await run_in_threadpool(_search, server, body, access.where)))


async def patch(request: Request) -> Response:
    server = server_of(request)
    thread_id = check_id(request.path_params["thread_id"], "thread_id")
    body = await json_body(request, ThreadPatch, server.limits)
    access = await allowed(
        request, "threads", "update", {"thread_id": thread_id, "metadata": dict(body.metadata)}
    )
    row = await server.thread(thread_id, access.where)
    changed = await run_in_threadpool(
        server.tables.patch_thread, row.thread_id, access.metadata(), access.where
    )
    if changed is None:
        raise ApiError(404, f"thread {row.thread_id} not found")
    return Json(await run_in_threadpool(_shown, server, changed))


async def delete(request: Request) -> Response:
    server, row = await thread_of(request, "delete")
    for run in await run_in_threadpool(
        server.runs.queue.runs_of, row.thread_id, states=("queued", "running")
    ):
        await run_in_threadpool(server.runs.cancel, row.thread_id, run.run_id, "interrupt")
        live = server.runner.live.get(run.run_id)
        if server.runner.cancel(run.run_id) and live is not None:  # one going on here ends before its thread
            await live.ended()
    if server.crons is not None:  # its crons go with it (a thread made again by that id has none)
        await run_in_threadpool(server.crons.delete_of_thread, row.thread_id)
    await run_in_threadpool(server.forget, row.thread_id)
    return Response(status_code=204)


async def copy(request: Request) -> Response:
    server, row = await thread_of(request, "read")
    target = new_id()
    made = await allowed(request, "threads", "create", {"thread_id": target, "metadata": dict(row.metadata)})
    copied = await run_in_threadpool(server.tables.put_thread, target, made.metadata(), if_exists="raise")
    served = server.state.graph_of(row)
    if served is not None:
        await run_in_threadpool(server.state.copy, served, row.thread_id, target)
    assert copied is not None  # noqa: S101 - a new id
    return Json(await run_in_threadpool(_shown, server, copied))


async def _state_at(request: Request, checkpoint_id: str | None) -> Response:
    server, row = await thread_of(request, "read")
    served = server.state.graph_of(row)
    snap = await run_in_threadpool(server.state.snapshot, served, row.thread_id, checkpoint_id)
    if served is None or snap is None:
        return Json(empty_state(row.thread_id))
    return Json(server.state.state_json(served, snap))


async def get_state(request: Request) -> Response:
    return await _state_at(request, None)


async def get_state_at(request: Request) -> Response:
    return await _state_at(request, check_id(request.path_params["checkpoint_id"], "checkpoint_id"))


async def state_at_checkpoint(request: Request) -> Response:
    body = await json_body(request, StateCheckpoint, server_of(request).limits)
    return await _state_at(request, body.checkpoint.checkpoint_id)


async def update_state(request: Request) -> Response:
    server, row = await thread_of(request, "update")
    body = await json_body(request, StateUpdate, server.limits)
    if row.status == "busy":
        raise ApiError(409, f"thread {row.thread_id} has a run going on; update its state when it ended")
    served = server.state.graph_of(row)
    if served is None:
        raise ApiError(
            422, f"thread {row.thread_id} has no graph yet: run it first, or give metadata.graph_id"
        )
    checkpoint_id = body.checkpoint_id or (body.checkpoint.checkpoint_id if body.checkpoint else None)
    made = await run_in_threadpool(
        server.state.update,
        served,
        row.thread_id,
        body.values,
        as_node=body.as_node,
        checkpoint_id=checkpoint_id,
    )
    snap = await run_in_threadpool(server.state.snapshot, served, row.thread_id)
    await run_in_threadpool(server.tables.set_thread, row.thread_id, status_of(snap))
    return Json({"checkpoint": {"thread_id": row.thread_id, "checkpoint_ns": "", "checkpoint_id": made}})


async def history(request: Request) -> Response:
    server, row = await thread_of(request, "read")
    if request.method == "GET":
        limit = query_int(request, "limit", 10, 1, 1000)
        before, metadata = request.query_params.get("before"), None
    else:
        body = await json_body(request, HistoryRequest, server.limits)
        limit, metadata = body.limit, body.metadata
        before = (
            body.before if isinstance(body.before, str) or body.before is None else body.before.checkpoint_id
        )
    served = server.state.graph_of(row)
    found = await run_in_threadpool(
        server.state.history, served, row.thread_id, limit=limit, before=before, metadata=metadata
    )
    return Json(found)


ROUTES: list[tuple[str, str, Any]] = [
    ("POST", "/threads", create),
    ("POST", "/threads/search", search),
    ("POST", "/threads/count", count),
    ("GET", "/threads/{thread_id}", get),
    ("PATCH", "/threads/{thread_id}", patch),
    ("DELETE", "/threads/{thread_id}", delete),
    ("POST", "/threads/{thread_id}/copy", copy),
    ("GET", "/threads/{thread_id}/state", get_state),
    ("POST", "/threads/{thread_id}/state", update_state),
    ("POST", "/threads/{thread_id}/state/checkpoint", state_at_checkpoint),
    ("GET", "/threads/{thread_id}/state/{checkpoint_id}", get_state_at),
    ("GET", "/threads/{thread_id}/history", history),
    ("POST", "/threads/{thread_id}/history", history),
]
