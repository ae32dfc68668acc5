"""What every route of one server shares: its graphs, its stores, its tables and its runs."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response

from actorgraph.server._body import ApiError, Limits, check_id
from actorgraph.server._crons import CronTable
from actorgraph.server._graphs import Graphs, NotFoundError
from actorgraph.server._queued import Runs
from actorgraph.server._resumable import Events
from actorgraph.server._runner import Runner
from actorgraph.server._scheduler import Scheduler
from actorgraph.server._state import State
from actorgraph.server._tables import Tables, ThreadRow
from actorgraph.server._taker import Taker
from actorgraph.server._wire import dumps

__all__ = ["Json", "Server", "server_of"]


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

    async def thread(self, thread_id: str) -> ThreadRow:
        """The thread's row, its id checked.

        Raises:
            ApiError: 422 for an id that is not one, 404 when there is no such thread.
        """
        check_id(thread_id, "thread_id")
        row = await run_in_threadpool(self.tables.thread, thread_id)
        if row is None:
            raise ApiError(404, f"thread {thread_id} not found")
        return row

    def forget(self, thread_id: str) -> None:
        """Delete a thread: its checkpoints and its rows (a stateless run's thread, when the run ended)."""
        self.checkpointer.delete_thread(thread_id)
        self.tables.delete_thread(thread_id)

    def assistant(self, assistant_id: str) -> Any:
        """The served graph of an assistant id or graph name.

        Raises:
            ApiError: 404 naming the graphs served.
        """
        try:
            return self.graphs.get(assistant_id)
        except NotFoundError as exc:
            raise ApiError(404, str(exc)) from None


def server_of(request: Request) -> Server:
    """The server a request reached."""
    server: Server = request.app.state.server
    return server


class Json(Response):
    """A JSON response of plain data (states already made plain), encoded with orjson."""

    media_type = "application/json"

    def render(self, content: Any) -> bytes:
        """The content as JSON bytes."""
        return dumps(content)
