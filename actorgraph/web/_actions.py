"""What changes something: answering, retrying, cancelling, logging in. Every POST checks CSRF.

An answer is read from the form with bounds (a question id of the engine's
form, one of choice / JSON / text, a choice by its index among those offered,
JSON nested at most 64 levels), then started as `Command(resume={id: value})`
with `answered_by="NAME (web inbox, CLIENT ADDRESS)"`; the engine claims it in
the store before anything runs with it, and a later answer to the same question
(from here, the command line or another server, before or after a restart) gets
409 and the page names who answered, when, and with what.
"""

from __future__ import annotations

from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from actorgraph import ActorGraphError, AlreadyAnsweredError, SerializationError, ThreadNotFoundError
from actorgraph._api.text import printable
from actorgraph._engine.context import is_interrupt_id
from actorgraph._model.errors import ConfigError
from actorgraph.web._forms import LIMIT, BadForm, TooLarge, read_form
from actorgraph.web._guard import COOKIE
from actorgraph.web._ids import segment
from actorgraph.web._ledger import Answered, answered
from actorgraph.web._pages import not_found, thread_page
from actorgraph.web._site import Site, site_of
from actorgraph.web._values import choices_of, parse_choice, parse_json

__all__ = ["answer", "cancel", "login", "login_form", "retry"]

_NAME = 80  # characters of the "your name" field kept
_CLIENT = 60  # characters of the client's address kept
_KINDS = ("choice", "json", "text")


class _MalformedError(ActorGraphError):
    """A form no page of the inbox makes (no question id, no answer, two answers): a 400 page."""


class _BadAnswerError(ActorGraphError):
    """An answer a person must fix (JSON that does not parse, a choice not offered): the form again."""


async def _form(request: Request) -> dict[str, str] | Response:
    """The posted form, or the page refusing it (413 too large, 400 not a form, 403 without CSRF)."""
    site = site_of(request)
    try:
        form = await read_form(request)
    except TooLarge:
        return site.problem(request, 413, "Too large", f"413: a form is at most {LIMIT // 1024} KiB")
    except BadForm as exc:
        return site.problem(request, 400, "Not a form of this inbox", f"400: {exc}; nothing was applied")
    if not site.guard.csrf_matches(request, form):
        message = "403: the form's CSRF token is missing or wrong (or from another session); reload the page"
        return site.problem(request, 403, "Refused", message)
    return form


def _to_thread(request: Request, thread_id: str) -> Response:
    base = str(request.scope.get("root_path", "")).rstrip("/")
    return RedirectResponse(f"{base}/threads/{segment(thread_id)}", status_code=303)


def _asked(form: dict[str, str]) -> tuple[str, str]:
    """The question the form answers and which kind of answer it gives."""
    interrupt_id = form.get("interrupt_id", "")
    if not is_interrupt_id(interrupt_id):
        shown = printable(interrupt_id[:40], lines=False)
        raise _MalformedError(f"the form names no question (interrupt_id {shown!r} is not a question's id)")
    kinds = [kind for kind in _KINDS if kind in form]
    if len(kinds) != 1:
        raise _MalformedError("an answer is one of the fields choice, json or text, given once")
    return interrupt_id, kinds[0]


def _value(site: Site, thread_id: str, interrupt_id: str, kind: str, given: str) -> Any:
    """The answer the form gives: a choice (by its index among the offered ones), JSON, or text."""
    try:
        if kind == "json":
            return parse_json(given)
        if kind == "text":
            return given
        pending = {p.id: p for p in site.compiled.get_state(thread_id).interrupts}
        asked = pending.get(interrupt_id)
        if asked is None:
            return None  # answered already or stale: the engine refuses it and says who answered
        offered = choices_of(asked.value) or []
        return offered[parse_choice(given, len(offered))]
    except ConfigError as exc:
        raise _BadAnswerError(str(exc)) from None


