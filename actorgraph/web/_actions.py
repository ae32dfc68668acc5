"""What changes something: answering, retrying, cancelling, logging in. Every POST checks CSRF."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import PlainTextResponse, RedirectResponse, Response

from actorgraph import ThreadNotFoundError
from actorgraph.web._guard import COOKIE, LIMIT, TooLarge, read_form
from actorgraph.web._ledger import Answered, Refused
from actorgraph.web._pages import not_found, thread_page
from actorgraph.web._site import Site, site_of
from actorgraph.web._values import choices_of, parse_json

__all__ = ["answer", "cancel", "login", "login_form", "retry"]

_NAME = 80  # characters of the "your name" field kept


class _Bad(Exception):  # noqa: N818 - an answer the form must show again
    """An answer that cannot be read (bad JSON, a choice that is not offered)."""


async def _form(request: Request) -> dict[str, str] | Response:
    """The posted form, or the response refusing it (413 too large, 403 without the CSRF token)."""
    try:
        form = await read_form(request)
    except TooLarge:
        return PlainTextResponse(f"413: a form is at most {LIMIT // 1024} KiB", 413)
    if not site_of(request).guard.csrf_matches(form):
        return PlainTextResponse("403: the form's CSRF token is missing or wrong; reload the page", 403)
    return form


def _to_thread(request: Request, thread_id: str) -> Response:
    base = str(request.scope.get("root_path", "")).rstrip("/")
    return RedirectResponse(f"{base}/threads/{quote(thread_id, safe='')}", status_code=303)


def _value(site: Site, thread_id: str, form: dict[str, str]) -> Any:
    """The answer the form gives: a choice (by its index among the offered ones), JSON, or text."""
    if "choice" in form:
        pending = {p.id: p for p in site.compiled.get_state(thread_id).interrupts}
        asked = pending.get(form.get("interrupt_id", ""))
        if asked is None:
            return None  # answered already or stale: the ledger refuses it and says which
        offered = choices_of(asked.value) or []
        index = form["choice"]
        if not index.isdigit() or int(index) >= len(offered):
            raise _Bad(f"no choice {index!r}: {len(offered)} are offered")
        return offered[int(index)]
    if "json" in form:
        try:
            return parse_json(form["json"])
        except ValueError as exc:
            raise _Bad(str(exc)) from None
    return form.get("text", "")


def _apply(site: Site, thread_id: str, form: dict[str, str]) -> Answered:
    value = _value(site, thread_id, form)
    by = form.get("name", "").strip()[:_NAME] or "someone"
    return site.ledger.answer(thread_id, form.get("interrupt_id", ""), value, by)


async def answer(request: Request) -> Response:
    """POST `/threads/{id}/answer`: apply the answer once, start the run, 303 to the thread page."""
    site, thread_id = site_of(request), request.path_params["thread_id"]
    form = await _form(request)
    if isinstance(form, Response):
        return form
    try:
        await run_in_threadpool(_apply, site, thread_id, form)
    except ThreadNotFoundError:
        return not_found(site, request, thread_id)
    except _Bad as exc:
        shown = {"interrupt_id": form.get("interrupt_id"), "message": str(exc), "given": form}
        return await thread_page(request, thread_id, 400, problem=shown)
    except Refused as exc:
        return _refused(site, request, thread_id, str(exc), exc.answered)
    return _to_thread(request, thread_id)


def _refused(
    site: Site, request: Request, thread_id: str, reason: str, won: Answered | None = None
) -> Response:
    """The 409 page: what was refused and why (and, for an answer, the one that won)."""
    return site.page(request, "refused.html", 409, thread_id=thread_id, reason=reason, won=won)


async def retry(request: Request) -> Response:
    """POST `/threads/{id}/retry`: resume a failed run (what failed runs again), in the background."""
    site, thread_id = site_of(request), request.path_params["thread_id"]
    form = await _form(request)
    if isinstance(form, Response):
        return form
    try:
        await run_in_threadpool(site.ledger.retry, thread_id)
    except ThreadNotFoundError:
        return not_found(site, request, thread_id)
    except Refused as exc:
        return _refused(site, request, thread_id, str(exc))
    return _to_thread(request, thread_id)


async def cancel(request: Request) -> Response:
    """POST `/threads/{id}/cancel`: cancel the run this server started (the thread stays resumable)."""
    site, thread_id = site_of(request), request.path_params["thread_id"]
    form = await _form(request)
    if isinstance(form, Response):
        return form
    if not await run_in_threadpool(site.ledger.cancel, thread_id):
        return _refused(site, request, thread_id, "no run of this thread is going here")
    return _to_thread(request, thread_id)


async def login_form(request: Request) -> Response:
    """GET `/login`: the form that asks for the access token."""
    return site_of(request).page(request, "login.html", problem=None)


async def login(request: Request) -> Response:
    """POST `/login`: the right token sets an HttpOnly, SameSite=Strict session cookie."""
    site = site_of(request)
    form = await _form(request)
    if isinstance(form, Response):
        return form
    base = str(request.scope.get("root_path", "")).rstrip("/")
    if site.guard.token is None:
        return RedirectResponse(f"{base}/", status_code=303)
    if not site.guard.token_matches(form.get("token", "")):
        return site.page(request, "login.html", 401, problem="that is not the access token")
    response = RedirectResponse(f"{base}/", status_code=303)
    response.set_cookie(
        COOKIE,
        site.guard.session(),
        httponly=True,
        samesite="strict",
        secure=request.url.scheme == "https",
        path=f"{base}/",
    )
    return response
