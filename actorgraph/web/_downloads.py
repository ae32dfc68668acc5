"""Whole values as downloads: a thread's state and a pending question, as JSON attachments.

The pages show a bounded preview of a large value and link here for the whole.
A download is an attachment (`Content-Disposition`), `application/json`,
`nosniff` (the guard adds it to every answer) and needs the token like any page.
"""

from __future__ import annotations

import re
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response

from actorgraph import ActorGraphError, ThreadNotFoundError
from actorgraph._api.text import interrupt_record
from actorgraph.web._pages import not_found
from actorgraph.web._site import site_of
from actorgraph.web._values import json_bytes

__all__ = ["question_json", "state_json"]

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def _attachment(value: Any, thread_id: str, what: str) -> Response:
    name = _UNSAFE.sub("_", thread_id)[:60].strip("._") or "thread"
    headers = {"Content-Disposition": f'attachment; filename="{name}-{what}.json"'}
    return Response(json_bytes(value), media_type="application/json", headers=headers)


def _unreadable(exc: ActorGraphError) -> Response:
    return Response(f"{type(exc).__name__}: {exc}", 503, media_type="text/plain")


async def state_json(request: Request, thread_id: str) -> Response:
    """`/threads/{id}/state.json`: the thread's whole current state, as a JSON attachment."""
    site = site_of(request)
    try:
        snapshot = await run_in_threadpool(site.compiled.get_state, thread_id)
    except ThreadNotFoundError:
        return not_found(site, request, thread_id)
    except ActorGraphError as exc:
        return _unreadable(exc)
    return _attachment(snapshot.state, thread_id, "state")


async def question_json(request: Request, thread_id: str) -> Response:
    """`/threads/{id}/question.json?id=INTERRUPT`: a pending question's whole value, as a JSON attachment."""
    site = site_of(request)
    wanted = request.query_params.get("id", "")
    try:
        snapshot = await run_in_threadpool(site.compiled.get_state, thread_id)
    except ThreadNotFoundError:
        return not_found(site, request, thread_id)
    except ActorGraphError as exc:
        return _unreadable(exc)
    for pending in snapshot.interrupts:
        if pending.id == wanted:
            return _attachment(interrupt_record(pending), thread_id, "question")
    message = "this thread waits for no question with that id (answered already, or never asked)"
    return site.problem(request, 404, "No such question", message, thread_id=thread_id)
