"""`@entrypoint`: a workflow written as a function, run and recorded as a one-vertex graph.

The function's run is a run of a graph whose single vertex calls it; its
`@task` calls nest in that vertex's task. So everything a graph has, it has:
`invoke`, `stream`, threads that remember (`previous`), `interrupt()` and
`Command(resume=...)`, checkpoints in any checkpointer, resume after a crash in
another process (the function runs again from the top; finished task calls
return their recorded results without running).
"""

from __future__ import annotations

import inspect
import weakref
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from datetime import timedelta
from typing import Any, Generic, TypeVar

from actorgraph._actors.handle import RunHandle
from actorgraph._api.compiled import CompiledGraph
from actorgraph._api.graph import Graph
from actorgraph._api.queued import Submitted
from actorgraph._api.request import LIVE_DEFAULT, live_seconds
from actorgraph._engine.context import Context
from actorgraph._model.errors import ConfigError, RecordedError, ResumeError, ThreadNotFoundError, VertexError
from actorgraph._model.records import END, START
from actorgraph._model.results import RunResult, Snapshot
from actorgraph.func._faces import FACE, Final
from actorgraph.func._task import close_task_graphs, quiet_compile

__all__ = ["Entrypoint", "compiled_on", "entrypoint", "release_task_graphs"]

T = TypeVar("T")
Modes = str | Sequence[str] | None
_INJECTED = ("previous", "store", "writer", "context", "config")  # parameters the function may declare
# the entrypoints open in this process (a collected one is no longer): the task graphs close with the last
_open: weakref.WeakSet[Entrypoint[Any]] = weakref.WeakSet()


class _Call:
    """The entrypoint's vertex: calls the function with the run's input (and `previous`, `store`)."""

    def __init__(self, fn: Callable[..., Any]) -> None:
        self.fn = fn
        if inspect.isgeneratorfunction(fn) or inspect.isasyncgenfunction(fn):
            msg = f"@entrypoint cannot run the generator function {fn.__name__!r}: return a value"
            raise ConfigError(msg)
        params = inspect.signature(fn).parameters
        self.wants = {name for name in _INJECTED if name in params}
        first = next(iter(params.values()), None)
        if first is None or first.name in self.wants:
            msg = f"entrypoint {fn.__name__!r} must take its input as its first parameter"
            raise ConfigError(msg)

    def arguments(self, state: dict[str, Any], ctx: Context[Any]) -> dict[str, Any]:
        given = {
            "previous": state.get("save"),
            "store": ctx.store,
            "writer": ctx.emit,  # LangGraph's injected StreamWriter
            "context": ctx.context,
            "config": {"configurable": {"thread_id": ctx.thread_id}},
        }
        return {k: v for k, v in given.items() if k in self.wants}

    @staticmethod
    def outcome(state: dict[str, Any], returned: Any) -> dict[str, Any]:
        if isinstance(returned, Final):
            return {"input": state["input"], "output": returned.value, "save": returned.save}
        return {"input": state["input"], "output": returned, "save": returned}


def _vertex(fn: Callable[..., Any]) -> Callable[..., Any]:
    call = _Call(fn)
    if inspect.iscoroutinefunction(fn):

        async def run_async(state: dict[str, Any], ctx: Context[Any]) -> dict[str, Any]:
            return call.outcome(state, await fn(state["input"], **call.arguments(state, ctx)))

        return run_async

    def run(state: dict[str, Any], ctx: Context[Any]) -> dict[str, Any]:
        return call.outcome(state, fn(state["input"], **call.arguments(state, ctx)))

    return run


def _mode(mode: Modes, run: dict[str, Any]) -> Modes:
    """An entrypoint's stream mode: "updates" unless `mode=` or LangGraph's `stream_mode=` says."""
    return mode if mode is not None or run.get("stream_mode") is not None else "updates"


class EntrypointHandle(Generic[T]):
    """A started entrypoint run: `result()` waits for it (its state is the return value)."""

    def __init__(self, handle: RunHandle[Any]) -> None:
        """Wrap the graph run's handle."""
        self.handle = handle
        self.run_id = handle.run_id
        self.thread_id = handle.thread_id

    def result(self, timeout: float | None = None) -> RunResult[T]:
        """Wait for the run to end or pause; as `Entrypoint.invoke` returns it."""
        try:
            return self.handle.result(timeout)
        except VertexError as exc:
            _raise_resume_error(exc)
            raise

    def done(self) -> bool:
        """Whether the run has ended or paused."""
        return self.handle.done()

    def cancel(self) -> bool:
        """Cancel the run (it stays resumable)."""
        return self.handle.cancel()


