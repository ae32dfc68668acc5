"""`create_app`: the ASGI application serving the LangGraph Server API for some graphs."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.middleware.authentication import AuthenticationMiddleware
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route

from actorgraph._model.errors import (
    ActorGraphError,
    AlreadyAnsweredError,
    CheckpointError,
    ConfigError,
    InvalidUpdateError,
    ResumeError,
    StoreError,
    ThreadNotFoundError,
)
from actorgraph.checkpoint._queue import check_lease, worker_name
from actorgraph.server._access import Guard
from actorgraph.server._assistants import ROUTES as ASSISTANT_ROUTES
from actorgraph.server._body import ApiError, Limits
from actorgraph.server._context import Json, Server
from actorgraph.server._cron_routes import ROUTES as CRON_ROUTES
from actorgraph.server._crons import CronTable
from actorgraph.server._graphs import Graphs, NotFoundError, served_graph
from actorgraph.server._guard import Caught, HostChecked, TokenChecked, allowed_hosts
from actorgraph.server._openapi import docs_page, openapi
from actorgraph.server._queued import Runs
from actorgraph.server._resumable import Events
from actorgraph.server._runner import Runner
from actorgraph.server._runs import ROUTES as RUN_ROUTES
from actorgraph.server._scheduler import Scheduler
from actorgraph.server._state import State
from actorgraph.server._tables import Tables
from actorgraph.server._taker import Taker
from actorgraph.server._threads import ROUTES as THREAD_ROUTES
from actorgraph.server._users import RefusedError, refused_answer
from actorgraph.server._webhook_delivery import serve_webhooks
from actorgraph.server._webhook_outbox import Outbox
from actorgraph.server._webhooks import Webhooks

__all__ = ["Taking", "close_server", "create_app", "server_parts", "stores_of"]

log = logging.getLogger("actorgraph.server")

ROUTES: list[tuple[str, str, Any]] = [*ASSISTANT_ROUTES, *THREAD_ROUTES, *RUN_ROUTES, *CRON_ROUTES]
_LARGEST: Final = 1024


def _detail(status: int) -> Callable[[Request, Exception], Any]:
    async def answer(_request: Request, exc: Exception) -> Response:
        detail = exc.detail if isinstance(exc, (ApiError, HTTPException)) else str(exc)
        code = exc.status if isinstance(exc, ApiError) else getattr(exc, "status_code", status)
        return Json({"detail": detail}, status_code=code)

    return answer


_HANDLERS: dict[Any, Callable[[Request, Exception], Any]] = {
    ApiError: _detail(400),
    HTTPException: _detail(404),
    NotFoundError: _detail(404),
    ThreadNotFoundError: _detail(404),
    AlreadyAnsweredError: _detail(409),
    InvalidUpdateError: _detail(422),
    ResumeError: _detail(422),
    ConfigError: _detail(422),
    RefusedError: refused_answer,
    CheckpointError: _detail(503),
    StoreError: _detail(503),
    ActorGraphError: _detail(422),
}


def stores_of(db: str | None, dsn: str | None, checkpointer: Any, store: Any) -> tuple[Any, Any, list[Any]]:
    """The checkpointer and the memory store to serve with, and those opened here (closed with the app)."""
    from actorgraph.checkpoint import PostgresCheckpointer, SqliteCheckpointer  # noqa: PLC0415 - lazy stores
    from actorgraph.store import MemoryStore, PostgresStore, SqliteStore  # noqa: PLC0415

    given = [
        name
        for name, value in (("db", db), ("dsn", dsn), ("checkpointer", checkpointer))
        if value is not None
    ]
    if len(given) > 1:
        raise ConfigError(f"create_app: give one of db, dsn and checkpointer, not {' and '.join(given)}")
    opened: list[Any] = []
    if checkpointer is None:
        checkpointer = (
            PostgresCheckpointer(dsn) if dsn is not None else SqliteCheckpointer(db or "actorgraph.db")
        )
        opened.append(checkpointer)
        if store is None:
            store = PostgresStore(dsn) if dsn is not None else SqliteStore(db or "actorgraph.db")
            opened.append(store)
    if store is None:
        store = MemoryStore()  # a checkpointer of the caller's: its database is not known here
    return checkpointer, store, opened


def create_app(  # noqa: PLR0913 - the graphs, their stores, and who may call: all keyword-only
    graphs: Mapping[str, Any],
    *,
    db: str | None = None,
    dsn: str | None = None,
    checkpointer: Any = None,
    store: Any = None,
    token: str | None = None,
    auth: Any = None,
    allow_hosts: Sequence[str] = (),
    cors_origins: Sequence[str] = (),
    limits: Limits | None = None,
    lease: float = 30.0,
    concurrency: int = 16,
    webhooks: Webhooks | None = None,
) -> Starlette:
    """The ASGI app serving the LangGraph Server API for `graphs`, so that LangGraph's clients drive them.

    Args:
        graphs: graph name -> a `Graph`, a `CompiledGraph` compiled without a checkpointer, an
            `@entrypoint`, or a function returning one; each compiled on the server's stores.
        db: the SQLite file of the threads, runs and memory store (default `actorgraph.db`).
        dsn: the PostgreSQL database of them instead.
        checkpointer: a `SqliteCheckpointer` or `PostgresCheckpointer` of the caller's
            instead (the caller closes it; the memory store is then `store`).
        store: the memory store of the vertices (`ctx.store`) and of the `/store` routes
            (default: one on the `db` or `dsn` database; with `checkpointer`, a `MemoryStore`).
        token: the access token every request but `/ok` must carry (`Authorization:
            Bearer TOKEN` or `X-Api-Key: TOKEN`); None admits everyone who reaches it.
        auth: instead of a token, users who own their threads: a `langgraph_sdk.Auth` or an `Auth`.
        allow_hosts: host names the app answers to besides localhost, 127.0.0.1 and
            [::1] (a request for another Host is 400, which stops DNS rebinding).
        cors_origins: origins a browser front end may call it from (CORS is off without).
        limits: bounds on request bodies (size, JSON depth, list sizes).
        lease: seconds a run stays this server's without a heartbeat (then another process takes it).
        concurrency: background runs taken from the queue at once (waited-for runs not counted).
        webhooks: how webhooks are signed and where they may go (without a secret, runs with one are 422).

    Returns:
        A Starlette app; its lifespan takes runs from the queue, and its end gives back the runs going on.

    Raises:
        ConfigError: a graph of no kind served (naming it), a store without SQL, an empty token (or
            one with `auth`), a bad `auth`, `allow_hosts` entry (not a host name), lease or concurrency.
    """
    routes, guard = _routes(), _guard(auth, token)
    middleware = _middleware(allowed_hosts(allow_hosts), cors_origins, token, guard, routes)
    taking = Taking(check_lease(lease), _concurrency(concurrency), webhooks=webhooks)
    server, opened = server_parts(graphs, stores_of(db, dsn, checkpointer, store), limits or Limits(), taking)
    return _starlette(server, opened, routes, middleware, guard)


def _starlette(
    server: Server, opened: list[Any], routes: list[Route], middleware: list[Middleware], guard: Guard | None
) -> Starlette:
    """The Starlette app of the server's routes and middleware; its lifespan takes runs and ends them."""
    server.guard = guard
    app = Starlette(
        routes=routes, middleware=middleware, exception_handlers=_HANDLERS, lifespan=_lifespan(server, opened)
    )
    app.state.server = server
    return app


