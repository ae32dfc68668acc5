"""A run going on in this server: the parts it has streamed so far, and the responses that follow it.

The run's task (`_execute.py`) appends each part; any number of responses
follow it from any part on (a stream from the start, a joining client). The run
does not depend on them: a client that goes away leaves it going on
(`on_disconnect="continue"`, the default) unless it asked otherwise.

`SseResponse` is the ASGI response of a stream: `event: <name>` / `data: <json>`
pairs with CRLF line ends as LangGraph's server sends them, a `: heartbeat`
comment when nothing was sent for a while (so proxies keep the connection), and
a watch on the client's `http.disconnect`, told to `on_gone`.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable, Mapping
from typing import Any, Final

from starlette.responses import StreamingResponse
from starlette.types import Receive, Scope, Send

from actorgraph.server._wire import dumps

__all__ = ["HEARTBEAT", "LiveRun", "SseResponse", "frame", "raw_frame"]

HEARTBEAT: Final = 10.0  # seconds without a part before a heartbeat comment
_HEARTBEAT_FRAME: Final = b": heartbeat\r\n\r\n"


def frame(name: str, data: Any, event_id: int | None = None) -> bytes:
    """One SSE event: its id (for resumable streams), its name and its JSON data."""
    return raw_frame(name, dumps(data), event_id)


def raw_frame(name: str, data: bytes, event_id: int | None = None) -> bytes:
    """One SSE event of data already JSON (a kept part of a resumable stream)."""
    head = b"" if event_id is None else b"id: %d\r\n" % event_id
    return head + b"event: " + name.encode() + b"\r\ndata: " + data + b"\r\n\r\n"


class LiveRun:
    """The parts of one run as they come, for the responses that follow it."""

    def __init__(self, run_id: str, thread_id: str, *, resumable: bool = False, first_id: int = 0) -> None:
        """Start with no part; `resumable` gives every part an SSE id (`Last-Event-ID` resumes after it).

        Ids start at `first_id` (a run taken over goes on numbering its parts), and each part of a
        resumable run is also kept in `parts` (id, name, JSON data) until `_resumable.Events` has it.
        """
        self.run_id = run_id
        self.thread_id = thread_id
        self.resumable = resumable
        self.first_id = first_id
        self.parts: list[tuple[int, str, bytes]] = []
        self.frames: list[bytes] = []
        self.names: list[str] = []  # each frame's event name (a joining client may want some modes only)
        self.done = False
        self.values: Any = None  # the data of the last `values` part (what /runs/wait returns)
        self.error: dict[str, str] | None = None
        self.task: asyncio.Task[None] | None = None
        self._changed = asyncio.Event()

    def emit(self, name: str, data: Any) -> None:
        """Add a part and wake the responses waiting for one."""
        if name == "values":
            self.values = data
        elif name == "error":
            self.error = data
        raw = dumps(data)
        event_id = self.first_id + len(self.frames) if self.resumable else None
        if event_id is not None:
            self.parts.append((event_id, name, raw))
        self.frames.append(raw_frame(name, raw, event_id))
        self.names.append(name)
        self._wake()

    def close(self) -> None:
        """The run ended: its last part is in."""
        self.done = True
        self._wake()

    def _wake(self) -> None:
        changed, self._changed = self._changed, asyncio.Event()
        changed.set()

    async def follow(
        self, start: int = 0, wanted: Callable[[str], bool] | None = None
    ) -> AsyncIterator[bytes | None]:
        """The frames from `start` on (those `wanted` by name), as they come.

        None stands for a heartbeat, after `HEARTBEAT` seconds without a frame.
        """
        index = start
        while True:
            while index < len(self.frames):
                if wanted is None or wanted(self.names[index]):
                    yield self.frames[index]
                index += 1
            if self.done:
                return
            changed = self._changed
            try:
                await asyncio.wait_for(changed.wait(), HEARTBEAT)
            except TimeoutError:
                yield None

    async def ended(self) -> None:
        """Wait until the run has ended."""
        while not self.done:
            await self._changed.wait()


class SseResponse(StreamingResponse):
    """A response streaming a live run's frames until it ends or the client goes away."""

    def __init__(
        self,
        frames: AsyncIterator[bytes | None],
        headers: Mapping[str, str],
        on_gone: Callable[[], None] | None = None,
    ) -> None:
        """Stream `frames` (None: a heartbeat) with `headers`; `on_gone` is told if the client leaves."""
        sse = {"cache-control": "no-store", "x-accel-buffering": "no", **headers}
        super().__init__((), headers=sse, media_type="text/event-stream; charset=utf-8")
        self.frames = frames
        self.on_gone = on_gone

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Send the headers, then each frame; stop when the frames end or the client disconnects."""
        del scope
        await send({"type": "http.response.start", "status": 200, "headers": self.raw_headers})
        streaming = asyncio.ensure_future(self._stream(send))
        watching = asyncio.ensure_future(_disconnected(receive))
        try:
            done, _ = await asyncio.wait({streaming, watching}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in (streaming, watching):
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, OSError):
                    await task
        if streaming in done and streaming.exception() is None:
            return
        if self.on_gone is not None:
            self.on_gone()

    async def _stream(self, send: Send) -> None:
        async for item in self.frames:
            await send(
                {
                    "type": "http.response.body",
                    "body": _HEARTBEAT_FRAME if item is None else item,
                    "more_body": True,
                }
            )
        await send({"type": "http.response.body", "body": b"", "more_body": False})


async def _disconnected(receive: Receive) -> None:
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return
