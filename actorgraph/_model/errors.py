"""The error tree: every error actorgraph raises derives from `ActorGraphError`.

Each docstring says who raises the error and when; each message says what was
wrong and what to do about it.
"""

from __future__ import annotations

import time
import traceback
from collections.abc import Sequence
from typing import Any

from actorgraph._model.conflicts import listed, reducer_advice

__all__ = [
    "ActorGraphError",
    "AlreadyAnsweredError",
    "BackendError",
    "CheckpointError",
    "ConfigError",
    "ConfigFileError",
    "GraphValidationError",
    "InvalidUpdateError",
    "MergeConflictError",
    "MissingDependencyError",
    "RecordedError",
    "RecursionLimitError",
    "ResumeError",
    "RoutingError",
    "RunCancelledError",
    "RunTimeoutError",
    "SerializationError",
    "StoreError",
    "ThreadNotFoundError",
    "VertexActorDiedError",
    "VertexError",
    "VertexTimeoutError",
]


class ActorGraphError(Exception):
    """Root of every error actorgraph raises; catch it to catch them all."""


class ConfigError(ActorGraphError, ValueError, TypeError):
    """Raised when an option or an argument is invalid, where it is given.

    For example a `RetryPolicy` with a negative interval, a reducer that is not
    callable, an encryption key of the wrong size, a serializer allowlist entry
    that is not a class or a module, `history(limit=-1)`. It is also a
    `ValueError` and a `TypeError`, so code written against the builtins keeps working.
    """


class BackendError(ActorGraphError):
    """A backend cannot run the graph: its cluster does not answer, or no node has a vertex's resources."""


class MissingDependencyError(ActorGraphError, ImportError):
    """Raised when a feature needs an optional package that is not installed; the message says which extra."""


class GraphValidationError(ActorGraphError):
    """Raised by `Graph` methods and `Graph.compile()` when the graph is malformed.

    The message names the offending vertex or edge and says how to fix it.
    """


class ConfigFileError(GraphValidationError):
    """A graph file (YAML) or an expression in it is wrong: where (file, line, column), and what was expected.

    Attributes:
        file: the file's path, or `"<string>"`.
        line: 1-based line, or None when the problem is the whole file.
        column: 1-based column, or None.
        problem: what is wrong and what to do, without the location.
    """

    def __init__(
        self, problem: str, *, file: str = "<string>", line: int | None = None, column: int | None = None
    ) -> None:
        self.file = file
        self.line = line
        self.column = column
        self.problem = problem
        where = file if line is None else f"{file}:{line}" if column is None else f"{file}:{line}:{column}"
        super().__init__(f"{where}: {problem}")

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickle with its location."""
        return (_config_file_error, (self.problem, self.file, self.line, self.column), self.__dict__)


class MergeConflictError(ActorGraphError):
    """Raised when branches change one key to different values and the merge cannot reconcile them.

    The default three-way merge raises it; a reducer for the key avoids it.

    Attributes:
        key: the state key both branches changed (`"<state>"` for non-mapping states).
        vertices: the tasks whose states conflicted (vertex names, plus `:index`
            for `Send` tasks), when the engine knows them.
        step: the superstep of the merge, when the engine knows it.
        branches: indices of the conflicting states in the list given to the merge.
    """

    def __init__(
        self,
        key: str,
        *,
        vertices: Sequence[str] = (),
        step: int | None = None,
        branches: Sequence[int] = (),
        values: Sequence[object] = (),
    ) -> None:
        self.key = key
        self.vertices = tuple(vertices)
        self.step = step
        self.branches = tuple(branches)
        self.values = tuple(values)
        super().__init__(self._describe())

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickle with its attributes, so the copy describes itself the same way."""
        keywords = {
            "vertices": self.vertices,
            "step": self.step,
            "branches": self.branches,
            "values": self.values,
        }
        return (_merge_conflict, (self.key, keywords), self.__dict__)

    def _describe(self) -> str:
        who = f" by vertices {', '.join(self.vertices)}" if self.vertices else ""
        when = f" in superstep {self.step}" if self.step is not None else ""
        return (
            f"merge conflict on key {self.key!r}{who}{when}: the branches changed it to "
            f"different values{listed(self.values)}. {reducer_advice(self.key, self.values)}"
        )

    def located(self, vertices: Sequence[str], step: int) -> MergeConflictError:
        """Return a copy of this error that names the vertices and the superstep."""
        return MergeConflictError(
            self.key, vertices=vertices, step=step, branches=self.branches, values=self.values
        )

    def regrouped(self, branches: Sequence[int]) -> MergeConflictError:
        """Return a copy of this error whose `branches` index another list of states."""
        return MergeConflictError(
            self.key, vertices=self.vertices, step=self.step, branches=branches, values=self.values
        )


