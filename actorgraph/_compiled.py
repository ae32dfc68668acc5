"""`CompiledGraph`: running a validated graph, and reading and changing its threads."""

from __future__ import annotations

import dataclasses
import os
import weakref
from collections.abc import AsyncIterator, Iterator, Sequence
from concurrent.futures import Future
from pathlib import Path
from types import TracebackType
from typing import Any, Generic, TypeVar

from actorgraph._clock import Clock, SystemClock
from actorgraph._errors import ActorGraphError, RunTimeoutError
from actorgraph._events import Listener
from actorgraph._handle import RunHandle
from actorgraph._resume import GraphSettings, RunOptions, RunRequest, prepare
from actorgraph._run import Run
from actorgraph._runtime import Runtime
from actorgraph._stream import astream_items, await_run, stream_items
from actorgraph._threads import Threads
from actorgraph._types import RunResult, Snapshot
from actorgraph.draw import render_png, to_dot, to_mermaid

__all__ = ["DEFAULT_RECURSION_LIMIT", "CompiledGraph"]

S = TypeVar("S")

DEFAULT_RECURSION_LIMIT = 10_000


class CompiledGraph(Generic[S]):
    """A validated graph, ready to run; owns the actors its runs use.

    Use it as a context manager, or call `close()`, to stop its actors.
    """

    def __init__(self, settings: GraphSettings, *, clock: Clock | None = None) -> None:
        """Wrap a validated graph and its settings (use `Graph.compile()` rather than this)."""
        self.spec = settings.spec
        self.checkpointer = settings.checkpointer
        self.clock = clock or SystemClock()
        self._settings = settings
        self._threads = Threads(settings.spec, settings.checkpointer)
        self._runtime = Runtime(settings.spec, self.clock)
        self._finalizer = weakref.finalize(self, self._runtime.close)

    @property
    def name(self) -> str:
        """The graph's name."""
        return self.spec.name

    # -- running -------------------------------------------------------------------------

    def invoke(  # noqa: PLR0913 - LangGraph's invoke keywords; rare ones are in `options`
        self,
        input: Any,  # noqa: A002 - LangGraph's name for it
        *,
        thread_id: str | None = None,
        context: Any = None,
        recursion_limit: int | None = None,
        timeout: float | None = None,
        checkpoint_id: str | None = None,
        durability: str | None = None,
        options: RunOptions | None = None,
    ) -> RunResult[S]:
        """Run the graph until it ends or pauses, and return the result.

        Args:
            input: the input state; None to continue the thread (re-run what
                failed, pass breakpoints); `Command(resume=...)` to answer interrupts.
            thread_id: names the run's persisted history (needed with a checkpointer).
            context: any object; vertices read it as `ctx.context` (default: the
                `compile(context=...)` object).
            recursion_limit: the most supersteps this invoke may run (default 10,000).
            timeout: seconds before the run is cancelled and `RunTimeoutError` raised.
            checkpoint_id: with `input=None`, replay from this older checkpoint
                (the thread forks; its history stays).
            durability: "sync" (default), "step" or "exit".
            options: rarely needed per-run options (`RunOptions`).

        Returns:
            The `RunResult`: `status` is `"done"` or `"interrupted"`.

        Raises:
            VertexError: a task failed and its retries are spent (the run stays resumable).
            MergeConflictError: branches changed a key to different values.
            RecursionLimitError: the run needed more supersteps than allowed.
            RunTimeoutError: the run did not finish within `timeout`.
            SerializationError: a state could not be stored (naming the vertex and the key).
            CheckpointError: the checkpointer failed, or another run advanced the thread.
        """
        handle = self.start(
            input,
            thread_id=thread_id,
            context=context,
            recursion_limit=recursion_limit,
            checkpoint_id=checkpoint_id,
            durability=durability,
            options=options,
        )
        try:
            return handle.result(timeout)
        except RunTimeoutError:
            raise handle.give_up(timeout) from None

    def start(  # noqa: PLR0913 - the same keywords as invoke
        self,
        input: Any,  # noqa: A002 - LangGraph's name for it
        *,
        thread_id: str | None = None,
        context: Any = None,
        recursion_limit: int | None = None,
        checkpoint_id: str | None = None,
        durability: str | None = None,
        options: RunOptions | None = None,
    ) -> RunHandle[S]:
        """Start a run and return its handle at once.

        Takes the same arguments as `invoke` (but `timeout`: use
        `handle.result(timeout)`). Errors in the input are raised here.
        """
        return self._start(
            input, _request(thread_id, context, recursion_limit, checkpoint_id, durability, options)
        )

    def _start(self, input_: Any, request: RunRequest, *, sink: Listener | None = None) -> RunHandle[S]:
        if self._runtime.closed:
            msg = f"graph {self.name!r} is closed; compile it again to run it"
            raise ActorGraphError(msg)
        if sink is not None:
            options = request.options
            listeners = (*options.listeners, sink)
            request = dataclasses.replace(request, options=dataclasses.replace(options, listeners=listeners))
        future: Future[RunResult[Any]] = Future()
        run = Run(self._runtime, prepare(self._settings, input_, request, future))
        handle: RunHandle[S] = RunHandle(
            run.id, request.thread_id, future, lambda wait: self._runtime.cancel(run, wait=wait), run.stopped
        )
        self._runtime.start(run)
        return handle

    def stream(  # noqa: PLR0913 - the same keywords as invoke, and the mode
        self,
        input: Any,  # noqa: A002 - LangGraph's name for it
        *,
        mode: str | Sequence[str] = "values",
        thread_id: str | None = None,
        context: Any = None,
        recursion_limit: int | None = None,
        checkpoint_id: str | None = None,
        durability: str | None = None,
        options: RunOptions | None = None,
    ) -> Iterator[Any]:
        """Run the graph and yield what happens, as it happens.

        Args:
            input: as for `invoke`.
            mode: "values" (the run's state after each committed superstep,
                starting with the state it starts from), "updates" (`{task_id:
                state}` for each finished task), "events" (every event record),
                "custom" (what vertices send with `ctx.emit`); a list of modes
                yields `(mode, item)` pairs.
            thread_id: as for `invoke` (and the other keywords too).
            context: as for `invoke`.
            recursion_limit: as for `invoke`.
            checkpoint_id: as for `invoke`.
            durability: as for `invoke`.
            options: as for `invoke`.

        Yields:
            The items of the chosen modes. Leaving the loop early cancels the run;
            a failed run raises its error after its last item.
        """
        request = _request(thread_id, context, recursion_limit, checkpoint_id, durability, options)
        return stream_items(lambda sink: self._start(input, request, sink=sink), mode)

    async def astart(  # noqa: PLR0913 - the same keywords as invoke
        self,
        input: Any,  # noqa: A002 - LangGraph's name for it
        *,
        thread_id: str | None = None,
        context: Any = None,
        recursion_limit: int | None = None,
        checkpoint_id: str | None = None,
        durability: str | None = None,
        options: RunOptions | None = None,
    ) -> RunHandle[S]:
        """`start` for async code (reading a checkpoint happens off the event loop)."""
        request = _request(thread_id, context, recursion_limit, checkpoint_id, durability, options)
        return await self._astart(input, request)

    async def _astart(self, input_: Any, request: RunRequest, sink: Listener | None = None) -> RunHandle[S]:
        if self.checkpointer is None:
            return self._start(input_, request, sink=sink)
        import asyncio  # noqa: PLC0415 - asyncio pulls in ssl (4 MiB): only async paths import it

        return await asyncio.to_thread(self._start, input_, request, sink=sink)

    async def ainvoke(  # noqa: PLR0913 - LangGraph's invoke keywords
        self,
        input: Any,  # noqa: A002 - LangGraph's name for it
        *,
        thread_id: str | None = None,
        context: Any = None,
        recursion_limit: int | None = None,
        timeout: float | None = None,  # noqa: ASYNC109 - invoke's keyword
        checkpoint_id: str | None = None,
        durability: str | None = None,
        options: RunOptions | None = None,
    ) -> RunResult[S]:
        """`invoke` for async code; cancelling the awaiting task cancels the run."""
        request = _request(thread_id, context, recursion_limit, checkpoint_id, durability, options)
        handle = await self._astart(input, request)
        result: RunResult[S] = await await_run(handle, timeout)
        return result

    async def astream(  # noqa: PLR0913 - the same keywords as stream
        self,
        input: Any,  # noqa: A002 - LangGraph's name for it
        *,
        mode: str | Sequence[str] = "values",
        thread_id: str | None = None,
        context: Any = None,
        recursion_limit: int | None = None,
        checkpoint_id: str | None = None,
        durability: str | None = None,
        options: RunOptions | None = None,
    ) -> AsyncIterator[Any]:
        """`stream` for async code; leaving the loop or cancelling the task cancels the run."""
        request = _request(thread_id, context, recursion_limit, checkpoint_id, durability, options)
        async for item in astream_items(lambda sink: self._astart(input, request, sink), mode):
            yield item

    # -- pictures --------------------------------------------------------------------------

    def draw_mermaid(self, thread_id: str | None = None) -> str:
        """The graph as a Mermaid flowchart; with `thread_id`, each vertex shows its last status."""
        return to_mermaid(self.spec, self._threads.statuses(thread_id) if thread_id else None)

    def draw_dot(self, thread_id: str | None = None) -> str:
        """The graph in Graphviz DOT; with `thread_id`, each vertex shows its last status."""
        return to_dot(self.spec, self._threads.statuses(thread_id) if thread_id else None)

    def draw_png(self, path: str | os.PathLike[str], thread_id: str | None = None) -> Path:
        """Render the graph to a PNG file with Graphviz's `dot` (which must be installed)."""
        return render_png(self.draw_dot(thread_id), path)

    # -- threads -------------------------------------------------------------------------

    def get_state(self, thread_id: str, checkpoint_id: str | None = None) -> Snapshot[S]:
        """The thread's state at its newest checkpoint (or at `checkpoint_id`).

        Raises:
            ThreadNotFoundError: the thread (or checkpoint) has no stored checkpoint.
        """
        return self._threads.get_state(thread_id, checkpoint_id)

    def get_history(
        self, thread_id: str, *, limit: int | None = None, before: str | None = None
    ) -> list[Snapshot[S]]:
        """The thread's snapshots, newest first (at most `limit`, older than `before`)."""
        return self._threads.get_history(thread_id, limit=limit, before=before)

    def update_state(
        self,
        thread_id: str,
        values: Any,
        *,
        as_vertex: str | None = None,
        checkpoint_id: str | None = None,
        replace: bool = False,
    ) -> str:
        """Change a thread's state with an update, in a new checkpoint; history is kept.

        `values` is an update: a mapping of some keys, applied to the thread's
        state through the graph's reducers (`append` appends, `add` adds, a key
        without a reducer is replaced). With `replace=True`, `values` is the whole
        new state instead.

        Args:
            thread_id: the thread.
            values: the update (or, with `replace=True`, the whole state).
            as_vertex: None: the vertices about to run see the new state. A
                vertex name: routing continues as if that vertex had just produced
                it (messages waiting for it are consumed). `END`: the thread ends
                with this state (pending interrupts and tasks are dropped).
                `START`: the state is a new input; `invoke(None, ...)` runs it.
            checkpoint_id: fork from this older checkpoint instead of the head.
            replace: `values` is the whole new state, not an update.

        Returns:
            The new checkpoint's id.

        Raises:
            InvalidUpdateError: the update does not fit the state or its schema,
                a reducer cannot apply it, or `as_vertex` names no vertex; the
                thread is left as it was.
        """
        return self._threads.update_state(
            thread_id, values, as_vertex=as_vertex, checkpoint_id=checkpoint_id, replace=replace
        )

    # -- lifecycle -------------------------------------------------------------------------

    def close(self, timeout: float = 10.0) -> None:
        """Stop every actor and thread this graph started (runs still going fail).

        Vertices still running a task are waited for, up to `timeout` seconds in
        all; a `StuckVertexWarning` names them while `close` waits, and again if
        it gives up (their threads then end on their own when the call returns).
        """
        if self._finalizer.detach() is not None:
            self._runtime.close(timeout)

    @property
    def closed(self) -> bool:
        """True after `close()`."""
        return self._runtime.closed

    def __enter__(self) -> CompiledGraph[S]:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"CompiledGraph({self.name!r}, vertices={list(self.spec.vertices)})"


def _request(  # noqa: PLR0913, PLR0917 - invoke's keywords, passed through in order
    thread_id: str | None,
    context: Any,
    recursion_limit: int | None,
    checkpoint_id: str | None,
    durability: str | None,
    options: RunOptions | None,
) -> RunRequest:
    return RunRequest(
        thread_id=thread_id,
        context=context,
        recursion_limit=_recursion_limit(recursion_limit),
        checkpoint_id=checkpoint_id,
        durability=durability,
        options=options or RunOptions(),
    )


def _recursion_limit(limit: int | None) -> int:
    if limit is None:
        return DEFAULT_RECURSION_LIMIT
    if not isinstance(limit, int) or isinstance(limit, bool) or limit < 1:
        msg = f"recursion_limit must be a positive int, got {limit!r}"
        raise ActorGraphError(msg)
    return limit
