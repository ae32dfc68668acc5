"""`CompiledGraph`: running a validated graph (invoke, start) and closing it."""

from __future__ import annotations

import uuid
import weakref
from concurrent.futures import Future
from types import TracebackType
from typing import Any, Generic, TypeVar

from actorgraph._clock import Clock, SystemClock
from actorgraph._copy import copy_state
from actorgraph._errors import ActorGraphError, RunTimeoutError
from actorgraph._handle import RunHandle
from actorgraph._run import Run, RunSetup
from actorgraph._runtime import Runtime
from actorgraph._spec import GraphSpec
from actorgraph._superstep import initial
from actorgraph._task import TaskEnv
from actorgraph._types import Command, Interrupt, Node, RunResult, Send, Snapshot

__all__ = ["DEFAULT_RECURSION_LIMIT", "CompiledGraph"]

S = TypeVar("S")

DEFAULT_RECURSION_LIMIT = 10_000


class CompiledGraph(Generic[S]):
    """A validated graph, ready to run; owns the actors its runs use.

    Use it as a context manager, or call `close()`, to stop its actors.
    """

    def __init__(self, spec: GraphSpec, *, clock: Clock | None = None, coordinators: int = 4) -> None:
        """Wrap a validated spec (use `Graph.compile()` rather than this)."""
        self.spec = spec
        self.clock = clock or SystemClock()
        self._runtime = Runtime(spec, self.clock, coordinators=coordinators)
        self._finalizer = weakref.finalize(self, self._runtime.close)

    @property
    def name(self) -> str:
        """The graph's name."""
        return self.spec.name

    def invoke(
        self,
        input: Any,  # noqa: A002 - LangGraph's name for it
        *,
        thread_id: str | None = None,
        context: Any = None,
        recursion_limit: int | None = None,
        timeout: float | None = None,
    ) -> RunResult[S]:
        """Run the graph to its end (or until it pauses) and return the result.

        Args:
            input: the input state.
            thread_id: names the run's persisted history (with a checkpointer).
            context: any object; vertices read it as `ctx.context`.
            recursion_limit: the most supersteps this invoke may run (default 10,000).
            timeout: seconds before the run is cancelled and `RunTimeoutError` raised.

        Returns:
            The `RunResult`: `status` is `"done"` or `"interrupted"`.

        Raises:
            VertexError: a task failed and its retries are spent.
            MergeConflictError: branches changed a key to different values.
            RecursionLimitError: the run needed more supersteps than allowed.
            RunTimeoutError: the run did not finish within `timeout`.
        """
        handle = self.start(input, thread_id=thread_id, context=context, recursion_limit=recursion_limit)
        try:
            return handle.result(timeout)
        except RunTimeoutError:
            handle.cancel()
            msg = f"run {handle.run_id} did not finish within {timeout} s and was cancelled"
            raise RunTimeoutError(msg) from None

    def start(
        self,
        input: Any,  # noqa: A002 - LangGraph's name for it
        *,
        thread_id: str | None = None,
        context: Any = None,
        recursion_limit: int | None = None,
    ) -> RunHandle[S]:
        """Start a run and return its handle at once.

        Takes the same arguments as `invoke` (but `timeout`, which is
        `handle.result(timeout)`). Errors in the input are raised here.
        """
        if self._runtime.closed:
            msg = f"graph {self.name!r} is closed; compile it again to run it"
            raise ActorGraphError(msg)
        limit = _recursion_limit(recursion_limit)
        state = _input_state(input)
        run_id = uuid.uuid4().hex
        node = Node(f"{run_id[:12]}/0:input", state)
        env = TaskEnv(node_prefix=f"{run_id[:12]}/", thread_id=thread_id, context=context)
        future: Future[RunResult[Any]] = Future()
        position = initial(self.spec, node)
        run = Run(self._runtime, RunSetup(run_id, thread_id, position, env, limit, future))
        handle: RunHandle[S] = RunHandle(run_id, thread_id, future, lambda: self._runtime.cancel(run))
        self._runtime.start(run)
        return handle

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


def _input_state(value: Any) -> Any:
    if value is None:
        msg = (
            "invoke(None) resumes a thread, but there is nothing to resume: this graph has no "
            "checkpointer or no thread_id was given; pass an input state"
        )
        raise ActorGraphError(msg)
    if isinstance(value, (Send, Interrupt, RunResult, Snapshot)) or (
        isinstance(value, Command) and value.goto
    ):
        msg = (
            f"the input must be a state (a dict, a dataclass, ...), got a {type(value).__name__}; "
            "Send and Command(goto=...) are returned by vertices and routers"
        )
        raise ActorGraphError(msg)
    if isinstance(value, Command):
        msg = (
            "Command(resume=...) as input resumes an interrupted thread; "
            "it needs a checkpointer and a thread_id"
        )
        raise ActorGraphError(msg)
    try:
        return copy_state(value)
    except Exception as exc:
        msg = (
            f"the input state cannot be copied ({type(exc).__name__}: {exc}); "
            "states must be deep-copyable values"
        )
        raise ActorGraphError(msg) from exc
