"""The cron routes: create a cron (on a thread, or a new thread each tick), search, count, get, patch, delete.

What `langgraph-sdk`'s `client.crons` calls. A cron is a row of
`actorgraph_crons` (`_crons.py`); the scheduler of every server and worker of
the store queues its runs (`_scheduler.py`). A cron is shown as LangGraph's
server shows one: its ids, schedule and zone, `next_run_date`, `end_time`,
`enabled`, `on_run_completed`, its metadata, and its `payload` (the run each
tick queues). Every refusal is a 4xx `{"detail": ...}` naming the field.

With an auth handler each route asks it first (`crons.create`, `read`,
`update`, `delete`, `search`, as LangGraph's server names them): the metadata
it leaves is the new cron's, its filter is in every query of the crons'
table, so another user's cron is a 404 and is in no search; a cron on a
thread also needs the user's right to run on that thread (`threads.create_run`).
"""

from __future__ import annotations

import time
from typing import Any

from pydantic import ValidationError
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response

from actorgraph.server._access import allowed
from actorgraph.server._body import ApiError, check_id, json_body, validation_detail
from actorgraph.server._context import Json, Server, server_of
from actorgraph.server._cron_models import CronCount, CronCreate, CronPatch, CronSearch
from actorgraph.server._cron_rows import Cron
from actorgraph.server._cron_specs import new_cron, patched, tick_request
from actorgraph.server._crons import CronFilter, CronTable
from actorgraph.server._execute import run_input, run_keywords
from actorgraph.server._graphs import NotFoundError
from actorgraph.server._users import User
from actorgraph.server._wire import iso

__all__ = ["ROUTES", "cron_json"]


def cron_json(cron: Cron, select: list[str] | None = None) -> dict[str, Any]:
    """A cron as the API shows it (only the fields of `select`, when given)."""
    shown = {
        "cron_id": cron.cron_id,
        "assistant_id": cron.assistant_id,
        "thread_id": cron.thread_id,
        "user_id": cron.user_id,
        "end_time": iso(cron.end_time),
        "schedule": cron.schedule,
        "timezone": cron.timezone,
        "payload": {**(cron.payload or {}), "assistant_id": cron.assistant_id},
        "next_run_date": iso(cron.next_run_at),
        "metadata": cron.metadata,
        "on_run_completed": cron.on_run_completed,
        "enabled": cron.enabled,
        "created_at": iso(cron.created_at),
        "updated_at": iso(cron.updated_at),
    }
    return shown if select is None else {k: v for k, v in shown.items() if k in select}


def _table(server: Server) -> CronTable:
    assert server.crons is not None  # noqa: S101 - server_parts gives every server its crons' table
    return server.crons


def _check_run(server: Server, cron: Cron) -> Cron:
    """Refuse a cron whose run the graph would refuse at every tick (a breakpoint naming no vertex, ...).

    A cron of a graph this server does not serve is not checked (a server of that graph runs it).
    """
    try:
        served = server.graphs.get(cron.graph)
    except NotFoundError:
        return cron
    try:
        request, _ = tick_request(cron)
    except ValidationError as exc:
        raise ApiError(422, validation_detail(exc)) from None
    run_input(request)
    run_keywords(served, request, cron.thread_id or cron.cron_id)
    return cron


def _woken(server: Server) -> None:
    if server.scheduler is not None:
        server.scheduler.wake()


async def create(request: Request) -> Response:
    """Create a cron: a run of the assistant at each tick of `schedule` (on the thread, or a new one)."""
    server = server_of(request)
    body = await json_body(request, CronCreate, server.limits, empty=False)
    served = server.assistant(body.assistant_id)
    thread_id = request.path_params.get("thread_id")
    if thread_id is not None:
        check_id(thread_id, "thread_id")
        running = await allowed(
            request, "threads", "create_run", {"thread_id": thread_id, "assistant_id": served.assistant_id}
        )
        thread_id = (await server.thread(thread_id, running.where)).thread_id
    value = {
        "assistant_id": served.assistant_id,
        "thread_id": thread_id,
        "schedule": body.schedule,
        "metadata": dict(body.metadata or {}),
    }
    access = await allowed(request, "crons", "create", value)
    body = body.model_copy(update={"metadata": access.metadata()})
    user = request.scope.get("user")
    cron = new_cron(
        body,
        graph=served.name,
        assistant_id=served.assistant_id,
        thread_id=thread_id,
        now=time.time(),
        user_id=user.identity if isinstance(user, User) else None,
    )
    await run_in_threadpool(_table(server).put, _check_run(server, cron))
    _woken(server)
    return Json(cron_json(cron))


