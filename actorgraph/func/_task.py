"""`@task`: a function whose calls inside an entrypoint run on actors, in parallel, each one recorded.

Calling a task returns a `TaskFuture` at once; the call runs as a run of a
one-vertex graph nested in the calling task (see `_api/nesting.py`), so its
result is checkpointed in the entrypoint's thread the moment it finishes, an
`interrupt()` inside it pauses the entrypoint, and when the entrypoint runs
again (after an answer, a failure or a crash) a finished call returns its
recorded result without running. A call is matched to its record by the task's
name, the call's place in the entrypoint's order of calls and a digest of its
arguments: a mismatch is a `ResumeError`, never another call's result.
"""

from __future__ import annotations

import functools
import inspect
import threading
import warnings
import weakref
from collections.abc import Callable, Generator
from typing import Any, Generic, TypeVar

from actorgraph._actors.reaper import Reaping, settle, when_collected
from actorgraph._api.compiled import CompiledGraph
from actorgraph._api.graph import Graph
from actorgraph._engine.context import current_nest
from actorgraph._engine.nesting import NestFrame
from actorgraph._model.errors import ConfigError
from actorgraph._model.policy import CachePolicy, RetryPolicy
from actorgraph._model.records import END, START
from actorgraph._model.results import RunResult
from actorgraph.func._faces import CALL

__all__ = ["TaskFunction", "TaskFuture", "close_task_graphs", "quiet_compile", "task"]

T = TypeVar("T")

_live: weakref.WeakSet[TaskFunction[Any]] = weakref.WeakSet()  # the tasks whose graphs are open
_graphs_lock = threading.Lock()


def close_task_graphs() -> None:
    """Close the graphs tasks run on (they are compiled again when next called).

    The graphs of tasks already collected (a task defined inside an entrypoint)
    are being closed by the reaper thread: this waits for it too.
    """
    with _graphs_lock:
        graphs = [t.drop_graph() for t in list(_live)]
        _live.clear()
    for graph in graphs:
        if graph is not None:
            graph.close()
    settle()


def quiet_compile(graph: Graph[Any], checkpointer: Any = None, **options: Any) -> CompiledGraph[Any]:
    """Compile a task's or an entrypoint's graph without the cache warnings that do not apply to it.

    A task's graph has a `CachePolicy` and no cache (its runs use the entrypoint's);
    an entrypoint's graph has a cache and no policy (its tasks have them).
    """
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*(no vertex has a CachePolicy|nothing is cached unless)")
        return graph.compile(checkpointer, **options)


class TaskFuture(Generic[T]):
    """The result of a task call, to come: `.result()`, or `await` it in an `async def` entrypoint."""

    def __init__(self, handle: Any = None, frame: NestFrame | None = None, *, value: Any = None) -> None:
        """Wrap a nested run's handle (or a value computed at once, outside any run)."""
        self._handle = handle
        self._frame = frame
        self._value = value

    def done(self) -> bool:
        """Whether the call has finished."""
        return self._handle is None or self._handle.future.done()

    def result(self, timeout: float | None = None) -> T:
        """The task's return value; waits for it.

        Raises:
            VertexError: the task failed (its retries spent).
            ResumeError: the entrypoint now calls tasks differently than the run it resumes.
        """
        if self._handle is None:
            return self._value  # type: ignore[no-any-return]
        return self._read(self._handle.result(timeout))

    def _read(self, result: RunResult[Any]) -> T:
        if result.status == "interrupted" and self._frame is not None:
            raise self._frame.pause(_questions(self._frame, result))
        return result.state  # type: ignore[no-any-return]

    def __await__(self) -> Generator[Any, None, T]:
        """Await the task's return value (in an `async def` entrypoint or task)."""
        if self._handle is None:
            return self._value  # type: ignore[no-any-return]
        import asyncio  # noqa: PLC0415 - asyncio pulls in ssl (4 MiB): only async paths import it

        result = yield from asyncio.wrap_future(self._handle.future).__await__()
        return self._read(result)


def _questions(frame: NestFrame, first: RunResult[Any]) -> tuple[Any, ...]:
    """Every question of the calls the task made, once all its calls have settled.

    Questions asked in parallel calls are all pending at once, so a person
    answers them together.
    """
    questions = list(first.interrupts)
    for handle in list(frame.started):
        try:
            other = handle.result()
        except Exception:  # noqa: BLE001, S112 - a failed call reports itself where it is read
            continue
        if other.status == "interrupted":
            questions.extend(other.interrupts)
    return tuple(questions)