def _guard(auth: Any, token: str | None) -> Guard | None:
    """The auth object as the server uses it (None without one); what it leaves unguarded is logged.

    Raises:
        ConfigError: both a token and an auth object, or an auth object that is none.
    """
    if auth is None:
        return None
    if token is not None:
        raise ConfigError(
            "give a token or an auth object, not both: the auth handler reads each request's user"
        )
    guard = Guard(auth)
    if guard.unused():
        log.warning(
            "auth: no request is ever asked about %s; their handlers never run", ", ".join(guard.unused())
        )
    if guard.uncovered():
        log.warning(
            "auth: no handler guards %s: every authenticated user may do these on anyone's resources "
            "(add @auth.on to say what applies to everything else)",
            ", ".join(guard.uncovered()),
        )
    return guard


def _lifespan(server: Server, opened: list[Any]) -> Callable[[Starlette], Any]:
    """The app's lifespan: it takes runs from the queue; at its end, it gives back the runs going on.

    It then stops the graphs and closes the stores opened.
    """

    @contextlib.asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        assert server.taker is not None  # noqa: S101 - server_parts gives every server its taker
        taking = asyncio.get_running_loop().create_task(server.taker.serve())
        try:
            yield
        finally:
            taking.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await taking
            await close_server(server, opened)

    return lifespan


