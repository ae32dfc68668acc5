"""What a vertex sees of its run: `Context`, and `interrupt()` to pause for a person."""

from __future__ import annotations

from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Generic, TypeAlias, TypeVar

from actorgraph._model.errors import ActorGraphError, ConfigError
from actorgraph._model.records import Interrupt

__all__ = [
    "Context",
    "InterruptSignal",
    "MessagePiece",
    "StreamWriter",
    "chunk_of",
    "get_stream_writer",
    "interrupt",
    "interrupt_id",
    "is_interrupt_id",
]

C = TypeVar("C")


class Context(Generic[C]):
    """The optional second argument of a vertex function: `fn(state, ctx)`.

    Attributes:
        step: the superstep this task belongs to.
        attempt: 1 for the first attempt, 2 for the first retry, ...
        vertex: the vertex's name.
        task_id: the task's id (the vertex name, plus `:index` for a `Send` task).
        thread_id: the run's thread, or None.
        context: the `context=` object given to `invoke` (configuration, clients).
        value: the vertex's private Pregel value: kept across supersteps and
            checkpointed; assign to change it.
        store: the `compile(store=...)` object (a memory store shared by every
            thread of the graph, its subgraphs included), or None.
        remaining_steps: how many more supersteps the run may start after this
            one before its recursion limit (0 in the last), as LangGraph's
            `RemainingSteps`; None outside a run.
        streams_messages: someone listens to the message pieces vertices stream
            (`stream(mode="messages")`): a vertex calling a model streams it then
            (`stream_message`), and calls it plainly otherwise, as LangGraph's agents do.
    """

    __slots__ = (
        "_emit",
        "_message_id",
        "attempt",
        "context",
        "remaining_steps",
        "step",
        "store",
        "streams_messages",
        "task_id",
        "thread_id",
        "value",
        "vertex",
    )

    def __init__(  # noqa: PLR0913 - a record of the task's surroundings
        self,
        *,
        step: int,
        attempt: int,
        vertex: str,
        task_id: str,
        thread_id: str | None,
        context: C,
        value: Any,
        emit: Callable[[Any], None] | None,
        store: Any = None,
        remaining_steps: int | None = None,
        streams_messages: bool = False,
    ) -> None:
        self.step = step
        self.attempt = attempt
        self.vertex = vertex
        self.task_id = task_id
        self.thread_id = thread_id
        self.context = context
        self.value = value
        self._emit = emit
        self._message_id: str | None = None
        self.store = store
        self.remaining_steps = remaining_steps
        self.streams_messages = streams_messages

    def rebind(self, *, attempt: int, emit: Callable[[Any], None] | None, context: Any, store: Any) -> None:
        """Carry on as another attempt of the task (a live vertex taken over by its resumed run)."""
        self.attempt = attempt
        self._emit = emit
        self.context = context
        self.store = store

    def emit(self, payload: Any) -> None:
        """Send a custom event to the run's listeners and `stream(mode="custom")`."""
        if self._emit is not None:
            self._emit(payload)

    def stream_message(self, piece: Any, *, id: str | None = None) -> None:  # noqa: A002 - a message's id
        """Send a piece of a message to `stream(mode="messages")` as the vertex makes it (LLM tokens).

        Args:
            piece: a string (a piece of an assistant message's text), a message dict
                (`{"role": ..., "content": ...}`), or a langchain-core message chunk,
                which is passed on as it is.
            id: the id of the message the piece belongs to; pieces of one message
                share it. By default every piece of this task attempt belongs to one
                message, whose id is made on the first piece.
        """
        if self._emit is None:
            return
        if id is None:
            if self._message_id is None:
                import uuid  # noqa: PLC0415 - only vertices that stream need it

                self._message_id = f"msg-{uuid.uuid4().hex}"
            id = self._message_id  # noqa: A001
        self._emit(MessagePiece(chunk_of(piece, id)))

    def __repr__(self) -> str:
        return f"Context(vertex={self.vertex!r}, step={self.step}, attempt={self.attempt})"


@dataclass(frozen=True, slots=True)
class MessagePiece:
    """What `ctx.stream_message` hands the run's emitter (it becomes a `MessageChunk` event)."""

    chunk: Any


def chunk_of(piece: Any, id: str) -> Any:  # noqa: A002 - a message's id
    """The chunk `stream(mode="messages")` yields for `piece`: a message dict with `id`, or `piece` itself.

    Raises:
        ActorGraphError: a piece that is neither a string, a message dict nor a message object.
    """
    if isinstance(piece, str):
        return {"role": "assistant", "content": piece, "id": id}
    if isinstance(piece, dict):
        if "id" in piece and piece["id"] is not None:
            return piece
        return {"role": "assistant", **piece, "id": id}
    if hasattr(piece, "content"):  # a langchain-core message chunk: as the model gave it
        return piece
    msg = (
        f"ctx.stream_message() takes a string, a message dict or a message chunk, got "
        f"{type(piece).__name__}; pass the text of the piece"
    )
    raise ActorGraphError(msg)


class InterruptSignal(BaseException):
    """Ends a task that called `interrupt()` before it was answered.

    A BaseException so that a vertex's `except Exception:` cannot swallow it;
    the task runner turns it into an `interrupt` outcome and it never leaves the task.
    """

    def __init__(self, pending: Interrupt) -> None:
        super().__init__(pending.value)
        self.pending = pending