class TaskFunction(Generic[T]):
    """A function made a task by `@task`: calling it returns a `TaskFuture`."""

    def __init__(
        self,
        fn: Callable[..., T],
        *,
        name: str | None = None,
        retry: RetryPolicy | None = None,
        timeout: float | None = None,
        cache: CachePolicy | None = None,
    ) -> None:
        """Make `fn` a task (see `task`).

        Raises:
            ConfigError: `fn` is not a function, or is a generator function.
            GraphValidationError: `retry`, `timeout` or `cache` is not one a vertex takes.
        """
        if not callable(fn):
            msg = f"@task decorates a function, got {type(fn).__name__}"
            raise ConfigError(msg)
        if inspect.isgeneratorfunction(fn) or inspect.isasyncgenfunction(fn):
            msg = f"@task cannot make a task of the generator function {_name_of(fn)!r}: return a value"
            raise ConfigError(msg)
        self.fn = fn
        self.name = str(name or _name_of(fn) or "task")
        self._graph: CompiledGraph[Any] | None = None
        self._reaping: Reaping | None = None
        self.options: dict[str, Any] = {"retry": retry, "timeout": timeout, "cache": cache}
        self._graph_of()  # checks the options now, not at the first call
        functools.update_wrapper(self, fn)

    def __repr__(self) -> str:
        return f"task({self.name!r})"

    def __call__(self, *args: Any, **kwargs: Any) -> TaskFuture[T]:
        """Start the call; inside an entrypoint it runs on an actor and is recorded.

        Outside any run the function is simply called, at once.
        """
        frame = current_nest.get()
        if frame is None:
            value = self.fn(*args, **kwargs)
            if inspect.isawaitable(value):
                msg = f"task {self.name!r} is async: call it inside an entrypoint, or await its function"
                raise ConfigError(msg)
            return TaskFuture(value=value)
        handle = self.graph().start({"args": list(args), "kwargs": dict(kwargs)})
        return TaskFuture(handle, frame)

    def as_vertex(self, graph: Any, name: str, options: dict[str, Any]) -> tuple[Any, dict[str, Any]]:  # noqa: ARG002 - the hook's interface
        """What `add_vertex(name, a_task)` adds: the function, with the task's options as defaults."""
        merged = {k: v for k, v in self.options.items() if v is not None}
        merged.update(options)
        return self.fn, merged

    __actorgraph_vertex__ = as_vertex  # what `Graph.add_vertex` looks for

    def __actorgraph_invocable__(self) -> CompiledGraph[Any]:
        """The graph a vertex calling this task runs (see `_api/invoked.py`)."""
        return self.graph()

    def graph(self) -> CompiledGraph[Any]:
        """The graph the calls run on (compiled once; closed with the task or the last entrypoint)."""
        with _graphs_lock:
            compiled = self._graph
            if compiled is None or compiled.closed:
                compiled = self._graph = self._compiled()
                if self._reaping is not None:
                    self._reaping.cancel()  # its graph was closed: nothing left to close
                # a task made inside a function goes with it (on the reaper thread, never the collecting one)
                self._reaping = when_collected(self, compiled.close)
                _live.add(self)
            return compiled

    def drop_graph(self) -> CompiledGraph[Any] | None:
        """Forget the task's graph and return it (to be closed)."""
        graph, self._graph = self._graph, None
        reaping, self._reaping = self._reaping, None
        if reaping is not None:
            reaping.cancel()  # the caller closes the graph
        return graph

    def _graph_of(self) -> Graph[Any]:
        """START -> the task's vertex -> END (`add_vertex` refuses options it cannot use)."""
        g: Graph[Any] = Graph(name=self.name, returns="state")
        g.inline = True  # its get_stream_writer() streams as the entrypoint's, as LangGraph's tasks do
        g.face = CALL  # a call is seen as one task of the run that made it: `{name: result}`
        options = {k: v for k, v in self.options.items() if v is not None}
        g.add_vertex(self.name, _call_of(self.fn), **options)
        g.add_edge(START, self.name)
        g.add_edge(self.name, END)
        return g

    def _compiled(self) -> CompiledGraph[Any]:
        return quiet_compile(self._graph_of())


def _name_of(fn: Any) -> str | None:
    """A function's name, a `functools.partial`'s included (its function's)."""
    name = getattr(fn, "__name__", None) or getattr(getattr(fn, "func", None), "__name__", None)
    return str(name) if name else None


def _call_of(fn: Callable[..., Any]) -> Callable[[dict[str, Any]], Any]:
    """The vertex that calls `fn` with a call's arguments: its state is `{"value": result}`."""
    if inspect.iscoroutinefunction(fn):

        async def call_async(state: dict[str, Any]) -> dict[str, Any]:
            return {"value": await fn(*state["args"], **state["kwargs"])}

        return call_async

    def call(state: dict[str, Any]) -> dict[str, Any]:
        return {"value": fn(*state["args"], **state["kwargs"])}

    return call


def task(
    fn: Callable[..., T] | None = None,
    *,
    name: str | None = None,
    retry: RetryPolicy | None = None,
    timeout: float | None = None,
    cache: CachePolicy | None = None,
) -> Any:
    """Make a function a task: `@task` or `@task(retry=RetryPolicy(), timeout=30)`.

    Inside an `@entrypoint` (or any vertex), calling the task returns a
    `TaskFuture` at once and runs the call on an actor, in parallel with other
    calls; its result is checkpointed as soon as it finishes, and a resumed
    entrypoint gets it back without running the call again.

    Args:
        fn: the function (its arguments and return value must be serializable).
        name: the task's name (default: the function's).
        retry: its retry policy, as for a vertex.
        timeout: seconds a call may run, as for a vertex.
        cache: a `CachePolicy`: a call with equal arguments reuses an earlier result
            (with the entrypoint's `cache=`).

    Returns:
        A `TaskFunction` (or a decorator making one).
    """
    if fn is None:
        return lambda f: TaskFunction(f, name=name, retry=retry, timeout=timeout, cache=cache)
    return TaskFunction(fn, name=name, retry=retry, timeout=timeout, cache=cache)