def _assistant(server: Server, given: str | None) -> str | None:
    """What a search's `assistant_id` matches: a served graph's name, else the text given (a name or id)."""
    if given is None:
        return None
    try:
        return str(server.graphs.get(given).name)
    except NotFoundError:
        return given


async def search(request: Request) -> Response:
    """Search crons: by assistant, thread, enabled and metadata, sorted, one page."""
    server = server_of(request)
    body = await json_body(request, CronSearch, server.limits)
    access = await allowed(request, "crons", "search", _searched(body))
    table, assistant = _table(server), _assistant(server, body.assistant_id)
    found = CronFilter(assistant, body.thread_id, body.enabled, body.metadata, access.where)
    sort = (body.sort_by, body.sort_order)
    crons = await run_in_threadpool(
        lambda: table.search(found, sort=sort, limit=body.limit, offset=body.offset)
    )
    total = await run_in_threadpool(table.count, found)
    select = [str(field) for field in body.select] if body.select else None
    return Json([cron_json(c, select) for c in crons], headers={"x-pagination-total": str(total)})


async def count(request: Request) -> Response:
    """Count crons: by assistant, thread, enabled and metadata."""
    server = server_of(request)
    body = await json_body(request, CronCount, server.limits)
    access = await allowed(request, "crons", "search", _searched(body))
    table, assistant = _table(server), _assistant(server, body.assistant_id)
    found = CronFilter(assistant, body.thread_id, body.enabled, body.metadata, access.where)
    return Json(await run_in_threadpool(table.count, found))


def _searched(body: CronSearch | CronCount) -> dict[str, Any]:
    """What a search asks for, as the `crons.search` handler is given it."""
    return {
        "assistant_id": body.assistant_id,
        "thread_id": body.thread_id,
        "enabled": body.enabled,
        "metadata": dict(body.metadata or {}),
    }


def _cron_id(request: Request) -> str:
    return check_id(request.path_params["cron_id"], "cron_id")


async def get(request: Request) -> Response:
    """A cron by id."""
    server, cron_id = server_of(request), _cron_id(request)
    access = await allowed(request, "crons", "read", {"cron_id": cron_id})
    cron = await run_in_threadpool(_table(server).get, cron_id, access.where)
    if cron is None:
        raise ApiError(404, f"cron {cron_id} not found")
    return Json(cron_json(cron))


async def patch(request: Request) -> Response:
    """Change a cron: its schedule, zone, end, whether it is enabled, its metadata, its run."""
    server, cron_id = server_of(request), _cron_id(request)
    body = await json_body(request, CronPatch, server.limits, empty=False)
    value = {"cron_id": cron_id, **({} if body.metadata is None else {"metadata": dict(body.metadata)})}
    access = await allowed(request, "crons", "update", value)
    if body.metadata is not None:
        body = body.model_copy(update={"metadata": access.metadata()})
    now = time.time()
    changed = await run_in_threadpool(
        _table(server).change,
        cron_id,
        lambda cron: _check_run(server, patched(cron, body, now=now)),
        access.where,
    )
    if changed is None:
        raise ApiError(404, f"cron {cron_id} not found")
    _woken(server)
    return Json(cron_json(changed))


async def delete(request: Request) -> Response:
    """Delete a cron (its runs already queued stay)."""
    server, cron_id = server_of(request), _cron_id(request)
    access = await allowed(request, "crons", "delete", {"cron_id": cron_id})
    if not await run_in_threadpool(_table(server).delete, cron_id, access.where):
        raise ApiError(404, f"cron {cron_id} not found")
    return Response(status_code=204)


ROUTES: list[tuple[str, str, Any]] = [
    ("POST", "/runs/crons", create),
    ("POST", "/threads/{thread_id}/runs/crons", create),
    ("POST", "/runs/crons/search", search),
    ("POST", "/runs/crons/count", count),
    ("GET", "/runs/crons/{cron_id}", get),
    ("PATCH", "/runs/crons/{cron_id}", patch),
    ("DELETE", "/runs/crons/{cron_id}", delete),
]