class Entrypoint(Generic[T]):
    """A function made a workflow by `@entrypoint`: run it like a compiled graph."""

    final = Final

    def __init__(
        self,
        fn: Callable[..., Any],
        graph: CompiledGraph[Any],
        builder: Graph[Any],
        *,
        options: Mapping[str, Any] | None = None,
    ) -> None:
        """Wrap `fn` and the graph that runs it (use `@entrypoint(...)`).

        `options` are the compile options it was made with (its `store`, `cache`,
        `live_interrupts`), kept to compile it on another checkpointer (a worker's).
        """
        self.fn = fn
        self.graph = graph
        self.builder = builder
        self.name = graph.name
        self.options: Mapping[str, Any] = dict(options or {})
        _open.add(self)
        self._closed = False

    def __repr__(self) -> str:
        return f"entrypoint({self.name!r})"

    def invoke(self, input: Any, config: Any = None, **run: Any) -> RunResult[T]:  # noqa: A002 - LangGraph's name for it
        """Run the function (or continue it: `None`, `Command(resume=...)`), as `CompiledGraph.invoke`.

        Returns:
            The run's result; its `state` is the function's return value (while paused, the
            thread's, as `get_state` shows it: the last run's, None before the first returned).

        Raises:
            ResumeError: the function now calls its tasks in another order or with other
                arguments than the run it resumes (the thread is left as it was).
            VertexError: the function failed.
        """
        try:
            return self.graph.invoke(input, config, **run)
        except VertexError as exc:
            _raise_resume_error(exc)
            raise

    def start(self, input: Any, **run: Any) -> EntrypointHandle[T]:  # noqa: A002 - LangGraph's name for it
        """Start a run and return its handle at once; `handle.result()` is what `invoke` returns."""
        return EntrypointHandle(self.graph.start(input, **run))

    def submit(self, input: Any, *, thread_id: str, answered_by: str | None = None) -> Submitted:  # noqa: A002 - invoke's name for it
        """Queue a run for the workers (`actorgraph worker module:entrypoint`), as `CompiledGraph.submit`.

        `input`: the function's input, None (continue the thread) or `Command(resume=...)`
        (the answer is claimed now, as `invoke` claims it; the worker runs the function on).
        The thread's state is the return value once a worker ran it (`get_state`, `handle.wait()`).

        Raises:
            ConfigError: the entrypoint has no checkpointer that workers can share
                (`@entrypoint(checkpointer=PostgresCheckpointer(dsn))` or a `SqliteCheckpointer`).
            AlreadyAnsweredError: another answer to the question was claimed first.
            ResumeError: nothing waits for the answer, or it is ambiguous.
            CheckpointError: the thread has a run queued or running already (wait for it first).
        """
        if self.graph.checkpointer is None:
            msg = (
                f"entrypoint {self.name!r} has no checkpointer, so no worker could take its runs: "
                "@entrypoint(checkpointer=PostgresCheckpointer(dsn)), or a SqliteCheckpointer(path) "
                "for workers on one machine"
            )
            raise ConfigError(msg)
        return self.graph.submit(input, thread_id=thread_id, answered_by=answered_by)

    def stream(self, input: Any, config: Any = None, *, mode: Modes = None, **run: Any) -> Iterator[Any]:  # noqa: A002
        """Stream the run as `CompiledGraph.stream` does (default `"updates"`, or `stream_mode=`)."""
        return self.graph.stream(input, config, mode=_mode(mode, run), **run)

    async def ainvoke(self, input: Any, config: Any = None, **run: Any) -> RunResult[T]:  # noqa: A002 - LangGraph's name for it
        """`invoke`, awaited."""
        try:
            return await self.graph.ainvoke(input, config, **run)
        except VertexError as exc:
            _raise_resume_error(exc)
            raise

    def astream(
        self,
        input: Any,  # noqa: A002 - LangGraph's name for it
        config: Any = None,
        *,
        mode: Modes = None,
        **run: Any,
    ) -> AsyncIterator[Any]:
        """`stream`, asynchronously."""
        return self.graph.astream(input, config, mode=_mode(mode, run), **run)

    def get_state(self, thread_id: str, **options: Any) -> Snapshot[Any]:
        """The thread's snapshot, as `CompiledGraph.get_state`.

        Its `state` is what LangGraph's `StateSnapshot.values` is for an
        entrypoint: the function's last return value (while a run is paused, the
        previous run's; None before the first returned).
        """
        return self.graph.get_state(thread_id, **options)

    def get_history(self, thread_id: str, **options: Any) -> list[Snapshot[Any]]:
        """The thread's checkpoints, newest first, as `CompiledGraph.get_history` (states as `get_state`)."""
        return self.graph.get_history(thread_id, **options)

    def update_state(self, thread_id: str, value: Any, *, checkpoint_id: str | None = None) -> str:
        """Make `value` the thread's return value and the next run's `previous`, as if the function had.

        As LangGraph's: a paused run is ended (its questions dropped), a thread
        with no run yet begins so, and `entrypoint.final(value=..., save=...)`
        sets the two apart. History is kept.

        Args:
            thread_id: the thread.
            value: the return value (or an `entrypoint.final`).
            checkpoint_id: fork from this older checkpoint instead of the head.

        Returns:
            The new checkpoint's id.

        Raises:
            ThreadNotFoundError: `checkpoint_id` is not one of the thread's.
        """
        try:
            return self.graph.update_state(thread_id, value, as_vertex=self.name, checkpoint_id=checkpoint_id)
        except ThreadNotFoundError:
            if checkpoint_id is not None:
                raise
        return self.graph.bulk_update_state(thread_id, [[(value, self.name)]])[-1]

    def as_vertex(self, graph: Any, name: str, options: dict[str, Any]) -> tuple[Any, dict[str, Any]]:  # noqa: ARG002 - the hook's interface
        """What `add_vertex(name, an_entrypoint)` adds: its graph as a subgraph, in the parent's store.

        The vertex's state is the function's input, and what the function returns
        is the vertex's update (as a LangGraph node's).
        """
        options.setdefault("input", FACE.given)
        options.setdefault("output", _as_update)
        return self.builder, options

    __actorgraph_vertex__ = as_vertex  # what `Graph.add_vertex` looks for

    def __actorgraph_invocable__(self) -> CompiledGraph[Any]:
        """The graph a vertex invoking this entrypoint runs (see `_api/invoked.py`)."""
        return self.graph

    def close(self) -> None:
        """Stop the entrypoint's actors (and the tasks' when no entrypoint is open)."""
        if self._closed:
            return
        self._closed = True
        self.graph.close()
        _open.discard(self)
        release_task_graphs()

    def __enter__(self) -> Entrypoint[T]:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def compiled_on(entry: Entrypoint[Any], checkpointer: Any) -> CompiledGraph[Any]:
    """The entrypoint's graph compiled anew on `checkpointer`, with the options it was made with.

    What runs an entrypoint on a store chosen elsewhere (`actorgraph worker TARGET
    --dsn`, the command line's `--db`) compiles; the caller closes it.
    """
    return quiet_compile(entry.builder, checkpointer, **entry.options)


