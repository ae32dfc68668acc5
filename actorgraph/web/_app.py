"""`app()`: the ASGI application, its routes, its middleware, and the secrets it is built with."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from actorgraph import CompiledGraph
from actorgraph._model.errors import ActorGraphError, ConfigError
from actorgraph.checkpoint import Checkpointer
from actorgraph.web._actions import answer, cancel, login, login_form, retry
from actorgraph.web._downloads import question_json, state_json
from actorgraph.web._guard import SAFE_HEADERS, Guarded
from actorgraph.web._hosts import HostChecked, allowed_hosts
from actorgraph.web._ids import NotAThreadError, target
from actorgraph.web._pages import graph_svg, inbox, runs, status_json, thread
from actorgraph.web._site import Site, site_of

__all__ = ["app"]

log = logging.getLogger("actorgraph.web")

Handler = Callable[[Request, str], Awaitable[Response]]
_GETS: dict[str, Handler] = {
    "": thread,
    "status.json": status_json,
    "graph.svg": graph_svg,
    "state.json": state_json,
    "question.json": question_json,
}
_POSTS: dict[str, Handler] = {"answer": answer, "retry": retry, "cancel": cancel}
_ACTIONS = frozenset(_GETS) | frozenset(_POSTS)
_CRASHED = (
    "<!doctype html><meta charset=utf-8><title>Server error</title><h1>Server error</h1>"
    "<p>The inbox failed to answer this request; the server's log says why. Nothing was applied "
    'that the thread\'s page does not show. <a href="./">Back</a></p>'
)


async def _css(request: Request) -> Response:
    return Response(site_of(request).css, media_type="text/css", headers={"Cache-Control": "max-age=3600"})


async def _threads(request: Request) -> Response:
    """`/threads/{id}[/{action}]`: the id read from the raw path (one segment), then the action."""
    site = site_of(request)
    try:
        named = target(request.scope, _ACTIONS)
    except NotAThreadError as exc:
        return site.problem(request, exc.status, "No such page", str(exc))
    handlers = _POSTS if request.method == "POST" else _GETS
    handler = handlers.get(named.action)
    if handler is None:
        message = f"{request.method} is not how this page is used"
        return site.problem(request, 405, "Method not allowed", message, thread_id=named.thread_id)
    return await handler(request, named.thread_id)


async def _http_problem(request: Request, exc: Exception) -> Response:
    """Starlette's own 404 / 405 as a readable page."""
    code = exc.status_code if isinstance(exc, HTTPException) else 500
    return site_of(request).problem(request, code, "No such page", f"{code}: {exc}")


async def _unavailable(request: Request, exc: Exception) -> Response:
    """An error of the engine or the store that no page expected (the store unreachable, locked): 503."""
    where = {"method": request.method, "path": request.url.path}
    log.warning("request not served (503)", extra={**where, "error": f"{type(exc).__name__}: {exc}"})
    message = f"503: this could not be served ({type(exc).__name__}: {exc}); try again later"
    return site_of(request).problem(request, 503, "Not available", message)


_ROUTES = [
    Route("/", inbox),
    Route("/runs", runs),
    Route("/login", login_form, methods=["GET"]),
    Route("/login", login, methods=["POST"]),
    Route("/static/style.css", _css),
    Route("/threads/{rest:path}", _threads, methods=["GET", "POST"]),
]


class Caught:
    """ASGI middleware: an exception no page handled is logged and answered with a readable 500 page."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def watched(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, receive, watched)
        except Exception:
            where = {"method": scope.get("method"), "path": scope.get("path")}
            log.exception("request failed", extra=where)  # its traceback goes to the log, never into the page
            if started:  # too late for a page: the client sees a cut answer
                return
            await HTMLResponse(_CRASHED, 500, headers=SAFE_HEADERS)(scope, receive, send)


def app(
    compiled: CompiledGraph[Any],
    checkpointer: Checkpointer | None = None,
    *,
    token: str | None = None,
    allow_hosts: Sequence[str] = (),
) -> Starlette:
    """The web inbox of a compiled graph: an ASGI app to serve or mount in your own.

    Args:
        compiled: the graph; its runs (answers, retries) start in it, so it must
            stay open while the app serves (the caller closes it).
        checkpointer: the store whose threads are listed (default: the graph's own).
        token: the access token every request must carry (`Authorization: Bearer
            TOKEN`, or the session cookie of the `/login` form); None admits
            everyone who can reach the server (serve it on loopback only). An
            empty or blank token is refused: anyone could send it.
        allow_hosts: host names the app answers to besides `localhost`,
            `127.0.0.1` and `[::1]` (any port): the names people reach it by
            (`inbox.example`, `*.example.org`, an address; `*` for any, only
            behind a proxy that checks them). A request for another Host is 400,
            which stops DNS rebinding.

    Raises:
        ConfigError: the graph has no checkpointer and none is given, the token is
            empty or blank, or an entry of `allow_hosts` is not a host name (also a ValueError).
    """
    store = checkpointer if checkpointer is not None else compiled.checkpointer
    if store is None:
        msg = "the web inbox needs a store: compile the graph with a checkpointer (SqliteCheckpointer(path))"
        raise ConfigError(msg)
    site = Site.of(compiled, store, token)
    middleware = [
        Middleware(Caught),
        Middleware(HostChecked, hosts=allowed_hosts(allow_hosts), headers=SAFE_HEADERS),
        Middleware(Guarded, guard=site.guard),
    ]
    handlers = {404: _http_problem, 405: _http_problem, ActorGraphError: _unavailable}
    web = Starlette(routes=_ROUTES, middleware=middleware, exception_handlers=handlers)
    web.state.site = site
    return web
