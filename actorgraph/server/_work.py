"""`work`: run the API server's queued runs without serving HTTP (`actorgraph worker --config ...`).

A server is a worker with routes; this is the worker without them. It compiles
the same graphs on the same store as the servers, takes their runs from the run
queue (background runs, runs queued behind others, runs whose server died),
holds a lease on each, and reads the cancels asked of them, exactly as a
server does. Start any number of them beside one server (or several) on one
PostgreSQL database; on SIGTERM or Ctrl-C the runs going on are given back to
the queue for the others.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import threading
from collections.abc import Mapping
from typing import Any

from actorgraph.server._app import Taking, close_server, server_parts, stores_of
from actorgraph.server._body import Limits
from actorgraph.server._context import Server

__all__ = ["work"]

log = logging.getLogger("actorgraph.server")


def work(
    graphs: Mapping[str, Any],
    *,
    db: str | None = None,
    dsn: str | None = None,
    taking: Taking,
    stop: threading.Event | None = None,
) -> None:
    """Take and run the queued runs of `graphs` on the store until `stop` is set (or SIGTERM, Ctrl-C).

    With a webhook secret (`taking.webhooks`), it also delivers the webhooks owed in the store.

    Raises:
        ConfigError: a graph that is none of the kinds served, or a store that keeps no SQL database.
        CheckpointError: the database cannot be reached.
    """
    stop = stop if stop is not None else threading.Event()
    server, opened = server_parts(graphs, stores_of(db, dsn, None, None), Limits(), taking)
    names = ", ".join(s.name for s in server.graphs)
    log.warning("worker %s takes the runs of %s", server.runs.name, names, extra={"worker": server.runs.name})
    before = _on_sigterm(stop)
    try:
        asyncio.run(_serve(server, opened, stop))
    except KeyboardInterrupt:
        stop.set()
    finally:
        if before is not None:
            signal.signal(signal.SIGTERM, before)


def _on_sigterm(stop: threading.Event) -> Any:
    """SIGTERM sets `stop` (in the main thread; elsewhere nothing changes); the handler it replaced."""
    if threading.current_thread() is not threading.main_thread():
        return None
    return signal.signal(signal.SIGTERM, lambda _signum, _frame: stop.set())


async def _serve(server: Server, opened: list[Any], stop: threading.Event) -> None:
    assert server.taker is not None  # noqa: S101 - server_parts gives every server its taker
    taking = asyncio.get_running_loop().create_task(server.taker.serve())
    try:
        await asyncio.to_thread(stop.wait)
    finally:
        taking.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await taking
        await close_server(server, opened)
