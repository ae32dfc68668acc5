"""`app()`: the ASGI application, its routes, and the secrets it is built with."""

from __future__ import annotations

from typing import Any

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from actorgraph import CompiledGraph
from actorgraph._errors import ConfigError
from actorgraph.checkpoint import Checkpointer
from actorgraph.web._actions import answer, cancel, login, login_form, retry
from actorgraph.web._guard import Guarded
from actorgraph.web._pages import graph_svg, inbox, runs, status_json, thread
from actorgraph.web._site import Site, site_of

__all__ = ["app"]


async def _css(request: Request) -> Response:
    return Response(site_of(request).css, media_type="text/css", headers={"Cache-Control": "max-age=3600"})


_ROUTES = [
    Route("/", inbox),
    Route("/runs", runs),
    Route("/login", login_form, methods=["GET"]),
    Route("/login", login, methods=["POST"]),
    Route("/static/style.css", _css),
    Route("/threads/{thread_id}", thread),
    Route("/threads/{thread_id}/status.json", status_json),
    Route("/threads/{thread_id}/graph.svg", graph_svg),
    Route("/threads/{thread_id}/answer", answer, methods=["POST"]),
    Route("/threads/{thread_id}/retry", retry, methods=["POST"]),
    Route("/threads/{thread_id}/cancel", cancel, methods=["POST"]),
]


def app(
    compiled: CompiledGraph[Any], checkpointer: Checkpointer | None = None, *, token: str | None = None
) -> Starlette:
    """The web inbox of a compiled graph: an ASGI app to serve or mount in your own.

    Args:
        compiled: the graph; its runs (answers, retries) start in it, so it must
            stay open while the app serves (the caller closes it).
        checkpointer: the store whose threads are listed (default: the graph's own).
        token: the access token every request must carry (`Authorization: Bearer
            TOKEN`, or the session cookie of the `/login` form); None admits
            everyone who can reach the server (serve it on loopback only).

    Raises:
        ConfigError: the graph has no checkpointer and none is given (also a ValueError).
    """
    store = checkpointer if checkpointer is not None else compiled.checkpointer
    if store is None:
        msg = "the web inbox needs a store: compile the graph with a checkpointer (SqliteCheckpointer(path))"
        raise ConfigError(msg)
    site = Site.of(compiled, store, token)
    web = Starlette(routes=_ROUTES, middleware=[Middleware(Guarded, guard=site.guard)])
    web.state.site = site
    return web
