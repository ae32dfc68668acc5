"""The pages: the inbox, a thread, the runs, and the thread's status (JSON) and picture (SVG)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response

from actorgraph import ActorGraphError, Interrupt, Snapshot, ThreadNotFoundError, VertexResult
from actorgraph.checkpoint import ThreadInfo
from actorgraph.web._picture import has_dot, svg
from actorgraph.web._site import Site, site_of
from actorgraph.web._values import as_json

__all__ = ["STATUSES", "graph_svg", "inbox", "not_found", "runs", "status_json", "thread", "thread_page"]

STATUSES = ("interrupted", "error", "running", "done", "all")


@dataclass(frozen=True, slots=True)
class Waiting:
    """A thread in the inbox, with the questions it waits for."""

    info: ThreadInfo
    pending: tuple[Interrupt, ...]


def not_found(site: Site, request: Request, thread_id: str) -> Response:
    """The 404 page of a thread the store does not have."""
    return site.page(request, "missing.html", 404, thread_id=thread_id)


def _inbox_rows(site: Site, status: str, q: str) -> list[Waiting]:
    infos = site.store.threads(status=None if status == "all" else status)
    rows = []
    for info in sorted(infos, key=lambda i: i.updated_at, reverse=True):
        if q and q.lower() not in info.thread_id.lower():
            continue
        pending = site.compiled.get_state(info.thread_id).interrupts if info.status == "interrupted" else ()
        rows.append(Waiting(info, pending))
    return rows


async def inbox(request: Request) -> Response:
    """`/`: the threads waiting for an answer (or of `?status=`), newest first, `?q=` searching ids."""
    site = site_of(request)
    status = request.query_params.get("status", "interrupted")
    q = request.query_params.get("q", "").strip()
    if status not in STATUSES:
        return PlainTextResponse(f"unknown status {status!r}; one of {', '.join(STATUSES)}", 400)
    rows = await run_in_threadpool(_inbox_rows, site, status, q)
    return site.page(request, "inbox.html", rows=rows, status=status, q=q, statuses=STATUSES)


def _timeline(history: list[Snapshot[Any]]) -> list[tuple[int, VertexResult]]:
    """Every recorded task outcome, oldest superstep first (a pending superstep's too)."""
    seen: set[tuple[int, str, str]] = set()
    rows = []
    for past in reversed(history):
        for result in past.superstep.results.values():
            key = (past.superstep.step, result.task_id, result.status)
            if key not in seen:
                seen.add(key)
                rows.append((past.superstep.step, result))
    return rows


def _thread_values(site: Site, thread_id: str) -> dict[str, Any]:
    running = site.ledger.running(thread_id)  # first: a run ending while the store is read shows running
    snapshot = site.compiled.get_state(thread_id)
    history = site.compiled.get_history(thread_id)
    return {
        "thread_id": thread_id,
        "snapshot": snapshot,
        "status": "running" if running else snapshot.status,
        "running": running,
        "history": history,
        "timeline": _timeline(history),
        "answered": {p.id: site.ledger.answered(p.id) for p in snapshot.interrupts},
        "failure": site.ledger.failure(thread_id),
        "has_dot": has_dot(),
        "mermaid": "" if has_dot() else site.compiled.draw_mermaid(thread_id),
    }


async def thread_page(request: Request, thread_id: str, code: int = 200, **more: Any) -> Response:
    """A thread's page (`more`: an error shown inline, next to the form it is about)."""
    site = site_of(request)
    try:
        values = await run_in_threadpool(_thread_values, site, thread_id)
    except ThreadNotFoundError:
        return not_found(site, request, thread_id)
    return site.page(request, "thread.html", code, **(values | more))


async def thread(request: Request) -> Response:
    """`/threads/{id}`: status, questions with their forms, picture, supersteps, state, history."""
    return await thread_page(request, request.path_params["thread_id"])


def _status(site: Site, thread_id: str) -> dict[str, Any]:
    running = site.ledger.running(thread_id)  # before the snapshot (see _thread_values)
    snapshot = site.compiled.get_state(thread_id)
    return {
        "thread_id": thread_id,
        "status": "running" if running else snapshot.status,
        "running": running,
        "step": snapshot.step,
        "interrupts": [p.id for p in snapshot.interrupts],
        "failure": site.ledger.failure(thread_id),
        "state": as_json(snapshot.state),
    }


async def status_json(request: Request) -> Response:
    """`/threads/{id}/status.json`: what the page polls while a run goes on."""
    site, thread_id = site_of(request), request.path_params["thread_id"]
    try:
        return JSONResponse(await run_in_threadpool(_status, site, thread_id))
    except ThreadNotFoundError:
        return JSONResponse({"error": f"no thread {thread_id!r}"}, 404)


def _svg(site: Site, thread_id: str) -> bytes:
    site.compiled.get_state(thread_id)  # an unknown thread is a 404, not a picture without colours
    return svg(site.compiled, thread_id)


async def graph_svg(request: Request) -> Response:
    """`/threads/{id}/graph.svg`: the graph, each vertex coloured by its last status in the thread."""
    site, thread_id = site_of(request), request.path_params["thread_id"]
    try:
        picture = await run_in_threadpool(_svg, site, thread_id)
    except ThreadNotFoundError:
        return PlainTextResponse(f"no thread {thread_id!r}", 404)
    except ActorGraphError as exc:  # no `dot`: the thread page shows the Mermaid text instead
        return PlainTextResponse(str(exc), 503)
    return Response(picture, media_type="image/svg+xml")


def _failures(site: Site) -> tuple[Counter[str], list[tuple[ThreadInfo, list[VertexResult]]]]:
    infos = site.store.threads()
    counts = Counter(info.status for info in infos)
    failed = []
    for info in infos:
        if info.status == "error":
            results = site.compiled.get_state(info.thread_id).superstep.results.values()
            failed.append((info, [r for r in results if r.status == "error"]))
    return counts, failed


async def runs(request: Request) -> Response:
    """`/runs`: how many threads run, failed, are done or wait; the failures with their errors."""
    site = site_of(request)
    counts, failed = await run_in_threadpool(_failures, site)
    return site.page(request, "runs.html", counts=counts, failed=failed, statuses=STATUSES[:-1])
