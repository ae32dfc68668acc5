"""Following a run from any server process: waiting for its end, and joining its stream.

A run going on in this process is followed through its `LiveRun` (its parts as
they come). A run another process runs (another server, an `actorgraph
worker`, or a server that took it over after one died) is followed through the
database: its queue row says when it ended, and the parts of a resumable one
are read from `actorgraph_server_events` as its runner writes them.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from typing import Any, Final

from starlette.concurrency import run_in_threadpool

from actorgraph.server._context import Server
from actorgraph.server._live import HEARTBEAT, raw_frame

__all__ = ["ended", "kept_parts", "last_event_id", "until_ended", "wanted_modes"]

_POLL: Final = 0.2  # seconds between looks at a run another process runs
_ACTIVE: Final = ("queued", "running")


def last_event_id(given: str | None) -> int | None:
    """The `Last-Event-ID` header as a part's number; None when absent or not a number (start over)."""
    if given is None or not given.strip().isdigit() or len(given.strip()) > 18:  # noqa: PLR2004 - an int64
        return None
    return int(given.strip())


def wanted_modes(given: list[str]) -> Callable[[str], bool] | None:
    """Which parts a joining client wants, by event name, from its `stream_mode`s (None: all of them).

    A part's mode is its name before any `|` (a subgraph's) and `/` (`messages/partial`);
    `messages-tuple` parts are named `messages`. The run's `metadata` and `error` always go.
    """
    modes = {"messages" if mode == "messages-tuple" else mode for mode in given if mode}
    if not modes:
        return None
    modes |= {"metadata", "error"}
    return lambda name: name.split("|", 1)[0].split("/", 1)[0] in modes


async def _state(server: Server, run_id: str) -> Any:
    return await run_in_threadpool(server.runs.queue.run_state, run_id)


async def ended(server: Server, run_id: str) -> None:
    """Wait until the run ended (here, or in whichever process runs it), or was deleted."""
    live = server.runner.live.get(run_id)
    if live is not None:
        await live.ended()
    while await _state(server, run_id) in _ACTIVE:
        live = server.runner.live.get(run_id)
        if live is not None:  # this process took it meanwhile
            await live.ended()
        else:
            await asyncio.sleep(_POLL)


async def until_ended(
    server: Server, run_id: str, wanted: Callable[[str], bool] | None = None
) -> AsyncIterator[bytes | None]:
    """Heartbeats until the run ends, or its parts from the start once this process takes it.

    A background run joined while it is still queued is usually taken by this
    very server a moment later: its parts are then followed from the first. The
    parts of a run another process runs, not resumable, stay where it runs.
    """
    beat = time.monotonic()
    while True:
        live = server.runner.following(run_id)  # looked at first: an ended run's parts stay a while
        if live is not None and live.first_id == 0:
            async for frame in live.follow(0, wanted):
                yield frame
            return
        if await _state(server, run_id) not in _ACTIVE:
            return
        await asyncio.sleep(_POLL)
        if time.monotonic() - beat >= HEARTBEAT:
            beat = time.monotonic()
            yield None


async def kept_parts(
    server: Server, run_id: str, after: int, wanted: Callable[[str], bool] | None = None
) -> AsyncIterator[bytes | None]:
    """The kept parts of a resumable run numbered above `after`, as its runner writes them, until it ends."""
    beat = time.monotonic()
    while True:
        active = await _state(server, run_id) in _ACTIVE  # read before the parts: none written after is lost
        parts = await run_in_threadpool(server.events.after, run_id, after)
        for seq, name, data in parts:
            if wanted is None or wanted(name):
                yield raw_frame(name, data, seq)
            after, beat = seq, time.monotonic()
        if parts:
            continue
        if not active:
            return
        await asyncio.sleep(_POLL)
        if time.monotonic() - beat >= HEARTBEAT:
            beat = time.monotonic()
            yield None