async def close_server(server: Server, opened: list[Any]) -> None:
    """Give back the runs going on, stop the graphs, close the stores opened for the server."""
    try:
        await server.runner.close()
    finally:
        server.graphs.close()
        for item in reversed(opened):
            item.close()


def _middleware(
    hosts: tuple[str, ...],
    cors_origins: Sequence[str],
    token: str | None,
    guard: Guard | None,
    routes: list[Route],
) -> list[Middleware]:
    """Every request is logged, its Host checked, CORS answered (if origins are named), its token checked.

    With an auth object, its authenticate handler names the request's user instead of a token.

    Raises:
        ConfigError: an empty token, an authenticate handler that takes what the server does not give.
    """
    if token is not None and not token.strip():
        raise ConfigError("token: an empty token admits no one and protects nothing; give a non-empty one")
    middleware = [Middleware(Caught), Middleware(HostChecked, hosts=hosts)]
    if cors_origins:
        middleware.append(
            Middleware(
                CORSMiddleware,
                allow_origins=list(cors_origins),
                allow_methods=["*"],
                allow_headers=["*"],
                expose_headers=["content-location", "location"],
            )
        )
    if token is not None:
        middleware.append(Middleware(TokenChecked, token=token))
    if guard is not None:
        users = guard.backend(routes)
        middleware.append(Middleware(AuthenticationMiddleware, backend=users, on_error=refused_answer))
    return middleware


@dataclass(frozen=True, slots=True)
class Taking:
    """How a server (or a worker of the server's graphs) takes runs: its lease, its concurrency, its name.

    With a webhook secret (`webhooks`), it also takes and sends the webhooks owed in the store.
    """

    lease: float = 30.0
    concurrency: int = 16
    name: str | None = None
    webhooks: Webhooks | None = None


def _concurrency(concurrency: object) -> int:
    if isinstance(concurrency, bool) or not isinstance(concurrency, int) or not 1 <= concurrency <= _LARGEST:
        raise ConfigError(f"concurrency={concurrency!r}: give how many runs to run at once, 1 to {_LARGEST}")
    return concurrency


def server_parts(
    graphs: Mapping[str, Any], stores: tuple[Any, Any, list[Any]], limits: Limits, taking: Taking
) -> tuple[Server, list[Any]]:
    """The server's parts, and the stores opened for it (closed again when a graph is refused).

    Its tables come first: a store without SQL is refused before any graph compiles.
    """
    checkpointer, store, opened = stores
    served: dict[str, Any] = {}
    try:
        tables = Tables(checkpointer)
        outbox = Outbox(checkpointer)
        for name, value in graphs.items():
            served[name] = served_graph(name, value, checkpointer=checkpointer, store=store)
    except BaseException:
        Graphs(served).close()
        for item in reversed(opened):
            item.close()
        raise
    catalog = Graphs(served)
    name = taking.name or f"{worker_name()}:{uuid.uuid4().hex[:8]}"  # two apps of one process are two workers
    runs, events = Runs(checkpointer, tables, name=name, lease=taking.lease), Events(checkpointer)
    runner = Runner(runs, catalog, events)
    server = Server(catalog, checkpointer, store, tables, State(catalog), runner, limits, runs, events)
    runner.forget = server.forget
    server.taker = Taker(runner, runs, list(served), concurrency=taking.concurrency)
    runner.wake = server.taker.wake
    server.crons = CronTable(checkpointer)
    server.scheduler = Scheduler(server.crons, runs, catalog, runner)
    server.taker.also.append(server.scheduler.serve)  # servers and workers alike fire the crons' ticks
    serve_webhooks(server, outbox, taking.webhooks)
    return server, opened


def _routes() -> list[Route]:
    document = openapi(ROUTES)
    page = docs_page(ROUTES)

    async def openapi_json(_request: Request) -> Response:
        return Json(document)

    async def docs(_request: Request) -> Response:
        return HTMLResponse(page)

    routes = [Route(path, handler, methods=[method]) for method, path, handler in ROUTES]
    return [*routes, Route("/openapi.json", openapi_json), Route("/docs", docs)]