def _by(request: Request, form: dict[str, str]) -> str:
    """Who answers, as the store records it: `NAME (web inbox, CLIENT ADDRESS)`."""
    name = printable(form.get("name", "").strip(), lines=False)[:_NAME].strip() or "someone"
    client = printable(request.client.host if request.client else "unknown", lines=False)[:_CLIENT]
    return f"{name} (web inbox, {client})"


def _apply(site: Site, thread_id: str, form: dict[str, str], by: str) -> None:
    if site.answers.get(thread_id) is None:  # an unknown thread is a 404 whatever the form holds
        raise ThreadNotFoundError(f"no thread {thread_id!r}")
    interrupt_id, kind = _asked(form)
    value = _value(site, thread_id, interrupt_id, kind, form[kind])
    site.ledger.answer(thread_id, interrupt_id, value, by)


async def answer(request: Request, thread_id: str) -> Response:
    """POST `/threads/{id}/answer`: start the run that takes the answer, 303 to the thread page."""
    form = await _form(request)
    if isinstance(form, Response):
        return form
    try:
        await run_in_threadpool(_apply, site_of(request), thread_id, form, _by(request, form))
    except ActorGraphError as exc:
        return await _not_applied(request, thread_id, form, exc)
    return _to_thread(request, thread_id)


async def _not_applied(
    request: Request, thread_id: str, form: dict[str, str], exc: ActorGraphError
) -> Response:
    """The page of an answer that was not applied: why, and what to do."""
    site = site_of(request)
    match exc:
        case ThreadNotFoundError():
            return not_found(site, request, thread_id)
        case _MalformedError():
            return site.problem(request, 400, "Not an answer", f"400: {exc}; nothing was applied")
        case SerializationError() if not await run_in_threadpool(_readable, site, thread_id):
            return _refused(site, request, thread_id, f"this thread cannot be read from the store: {exc}")
        case _BadAnswerError() | SerializationError():  # the person fixes it in the form, shown again
            shown = {"interrupt_id": form.get("interrupt_id"), "message": str(exc), "given": form}
            return await thread_page(request, thread_id, 400, problem=shown)
        case AlreadyAnsweredError():
            won = await run_in_threadpool(answered, site.answers, exc)
            return _refused(site, request, thread_id, "already answered: your answer was not applied", won)
        case _:  # not pending, a run going, a damaged thread: nothing ran with it
            return _refused(site, request, thread_id, str(exc))


def _readable(site: Site, thread_id: str) -> bool:
    """Whether the thread loads (if not, a serialization error is the store's, not the answer's)."""
    try:
        site.compiled.get_state(thread_id)
    except ActorGraphError:
        return False
    return True


def _refused(
    site: Site, request: Request, thread_id: str, reason: str, won: Answered | None = None
) -> Response:
    """The 409 page: what was refused and why (and, for an answer, the one that won)."""
    return site.page(request, "refused.html", 409, thread_id=thread_id, reason=reason, won=won)


async def retry(request: Request, thread_id: str) -> Response:
    """POST `/threads/{id}/retry`: resume a failed run (what failed runs again), in the background."""
    site = site_of(request)
    form = await _form(request)
    if isinstance(form, Response):
        return form
    try:
        await run_in_threadpool(site.ledger.retry, thread_id)
    except ThreadNotFoundError:
        return not_found(site, request, thread_id)
    except ActorGraphError as exc:  # not failed, a run going, a damaged thread
        return _refused(site, request, thread_id, str(exc))
    return _to_thread(request, thread_id)


async def cancel(request: Request, thread_id: str) -> Response:
    """POST `/threads/{id}/cancel`: cancel the run this server started (the thread stays resumable)."""
    site = site_of(request)
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
    """POST `/login`: the right token starts a session (an HttpOnly, SameSite=Strict cookie)."""
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
        site.guard.new_session(),
        httponly=True,
        samesite="strict",
        secure=request.url.scheme == "https",
        path=f"{base}/",
    )
    return response
