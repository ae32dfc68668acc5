"""The pages: the inbox, a thread, the runs, and the thread's status (JSON) and picture (SVG).

A thread the store cannot read (a damaged row, a class the serializer does not
allow) never takes a page down: the inbox lists it as damaged with the error,
its own page shows the error and its checkpoints, and the other threads are
served as usual.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response

from actorgraph import ActorGraphError, Interrupt, Snapshot, ThreadNotFoundError, VertexResult
from actorgraph._api.text import dumps
from actorgraph.checkpoint import Checkpointer, CheckpointRow, ThreadInfo
from actorgraph.checkpoint._store import thread_counts
from actorgraph.web._ids import segment
from actorgraph.web._picture import has_dot, svg
from actorgraph.web._site import Site, site_of
from actorgraph.web._values import as_json, json_bytes, size_text

__all__ = [
    "HISTORY",
    "INBOX_ROWS",
    "SEARCH_PAGE",
    "STATUSES",
    "graph_svg",
    "inbox",
    "not_found",
    "runs",
    "status_json",
    "thread",
    "thread_page",
]

STATUSES = ("interrupted", "error", "running", "done", "all")
INBOX_ROWS = 200  # threads the inbox lists at once (search for others)
SEARCH_PAGE = 1000  # threads a search of ids reads from the store at a time
HISTORY = 50  # checkpoints a thread page shows (and reads its timeline from)
STATUS_STATE = 256 * 1024  # characters of a state that status.json carries; larger ones are linked


@dataclass(frozen=True, slots=True)
class Waiting:
    """A thread in the inbox, with the questions it waits for (or why it cannot be read)."""

    info: ThreadInfo
    pending: tuple[Interrupt, ...]
    problem: str = ""


def _problem(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


def _unreadable(info: ThreadInfo, exc: BaseException) -> str:
    return f"its newest checkpoint {info.head} cannot be read: {_problem(exc)}"


def not_found(site: Site, request: Request, thread_id: str) -> Response:
    """The 404 page of a thread the store does not have."""
    return site.page(request, "missing.html", 404, thread_id=thread_id)


def _row(site: Site, info: ThreadInfo) -> Waiting | None:
    if info.status != "interrupted":
        return Waiting(info, ())
    try:
        return Waiting(info, site.compiled.get_state(info.thread_id).interrupts)
    except ThreadNotFoundError:
        return None  # deleted since it was listed
    except ActorGraphError as exc:  # damaged: listed with what is wrong, the other rows go on
        return Waiting(info, (), _unreadable(info, exc))


def _listed(store: Checkpointer, status: str | None, q: str) -> list[ThreadInfo]:
    """Up to `INBOX_ROWS` + 1 threads (newest first) whose ids contain `q`, read a page at a time.

    Without a search this is one page of the store's index, whatever the number
    of threads; a search reads pages of `SEARCH_PAGE` until it has found enough
    (or read them all).
    """
    if not q:
        return store.threads(status=status, limit=INBOX_ROWS + 1)
    found: list[ThreadInfo] = []
    after: ThreadInfo | None = None
    while len(found) <= INBOX_ROWS:
        page = store.threads(status=status, limit=SEARCH_PAGE, after=after)
        found += [info for info in page if q.lower() in str(info.thread_id).lower()]  # a damaged id: bytes
        if len(page) < SEARCH_PAGE:
            break
        after = page[-1]
    return found[: INBOX_ROWS + 1]


def _inbox_rows(site: Site, status: str, q: str) -> tuple[list[Waiting], bool]:
    """The inbox's rows, and whether more threads match than it shows."""
    matching = _listed(site.store, None if status == "all" else status, q)
    rows = [row for info in matching[:INBOX_ROWS] if (row := _row(site, info)) is not None]
    return rows, len(matching) > INBOX_ROWS


async def inbox(request: Request) -> Response:
    """`/`: the threads waiting for an answer (or of `?status=`), newest first, `?q=` searching ids."""
    site = site_of(request)
    status = request.query_params.get("status", "interrupted")
    q = request.query_params.get("q", "").strip()[:256]
    if status not in STATUSES:
        message = f"unknown status {status[:40]!r}; one of {', '.join(STATUSES)}"
        return site.problem(request, 400, "Unknown status", message)
    rows, more = await run_in_threadpool(_inbox_rows, site, status, q)
    return site.page(request, "inbox.html", rows=rows, more=more, status=status, q=q, statuses=STATUSES)


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
    history = site.compiled.get_history(thread_id, limit=HISTORY)
    return {
        "thread_id": thread_id,
        "snapshot": snapshot,
        "status": "running" if running else snapshot.status,
        "running": running,
        "history": history,
        "older": len(history) == HISTORY,
        "timeline": _timeline(history),
        "failure": site.ledger.failure(thread_id),
        "has_dot": has_dot(),
        "mermaid": "" if has_dot() else site.compiled.draw_mermaid(thread_id),
    }


