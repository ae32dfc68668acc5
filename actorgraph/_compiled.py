"""`CompiledGraph`: running a validated graph, and reading and changing its threads."""

from __future__ import annotations

import weakref
from concurrent.futures import Future
from types import TracebackType
from typing import Any, Generic, TypeVar

from actorgraph._clock import Clock, SystemClock
from actorgraph._errors import ActorGraphError, RunTimeoutError
from actorgraph._handle import RunHandle
from actorgraph._resume import GraphSettings, RunOptions, RunRequest, prepare
from actorgraph._run import Breakpoints, Run
from actorgraph._runtime import Runtime
from actorgraph._spec import GraphSpec
from actorgraph._threads import Threads
from actorgraph._types import RunResult, Snapshot
from actorgraph.checkpoint._protocol import Checkpointer

__all__ = ["DEFAULT_RECURSION_LIMIT", "CompiledGraph"]

S = TypeVar("S")

DEFAULT_RECURSION_LIMIT = 10_000


class CompiledGraph(Generic[S]):
    """A validated graph, ready to run; owns the actors its runs use.

    Use it as a context manager, or call `close()`, to stop its actors.
    """

    def __init__(
        self,
        spec: GraphSpec,
        *,
        checkpointer: Checkpointer | None = None,
        breakpoints: Breakpoints | None = None,
        durability: str = "sync",
        clock: Clock | None = None,
    ) -> None:
        """Wrap a validated spec (use `Graph.compile()` rather than this)."""
        self.spec = spec
        self.checkpointer = checkpointer
        self.clock = clock or SystemClock()
        self._settings = GraphSettings(spec, checkpointer, breakpoints or Breakpoints(), durability)
        self._threads = Threads(spec, checkpointer)
        self._runtime = Runtime(spec, self.clock)
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
            context: any object; vertices read it as `ctx.context`.
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
            handle.cancel()
            msg = f"run {handle.run_id} did not finish within {timeout} s and was cancelled"
            raise RunTimeoutError(msg) from None

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
        if self._runtime.closed:
            msg = f"graph {self.name!r} is closed; compile it again to run it"
            raise ActorGraphError(msg)
        request = RunRequest(
            thread_id=thread_id,
            context=context,
            recursion_limit=_recursion_limit(recursion_limit),
            checkpoint_id=checkpoint_id,
            durability=durability,
            options=options or RunOptions(),
        )
        future: Future[RunResult[Any]] = Future()
        run = Run(self._runtime, prepare(self._settings, input, request, future))
        handle: RunHandle[S] = RunHandle(run.id, thread_id, future, lambda: self._runtime.cancel(run))
        self._runtime.start(run)
        return handle

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
        state: Any,
        *,
        as_vertex: str | None = None,
        checkpoint_id: str | None = None,
    ) -> str:
        """Write a new checkpoint with `state` as the thread's state; history is kept.

        Without `as_vertex`, the vertices that were about to run will see `state`
        instead. With `as_vertex`, routing continues as if that vertex had just
        produced `state` (messages waiting for it are consumed). With
        `checkpoint_id`, the update forks from that older checkpoint.

        Returns:
            The new checkpoint's id.
        """
        return self._threads.update_state(thread_id, state, as_vertex=as_vertex, checkpoint_id=checkpoint_id)

    # -- lifecycle -------------------------------------------------------------------------

    def close(self) -> None:
        """Stop every actor and thread this graph started (runs still going fail)."""
        self._finalizer()

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


def _recursion_limit(limit: int | None) -> int:
    if limit is None:
        return DEFAULT_RECURSION_LIMIT
    if not isinstance(limit, int) or isinstance(limit, bool) or limit < 1:
        msg = f"recursion_limit must be a positive int, got {limit!r}"
        raise ActorGraphError(msg)
    return limit
