"""`CompiledGraph`: running a validated graph, and reading and changing its threads."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from types import TracebackType
from typing import TYPE_CHECKING, Any, Generic, TypeVar, Unpack

from actorgraph._actors.handle import RunHandle
from actorgraph._actors.messages import Launch, RunOrder, new_run_id
from actorgraph._actors.reaper import when_collected
from actorgraph._actors.runtime import Runtime
from actorgraph._actors.tracing import caller
from actorgraph._api.history import History
from actorgraph._api.nesting import Nested, nested_order, paused_by
from actorgraph._api.pictures import Pictures
from actorgraph._api.request import GraphSettings, RunKeywords, cache_namespaces, run_request
from actorgraph._api.spellings import stream_modes
from actorgraph._api.stream import astream_items, await_run, stream_items
from actorgraph._engine.boundary import given_input
from actorgraph._engine.clock import Clock
from actorgraph._engine.inputs import caller_input
from actorgraph._model.errors import ActorGraphError, ConfigError, RunTimeoutError
from actorgraph._model.results import RunResult, Snapshot
from actorgraph._model.runs import RunRequest
from actorgraph.events import Listener

if TYPE_CHECKING:
    from actorgraph._api.queued import Submitted

__all__ = ["CompiledGraph"]

S = TypeVar("S")


class CompiledGraph(Pictures, Generic[S]):
    """A validated graph, ready to run; owns the actors its runs use.

    Use it as a context manager, or call `close()`, to stop its actors.
    """

    def __init__(self, settings: GraphSettings, *, clock: Clock | None = None) -> None:
        """Wrap a validated graph and its settings (use `Graph.compile()` rather than this)."""
        self.spec = settings.spec
        self.checkpointer = settings.checkpointer
        self._settings = settings
        self._threads = History(settings.spec, settings.checkpointer)
        self._runtime = Runtime(settings.spec, clock, backend=settings.backend)
        # dropped without close(): the reaper thread closes it (never the thread that collects it)
        self._reaping = when_collected(self, self._runtime.close)

    @property
    def name(self) -> str:
        """The graph's name."""
        return self.spec.name

    # -- running -------------------------------------------------------------------------

    def invoke(
        self,
        input: Any,  # noqa: A002 - LangGraph's name for it
        config: Mapping[str, Any] | None = None,
        *,
        timeout: float | None = None,
        **run: Unpack[RunKeywords],
    ) -> RunResult[S]:
        """Run the graph until it ends or pauses, and return the result.

        Args:
            input: the input state (on a thread whose last run is done: an update
                to its state); None to continue the thread (re-run what failed,
                pass breakpoints); `Command(resume=...)` to answer interrupts;
                `Command(goto=..., update=...)` to start at `goto`.
            config: LangGraph's spelling of `thread_id`, `checkpoint_id` and
                `recursion_limit`: `{"configurable": {"thread_id": "1"}, "recursion_limit": 50}`.
            timeout: seconds before the run is cancelled and `RunTimeoutError` raised.
            **run: the run's keywords (`RunKeywords`): `thread_id`, `context`,
                `recursion_limit`, `checkpoint_id`, `durability`, `interrupt_before`,
                `interrupt_after`, `discard_pending`, `listeners`.

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
        handle, nested = self._start(input, run_request(self._settings, run, config=config))
        try:
            result = handle.result(timeout)
        except RunTimeoutError:
            raise handle.give_up(timeout) from None
        if nested is not None and result.status == "interrupted":
            raise paused_by(nested, result)  # the invoking task pauses with the questions
        return result

    def start(self, input: Any, **run: Unpack[RunKeywords]) -> RunHandle[S]:  # noqa: A002 - LangGraph's name for it
        """Start a run and return its handle at once (it never waits for the checkpointer).

        Takes the same arguments as `invoke` (but `timeout`: use `handle.result(timeout)`).
        An input that is not a state, or an unknown keyword, is refused here;
        what depends on the thread's checkpoint (nothing to resume, a paused
        thread given new input) is raised by `handle.result()`.
        """
        return self._start(input, run_request(self._settings, run))[0]

    def _start(self, input_: Any, request: RunRequest, label: str = "") -> tuple[RunHandle[S], Nested | None]:
        """Start a run; inside a running vertex, one nested in its task (see `_api/nesting.py`)."""
        if self._runtime.closed:
            msg = f"graph {self.name!r} is closed; compile it again to run it"
            raise ActorGraphError(msg)
        runtime = self._runtime
        given = caller_input(given_input(self.spec, input_))  # checked and copied once
        nested = nested_order(self._settings, given, request, label=label)
        if self._settings.stateful and nested is None:
            msg = (
                f"graph {self.name!r} was compiled with checkpointer=True, for a stateful subgraph: "
                "it keeps its state in the checkpointer of the graph it is a vertex of; to run it "
                "alone, compile it with a checkpointer (or with none)"
            )
            raise ConfigError(msg)
        order = nested.order if nested is not None else RunOrder(self._settings.checkpointer, request, given)
        launch = Launch(new_run_id(), order, runtime, trace=caller() if self._settings.tracing else None)
        handle: RunHandle[S] = RunHandle(
            launch.run_id,
            request.thread_id,
            launch.future,
            lambda wait: runtime.cancel(launch, wait=wait),
            launch.stopped,
            launch.started,
        )
        runtime.start(launch)
        if nested is not None:  # cancelling the invoking run cancels this one
            forget = nested.frame.nest.cancelled(lambda: runtime.cancel(launch, wait=False))
            launch.future.add_done_callback(lambda _: forget())
            nested.frame.started.append(handle)
        return handle, nested

    def submit(self, input: Any, *, thread_id: str, answered_by: str | None = None) -> Submitted:  # noqa: A002 - invoke's name for it
        """Queue a run for the workers (`actorgraph worker`); return its handle (`thread_id`, `wait`).

        `input`: a state, None (continue) or `Command(resume=...)` (claimed now, as `invoke` claims it).
        The thread is "queued" until a worker takes it; needs a SQL checkpointer the workers share.
        """
        from actorgraph._api.queued import submit  # noqa: PLC0415 - the run queue loads with its first use

        return submit(self.checkpointer, input, thread_id, answered_by=answered_by)

    def stream(
        self,
        input: Any,  # noqa: A002 - LangGraph's name for it
        config: Mapping[str, Any] | None = None,
        *,
        mode: str | Sequence[str] | None = None,
        subgraphs: bool = False,
        stream_mode: str | Sequence[str] | None = None,
        **run: Unpack[RunKeywords],
    ) -> Iterator[Any]:
        """Run the graph and yield what happens, as it happens.

        Args:
            input: as for `invoke`.
            mode: "values" (the run's state after each committed superstep,
                starting with the state it starts from), "updates" (`{task_id:
                state}` for each finished task), "events" (every event record),
                "custom" (what vertices send with `ctx.emit`), "messages"
                (`(chunk, metadata)` for each message piece a vertex streams, LLM
                tokens: see `Context.stream_message`; a subgraph's pieces too, with
                its namespace in the metadata), "tasks" (a dict when each task
                starts and when it ends), "checkpoints" (a dict for each checkpoint
                stored), "debug" (both, with their kind, superstep and time: the
                keys are LangGraph's, see the streaming concepts page); a list of
                modes yields `(mode, item)` pairs. A run that pauses says so last, as
                LangGraph's: `{"__interrupt__": (Interrupt, ...)}` in "updates" (`()`
                at a breakpoint), the state with that key in "values".
            subgraphs: yield the items of subgraphs' runs too, each tagged with
                its namespace as a tuple: `(namespace, item)`, or `(namespace, mode,
                item)` with a list of modes (`()` is the run itself).
            config: as for `invoke`.
            stream_mode: LangGraph's spelling of `mode`.
            **run: as for `invoke`.

        Yields:
            The items of the chosen modes. Leaving the loop early cancels the run;
            a failed run raises its error after its last item.
        """
        settings = self._settings
        return stream_items(
            lambda sink: self._start(input, run_request(settings, run, sink=sink, config=config))[0],
            stream_modes(mode, stream_mode),
            subgraphs=subgraphs,
        )

    async def astart(self, input: Any, **run: Unpack[RunKeywords]) -> RunHandle[S]:  # noqa: A002 - LangGraph's name for it
        """`start` for async code (it never blocks the event loop)."""
        return self.start(input, **run)

    async def ainvoke(
        self,
        input: Any,  # noqa: A002 - LangGraph's name for it
        config: Mapping[str, Any] | None = None,
        *,
        timeout: float | None = None,  # noqa: ASYNC109 - invoke's keyword
        **run: Unpack[RunKeywords],
    ) -> RunResult[S]:
        """`invoke` for async code; cancelling the awaiting task cancels the run."""
        handle = self._start(input, run_request(self._settings, run, config=config))[0]
        result: RunResult[S] = await await_run(handle, timeout)
        return result

    async def astream(
        self,
        input: Any,  # noqa: A002 - LangGraph's name for it
        config: Mapping[str, Any] | None = None,
        *,
        mode: str | Sequence[str] | None = None,
        subgraphs: bool = False,
        stream_mode: str | Sequence[str] | None = None,
        **run: Unpack[RunKeywords],
    ) -> AsyncIterator[Any]:
        """`stream` for async code; leaving the loop or cancelling the task cancels the run."""

        def start(sink: Listener) -> RunHandle[S]:
            return self._start(input, run_request(self._settings, run, sink=sink, config=config))[0]

        async for item in astream_items(start, stream_modes(mode, stream_mode), subgraphs=subgraphs):
            yield item

    # -- threads -------------------------------------------------------------------------

    def get_state(
        self,
        thread_id: str,
        checkpoint_id: str | None = None,
        *,
        subgraphs: bool = False,
        namespace: str | None = None,
    ) -> Snapshot[S]:
        """The thread's state at its newest checkpoint (or at `checkpoint_id`).

        Args:
            thread_id: the thread.
            checkpoint_id: a checkpoint of it (default: the newest).
            subgraphs: include the snapshots of the runs of the next superstep's tasks (their
                subgraphs', the graphs they invoked) in `Snapshot.subgraphs`, by namespace.
            namespace: the state of a subgraph's or nested run instead (`research@2~1a2b3c4d`,
                nested ones joined by `|`); `checkpoint_id` is then one of its checkpoints.

        Raises:
            ThreadNotFoundError: the thread (checkpoint, or subgraph run) has no stored checkpoint.
            ConfigError: a nested run's graph is not known in this process (the message says why).
        """
        return self._threads.get_state(thread_id, checkpoint_id, subgraphs=subgraphs, namespace=namespace)

    def get_history(
        self,
        thread_id: str,
        *,
        limit: int | None = None,
        before: str | None = None,
        namespace: str | None = None,
    ) -> list[Snapshot[S]]:
        """The thread's snapshots, newest first (at most `limit`, older than `before`).

        With `namespace`, the history of that subgraph's (or nested) run in the thread
        (its namespaces are the keys of `get_state(thread_id, subgraphs=True).subgraphs`).

        Raises:
            ThreadNotFoundError: the thread has no subgraph run `namespace` (the
                message lists the ones it has); `ConfigError` as `get_state` says.
        """
        return self._threads.get_history(thread_id, limit=limit, before=before, namespace=namespace)

    def update_state(  # noqa: PLR0913 - LangGraph's update_state, with a subgraph's namespace
        self,
        thread_id: str,
        values: Any,
        *,
        as_vertex: str | None = None,
        checkpoint_id: str | None = None,
        replace: bool = False,
        namespace: str | None = None,
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
            namespace: change a subgraph's run instead (a key of `Snapshot.subgraphs`,
                nested ones joined by `|`), with its graph's reducers and vertices; the
                parent's next run continues that run from the new checkpoint.

        Returns:
            The new checkpoint's id.

        Raises:
            InvalidUpdateError: the update does not fit the state or its schema,
                a reducer cannot apply it, or `as_vertex` names no vertex; the
                thread is left as it was.
            ThreadNotFoundError: the thread has no subgraph run `namespace` (the
                message lists the ones it has).
        """
        return self._threads.update_state(
            thread_id,
            values,
            as_vertex=as_vertex,
            checkpoint_id=checkpoint_id,
            replace=replace,
            namespace=namespace,
        )

    def bulk_update_state(
        self, thread_id: str, supersteps: Sequence[Sequence[Any]], *, checkpoint_id: str | None = None
    ) -> list[str]:
        """Apply several supersteps of updates to a thread in one call, one checkpoint each.

        Each superstep is a list of updates; an update is a mapping (as
        `update_state(thread_id, values)`) or a `(values, as_vertex)` pair. A
        superstep of one update is what `update_state` does; a superstep of
        several stands for several vertices at once, each named once: their
        writes apply in order through the reducers (a key without a reducer
        takes one), and each vertex routes the result. A thread may begin so.

        Args:
            thread_id: the thread.
            supersteps: `[[update, ...], ...]`.
            checkpoint_id: fork from this older checkpoint instead of the head.

        Returns:
            The new checkpoints' ids, oldest first.

        Raises:
            InvalidUpdateError: a malformed list, or an update that does not fit
                (naming the superstep and the update), found before anything is written.
            CheckpointError: the store failed (or `SerializationError`: it cannot keep
                a state); the checkpoints are written in one transaction, so none is.
        """
        return self._threads.bulk_update_state(thread_id, supersteps, checkpoint_id=checkpoint_id)

    def clear_cache(self, vertices: Sequence[str] | None = None) -> None:
        """Forget the outcomes the node cache keeps for these vertices (None: every vertex, subgraphs' too).

        A no-op when the graph was compiled without `cache=`. Clear a vertex
        after changing its function: the cache knows a vertex by its graph's and
        its own name, not by its code.

        Raises:
            ConfigError: a name that is not a vertex of this graph, or `vertices` is not names.
        """
        namespaces = cache_namespaces(self.spec, vertices)  # names checked with or without a cache
        if self._settings.cache is not None:
            self._settings.cache.clear(namespaces)

    # -- lifecycle -------------------------------------------------------------------------

    def close(self, timeout: float = 10.0) -> None:
        """Stop every actor and thread this graph started (runs still going fail).

        Vertices still running a task are waited for, up to `timeout` seconds in
        all; a `StuckVertexWarning` names them while `close` waits, and again if
        it gives up (their threads then end on their own when the call returns).
        """
        self._reaping.cancel()
        self._runtime.close(timeout)  # again: waits for what an earlier close (from a listener) left

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