class NestedPause(BaseException):
    """Ends a task whose function invoked a graph (or a `@task`) that paused for a person.

    Raised where the invoked run's result is read; the task ends `interrupt`
    with every question of the runs it invoked (`VertexResult.nested`), and its
    answers reach those runs when the task runs again.
    """

    def __init__(self, interrupts: tuple[Interrupt, ...]) -> None:
        super().__init__(f"{len(interrupts)} question(s) in invoked graphs")
        self.interrupts = interrupts


class TaskScope:
    """Per-task bookkeeping for `interrupt()` (one per attempt)."""

    __slots__ = (
        "count",
        "line",
        "live",
        "pending",
        "resumes",
        "step",
        "task_id",
        "thread_id",
        "vertex",
        "writer",
    )

    def __init__(  # noqa: PLR0913 - where the task is, and what it was answered
        self,
        *,
        thread_id: str | None,
        line: str | None,
        step: int,
        task_id: str,
        vertex: str,
        resumes: tuple[Any, ...],
        live: Callable[[Interrupt, TaskScope], Any] | None = None,
        writer: Callable[[Any], None] | None = None,
    ) -> None:
        self.thread_id = thread_id
        self.line = line
        self.step = step
        self.task_id = task_id
        self.vertex = vertex
        self.resumes = resumes
        self.count = 0
        self.pending: Interrupt | None = None
        self.live = live  # waits in the actor for the answer (`_engine/live.py`), or None
        self.writer = writer  # the task's `ctx.emit`, for `get_stream_writer()`


current_scope: ContextVar[TaskScope | None] = ContextVar("actorgraph_task", default=None)

current_nest: ContextVar[Any] = ContextVar("actorgraph_nest", default=None)
"""The running task attempt's `NestFrame` (`_engine/nesting.py`), on the thread backend; else None."""


StreamWriter: TypeAlias = Callable[[Any], None]
"""What `get_stream_writer()` returns and an `@entrypoint` function's `writer` is: `writer(payload)`."""


def get_stream_writer() -> StreamWriter:
    """The running task's writer of custom stream data, as LangGraph's: `get_stream_writer()(payload)`.

    Works wherever vertex code runs: in a vertex function (as `ctx.emit`), in a
    tool that a `ToolNode` runs, in an `@entrypoint` function and in a `@task`
    call. What it writes reaches `stream(mode="custom")` and the listeners as
    `Custom` events, as the task that runs the tool or the task call; outside a
    run it writes nowhere.
    """
    scope = current_scope.get()
    writer = scope.writer if scope is not None else None
    return writer if writer is not None else _written_nowhere


def _written_nowhere(payload: Any) -> None:
    """The writer outside a run: nobody streams it."""


_ID_PREFIX = "int-"
_ID_DIGITS = 16


def interrupt_id(thread_id: str | None, line: str | None, step: int, task_id: str, index: int) -> str:
    """The id of a task's `index`-th question: one question of one run, the same in every process.

    `line` names the line of the thread's history the run continues (the
    checkpoint that began it: a new input, a replay or a fork begins a new one),
    so the next run of a thread asks its questions under new ids, while a
    pending question keeps its id across processes and restarts. Ids read
    `int-` and 16 hex digits, so an answer keyed by an id is never mistaken for
    an answer value (see `is_interrupt_id`).
    """
    import hashlib  # noqa: PLC0415 - it loads OpenSSL (3 MiB): on first use, not at `import actorgraph`

    raw = f"{thread_id}|{line}|{step}|{task_id}|{index}".encode()
    return _ID_PREFIX + hashlib.blake2b(raw, digest_size=_ID_DIGITS // 2).hexdigest()


def is_interrupt_id(value: object) -> bool:
    """True when `value` has the form of an interrupt id (whether or not it is pending)."""
    if not isinstance(value, str) or len(value) != len(_ID_PREFIX) + _ID_DIGITS:
        return False
    digits = value[len(_ID_PREFIX) :]
    return value.startswith(_ID_PREFIX) and all(c in "0123456789abcdef" for c in digits)


def interrupt(value: Any) -> Any:
    """Pause the run until a person answers; return their answer.

    Call it inside a vertex. The first time, the task ends as `interrupt` and the
    run pauses (`invoke` returns `status == "interrupted"`). When the run is
    resumed with `Command(resume=answer)`, this call returns `answer`: on the live
    path (`compile(live_interrupts=...)`: answered in time, in the process that
    runs the vertex) the waiting vertex goes on from this line; else the task
    runs again from its recorded inputs and this call returns `answer` the
    second time through. A task that calls `interrupt` several times gets its
    answers in order.

    Args:
        value: what to show the person (any serializable value).

    Returns:
        The resume value.

    Raises:
        ActorGraphError: when called outside a running vertex.
    """
    scope = current_scope.get()
    if scope is None:
        msg = "interrupt() was called outside a vertex; call it inside a vertex function"
        raise ActorGraphError(msg)
    index = scope.count
    scope.count += 1
    if index < len(scope.resumes):
        return scope.resumes[index]
    if scope.line is None:
        msg = (
            f"interrupt() in vertex {scope.vertex!r}: this run keeps no checkpoints, so its question "
            "could never be answered; compile the graph with a checkpointer (MemoryCheckpointer() "
            "within one process) and pass thread_id=... to invoke"
        )
        raise ConfigError(msg)
    pending = Interrupt(
        interrupt_id(scope.thread_id, scope.line, scope.step, scope.task_id, index),
        scope.vertex,
        value,
        scope.task_id,
    )
    if scope.live is not None:  # wait here for the answer; its own InterruptSignal if none comes
        return scope.live(pending, scope)
    scope.pending = pending
    raise InterruptSignal(pending)
