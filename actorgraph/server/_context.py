"""What every route of one server shares: its graphs, its stores, its tables and its runs."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response

from actorgraph.server._access import Access, Guard, allowed
from actorgraph.server._body import ApiError, Limits, check_id
from actorgraph.server._crons import CronTable
from actorgraph.server._graphs import Graphs, NotFoundError
from actorgraph.server._owners import Filter
from actorgraph.server._queued import Runs
from actorgraph.server._resumable import Events
from actorgraph.server._runner import Runner
from actorgraph.server._scheduler import Scheduler
from actorgraph.server._state import State
from actorgraph.server._tables import Tables, ThreadRow
from actorgraph.server._taker import Taker
from actorgraph.server._wire import dumps

__all__ = ["Json", "Server", "server_of", "thread_of"]


@dataclass
class Server:
    """One server's parts.

    Attributes:
        graphs: the served graphs and their assistants.
        checkpointer: where threads' checkpoints live (SQLite or PostgreSQL).
        store: the memory store of the vertices and of the `/store` routes.
        tables: the server's thread rows, in the checkpointer's database.
        state: reading and changing threads' states through the graphs.
        runner: the runs going on in this process.
        limits: the bounds on requests.
        runs: the server's runs, rows of the checkpointer's run queue.
        events: the kept parts of resumable streams.
        taker: what takes the server's runs from the queue and keeps its leases.
        crons: the crons' table, in the checkpointer's database.
        scheduler: what queues the crons' runs at their ticks.
        webhooks: how it signs and sends webhooks, and where they may go (`_webhooks.Webhooks`).
        guard: the auth handlers every route asks (`_access.py`); None lets everyone do everything.
    """

    graphs: Graphs
    checkpointer: Any
    store: Any
    tables: Tables
    state: State
    runner: Runner
    limits: Limits
    runs: Runs
    events: Events
    taker: Taker | None = None
    crons: CronTable | None = None
    scheduler: Scheduler | None = None
    webhooks: Any = None
    guard: Guard | None = None

    async def thread(self, thread_id: str, where: Filter | None = None) -> ThreadRow:
        """The thread's row, its id checked, if it meets `where` (the filter of the request's auth handler).

        Raises:
            ApiError: 422 for an id that is not one, 404 when there is no such thread (or it is another's).
        """
        check_id(thread_id, "thread_id")
        row = await run_in_threadpool(self.tables.thread, thread_id, where)
        if row is None:
            raise ApiError(404, f"thread {thread_id} not found")
        return row

    def forget(self, thread_id: str) -> None:
        """Delete a thread: its checkpoints and its rows (a stateless run's thread, when the run ended)."""
        self.checkpointer.delete_thread(thread_id)
        self.tables.delete_thread(thread_id)

    def assistant(self, assistant_id: str, access: Access | None = None) -> Any:
        """The served graph of an assistant id or graph name (if its metadata meets `access.where`).

        Raises:
            ApiError: 404 naming the graphs served (only the id when an auth handler filters them).
        """
        hidden = f"assistant {assistant_id!r:.100} not found"
        try:
            served = self.graphs.get(assistant_id)
        except NotFoundError as exc:
            raise ApiError(404, str(exc) if access is None or access.where is None else hidden) from None
        if (
            access is not None
            and access.where is not None
            and not access.where.matches(served.assistant()["metadata"])
        ):
            raise ApiError(404, hidden)
        return served


def server_of(request: Request) -> Server:
    """The server a request reached."""
    server: Server = request.app.state.server
    return server


async def thread_of(
    request: Request, action: str, value: dict[str, Any] | None = None
) -> tuple[Server, ThreadRow]:
    """The thread of the request's path, if its user may do `action` on it (`value`: what else it touches).

    Raises:
        ApiError: 422 for an id that is not one, 404 when there is no such thread or it is another user's.
        RefusedError: the auth handlers refused the request.
    """
    server = server_of(request)
    thread_id = check_id(request.path_params["thread_id"], "thread_id")
    access = await allowed(request, "threads", action, {"thread_id": thread_id, **(value or {})})
    return server, await server.thread(thread_id, access.where)


class Json(Response):
    """A JSON response of plain data (states already made plain), encoded with orjson."""

    media_type = "application/json"

    def render(self, content: Any) -> bytes:
        """The content as JSON bytes."""
        return dumps(content)