class InvalidUpdateError(ActorGraphError):
    """Recorded as a task's error when a vertex returns something that is not a usable state.

    For example `Command(update=...)` on a state that has no keys. Never retried.
    """


class ResumeError(ActorGraphError, ValueError):
    """Raised by `invoke(Command(resume=...))` when the answer does not fit the thread's pending interrupts.

    An answer keyed by interrupt id names an interrupt that is not pending (it
    was answered already, or belongs to another thread), a bare answer is given
    while several interrupts wait, or the thread waits for no answer at all.
    Nothing is applied: the thread stays as it was.
    """


class AlreadyAnsweredError(ResumeError):
    """Raised by `invoke(Command(resume=...))` when another answer to the question was claimed first.

    An answer is claimed in the checkpointer before any vertex code runs with
    it, so of two people (or processes) answering one question exactly one
    wins; the other gets this error and nothing ran with their answer.

    Attributes:
        thread_id: the thread.
        interrupt_id: the question.
        vertex: the vertex that asked it.
        answered_by: who answered first.
        answered_at: when (wall-clock seconds).
    """

    def __init__(
        self, thread_id: str, interrupt_id: str, vertex: str, answered_by: str, answered_at: float
    ) -> None:
        self.thread_id = thread_id
        self.interrupt_id = interrupt_id
        self.vertex = vertex
        self.answered_by = answered_by
        self.answered_at = answered_at
        when = time.strftime("%Y-%m-%d %H:%M:%S %Z", time.localtime(answered_at))
        super().__init__(
            f"question {interrupt_id} of vertex {vertex!r} in thread {thread_id!r} was already "
            f"answered by {answered_by} at {when}, so your answer was not applied and nothing "
            f"ran with it; see the thread's state (get_state) for what it asks now."
        )

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickle with every attribute."""
        args = (self.thread_id, self.interrupt_id, self.vertex, self.answered_by, self.answered_at)
        return (AlreadyAnsweredError, args)


class RoutingError(ActorGraphError):
    """Raised when a router returns an unknown target or a goto leaves the declared destinations.

    Also recorded as the error of the tasks of a stateful subgraph vertex
    (`compile(checkpointer=True)`) given more than one task in one superstep.
    Routing errors are programming errors and are never retried.
    """


class RecursionLimitError(ActorGraphError):
    """Raised by `invoke` when a run would start more supersteps than its `recursion_limit` allows.

    The default limit is 10,000 supersteps per invoke.
    """


class RunCancelledError(ActorGraphError):
    """Raised by `RunHandle.result()` after `RunHandle.cancel()` stopped the run."""


class RunTimeoutError(ActorGraphError):
    """Raised by `invoke(..., timeout=...)` and `RunHandle.result(timeout)` when a run is late.

    `invoke` also cancels the run; `RunHandle.result` leaves it running.
    """


class VertexError(ActorGraphError):
    """Raised by `invoke` when a task failed and its retries are spent.

    With a checkpointer the run stays resumable: `invoke(None, thread_id=...)`
    re-runs only the tasks that did not finish. The original exception is `__cause__`
    (a `RecordedError` with its type, message and traceback when it was read back
    from a checkpoint, or raised in another process and could not be pickled).

    Attributes:
        vertex: the failing vertex; inside a subgraph, its path (`research/fetch`).
        task_id: the failing task (the vertex name, plus an index for `Send` tasks).
        step: the superstep the task belonged to (of the subgraph's run, inside one).
        attempts: how many attempts were made.
        error_type: the qualified name of the original exception's type.
        error_message: the original exception's message.
    """

    def __init__(  # noqa: PLR0913 - every attribute a caller needs to act on the failure
        self,
        vertex: str,
        *,
        task_id: str,
        step: int,
        attempts: int,
        error_type: str,
        message: str,
        others: int = 0,
        resumable: bool = True,
    ) -> None:
        self.vertex = vertex
        self.task_id = task_id
        self.step = step
        self.attempts = attempts
        self.error_type = error_type
        self.error_message = message
        self.others = others
        self.resumable = resumable
        more = f" ({others} other task(s) of this superstep failed too)" if others else ""
        tries = "attempt" if attempts == 1 else "attempts"
        advice = (
            "The finished tasks are kept; fix the cause and call invoke(None, thread_id=...) to "
            "re-run only the failed tasks."
            if resumable
            else "This run kept no checkpoint, so it cannot be resumed: compile the graph with a "
            "checkpointer (MemoryCheckpointer() within one process) and pass thread_id=... to make "
            "a failed run resumable."
        )
        super().__init__(
            f"vertex {vertex!r} (task {task_id!r}) failed in superstep {step} after "
            f"{attempts} {tries}: {error_type}: {message}{more}. {advice}"
        )

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickle with every attribute and the cause (a `RecordedError` of it, if it cannot be pickled)."""
        keywords = {
            "task_id": self.task_id,
            "step": self.step,
            "attempts": self.attempts,
            "error_type": self.error_type,
            "message": self.error_message,
            "others": self.others,
            "resumable": self.resumable,
        }
        return (
            _vertex_error,
            (self.vertex, keywords),
            {**self.__dict__, "__cause__": _portable(self.__cause__)},
        )


class RecordedError(ActorGraphError):
    """Stands in for an exception that was raised in another process and read from a checkpoint.

    An `on_error` handler resumed in a new process receives this instead of the
    original exception (loading a checkpoint never re-creates arbitrary types).

    Attributes:
        type: the original exception's qualified type name, e.g. `"builtins.ConnectionError"`.
        message: the original `str(exception)`.
        traceback: the original formatted traceback.
    """

    def __init__(self, type_name: str, message: str, traceback: str = "") -> None:
        self.type = type_name
        self.message = message
        self.traceback = traceback
        super().__init__(message)

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickle with the type name, message and traceback."""
        return (RecordedError, (self.type, self.message, self.traceback), self.__dict__)


def _config_file_error(problem: str, file: str, line: int | None, column: int | None) -> ConfigFileError:
    return ConfigFileError(problem, file=file, line=line, column=column)


def _merge_conflict(key: str, keywords: dict[str, Any]) -> MergeConflictError:
    return MergeConflictError(key, **keywords)


def _vertex_error(vertex: str, keywords: dict[str, Any]) -> VertexError:
    return VertexError(vertex, **keywords)


def _portable(cause: BaseException | None) -> BaseException | None:
    """`cause`, or a `RecordedError` standing in for it when it cannot be pickled and loaded again."""
    import pickle  # noqa: PLC0415 - only an error that travels needs it: `import actorgraph` stays light

    try:
        pickle.loads(pickle.dumps(cause))  # noqa: S301 - what this very process just pickled
    except Exception:  # noqa: BLE001 - any failure to pickle or load means: send a record of it
        name = f"{type(cause).__module__}.{type(cause).__qualname__}"
        return RecordedError(name, str(cause), "".join(traceback.format_exception(cause)))
    return cause


class VertexTimeoutError(ActorGraphError, TimeoutError):
    """Recorded as a task's error when the task ran longer than its vertex's `timeout=`.

    The stuck actor is abandoned and the task is retried by its policy.
    """


class VertexActorDiedError(ActorGraphError, ConnectionError):
    """Recorded as a task's error when the vertex actor running it died.

    Its thread raised outside the task, or the actor was stopped. Retried by the
    default policy, like any transient failure.
    """


class CheckpointError(ActorGraphError):
    """Raised when a checkpointer cannot read or write its store, or refuses an operation."""


class ThreadNotFoundError(CheckpointError):
    """Raised when a thread (or one of its checkpoints) has no stored checkpoint.

    `invoke(None, thread_id=...)` or `Command(resume=...)` on a thread that was
    never started, `get_state` of an unknown thread, a `checkpoint_id` that is not
    one of the thread's.
    """


class SerializationError(ActorGraphError):
    """Raised when the configured serializer cannot save a state or load a stored checkpoint."""


class StoreError(ActorGraphError):
    """Raised by a memory store (`actorgraph.store`) that cannot read or write its database.

    Also raised when a closed store is used, and when a `MemoryStore` is pickled
    (it lives in one process; `SqliteStore` or `PostgresStore` cross processes).
    """