def release_task_graphs() -> None:
    """Close the tasks' graphs unless an entrypoint is open in this process (they go with the last).

    For what runs an entrypoint's graph without the entrypoint (a server), when it stops.
    """
    if not _open:
        close_task_graphs()


def _as_update(returned: Any) -> Any:
    """A subgraph run's result (the return value, as the face shows it) is the vertex's update."""
    return returned


def _raise_resume_error(exc: VertexError) -> None:
    """Raise the `ResumeError` a task call raised inside the function, if that is why it failed.

    Otherwise return: the caller re-raises the `VertexError` as it is, its
    `__cause__` (what the function or its task raised) kept.
    """
    cause = exc.__cause__ or exc.__context__
    if isinstance(cause, ResumeError):
        raise cause from None
    if isinstance(cause, RecordedError) and cause.type.endswith("ResumeError"):
        raise ResumeError(cause.message) from None


class entrypoint:  # noqa: N801 - LangGraph's name for the decorator
    """Make a function a workflow: `@entrypoint(checkpointer=MemoryCheckpointer())`.

    The function takes its input as its first parameter, and may declare
    `previous` (what the thread's last run returned, or saved with
    `entrypoint.final(value=..., save=...)`), `store` (the `store=`), `writer`
    (sends custom stream data, as `get_stream_writer()`), `context` (the run's
    `context=`) and `config` (`{"configurable": {"thread_id": ...}}`). Inside
    it, `@task` calls run in parallel and are recorded; `interrupt()` asks a
    person. Runs with a checkpointer need a `thread_id`.
    """

    final = Final

    def __init__(  # noqa: PLR0913 - the compile options a workflow takes, keyword-only
        self,
        checkpointer: Any = None,
        *,
        store: Any = None,
        cache: Any = None,
        retry: Any = None,
        name: str | None = None,
        live_interrupts: timedelta | float | None = LIVE_DEFAULT,
    ) -> None:
        """Say where the function's runs are kept, and what its tasks share.

        Args:
            checkpointer: where the runs are recorded (runs then need a `thread_id`).
            store: a memory store, the function's `store` parameter and its tasks' `ctx.store`.
            cache: a node cache for its tasks with a `CachePolicy`.
            retry: the function's retry policy (its tasks have their own).
            name: the workflow's name (default: the function's).
            live_interrupts: how long `interrupt()` in the function or in its tasks waits in its
                actor to go on live when answered (10 min; None: never, an answer runs it again),
                as `compile(live_interrupts=...)`.

        Raises:
            ConfigError: `live_interrupts` is not a positive duration or None.
        """
        self.checkpointer = checkpointer
        self.options = {"store": store, "cache": cache, "live_interrupts": live_seconds(live_interrupts)}
        self.retry = retry
        self.name = name

    def __call__(self, fn: Callable[..., T]) -> Entrypoint[T]:
        """Make `fn` an `Entrypoint`."""
        name = str(self.name or getattr(fn, "__name__", None) or "entrypoint")
        g: Graph[Any] = Graph(name=name, returns="state")
        g.face = FACE  # callers give the input and are shown the return value, never the record
        g.add_vertex(name, _vertex(fn), **({"retry": self.retry} if self.retry is not None else {}))
        g.add_edge(START, name)
        g.add_edge(name, END)
        options = {k: v for k, v in self.options.items() if v is not None or k == "live_interrupts"}
        return Entrypoint(fn, quiet_compile(g, self.checkpointer, **options), g, options=options)