def _checkpoints(site: Site, thread_id: str) -> list[CheckpointRow] | str:
    """The thread's checkpoints as stored (not decoded), or why even they cannot be listed."""
    try:
        return site.store.history(thread_id, limit=HISTORY)
    except ActorGraphError as exc:
        return _problem(exc)


async def thread_page(request: Request, thread_id: str, code: int = 200, **more: Any) -> Response:
    """A thread's page (`more`: an error shown inline, next to the form it is about)."""
    site = site_of(request)
    try:
        values = await run_in_threadpool(_thread_values, site, thread_id)
    except ThreadNotFoundError:
        return not_found(site, request, thread_id)
    except ActorGraphError as exc:  # a damaged thread: its page says what is wrong
        rows = await run_in_threadpool(_checkpoints, site, thread_id)
        values = {"thread_id": thread_id, "problem": _problem(exc), "checkpoints": rows}
        return site.page(request, "damaged.html", code, **values)
    return site.page(request, "thread.html", code, **(values | more))


async def thread(request: Request, thread_id: str) -> Response:
    """`/threads/{id}`: status, questions with their forms, picture, supersteps, state, history."""
    return await thread_page(request, thread_id)


def _status(site: Site, thread_id: str, base: str) -> dict[str, Any]:
    running = site.ledger.running(thread_id)  # before the snapshot (see _thread_values)
    try:
        snapshot = site.compiled.get_state(thread_id)
    except ThreadNotFoundError:
        raise
    except ActorGraphError as exc:
        return {"thread_id": thread_id, "status": "damaged", "running": running, "error": _problem(exc)}
    state = as_json(snapshot.state)
    size = len(dumps(state))
    return {
        "thread_id": thread_id,
        "status": "running" if running else snapshot.status,
        "running": running,
        "step": snapshot.step,
        "interrupts": [p.id for p in snapshot.interrupts],
        "failure": site.ledger.failure(thread_id),
        "state": state if size <= STATUS_STATE else None,
        "state_size": size_text(size),
        "state_url": f"{base}/threads/{segment(thread_id)}/state.json",
    }


async def status_json(request: Request, thread_id: str) -> Response:
    """`/threads/{id}/status.json`: what scripts poll while a run goes on (a large state is linked)."""
    site = site_of(request)
    base = str(request.scope.get("root_path", "")).rstrip("/")
    try:
        found = await run_in_threadpool(_status, site, thread_id, base)
    except ThreadNotFoundError:
        return Response(json_bytes({"error": f"no thread {thread_id!r}"}), 404, media_type="application/json")
    return Response(json_bytes(found), media_type="application/json")


def _svg(site: Site, thread_id: str) -> bytes:
    site.compiled.get_state(thread_id)  # an unknown thread is a 404, not a picture without colours
    return svg(site.compiled, thread_id)


async def graph_svg(request: Request, thread_id: str) -> Response:
    """`/threads/{id}/graph.svg`: the graph, each vertex coloured by its last status in the thread."""
    site = site_of(request)
    try:
        picture = await run_in_threadpool(_svg, site, thread_id)
    except ThreadNotFoundError:
        return Response(f"no thread {thread_id!r}", 404, media_type="text/plain")
    except ActorGraphError as exc:  # no `dot`, or a damaged thread: the page says it in words
        return Response(_problem(exc), 503, media_type="text/plain")
    return Response(picture, media_type="image/svg+xml")


def _failures(site: Site) -> tuple[Counter[str], list[tuple[ThreadInfo, list[VertexResult], str]]]:
    """The threads counted by status, and the newest `INBOX_ROWS` failed ones with their errors.

    The store counts (one query on its status index) and lists one page of the
    failed threads, so the page costs about the same in a store of ten threads
    or of a million.
    """
    counts = Counter(thread_counts(site.store))
    failed: list[tuple[ThreadInfo, list[VertexResult], str]] = []
    for info in site.store.threads(status="error", limit=INBOX_ROWS):
        try:
            results = site.compiled.get_state(info.thread_id).superstep.results.values()
        except ThreadNotFoundError:
            continue
        except ActorGraphError as exc:
            failed.append((info, [], _unreadable(info, exc)))
            continue
        failed.append((info, [r for r in results if r.status == "error"], ""))
    return counts, failed


async def runs(request: Request) -> Response:
    """`/runs`: how many threads run, failed, are done or wait; the failures with their errors."""
    site = site_of(request)
    counts, failed = await run_in_threadpool(_failures, site)
    return site.page(request, "runs.html", counts=counts, failed=failed, statuses=STATUSES[:-1])
