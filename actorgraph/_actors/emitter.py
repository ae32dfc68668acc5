"""A run's events: logged and handed to the listeners that want them, built only when wanted.

A superstep takes tens of microseconds, so an event nobody listens to, and
that would not be logged, is never built: `wants` says whether anyone takes
an event kind, and routine events skip even the log-level check unless debug
logging was on when the run started.

The two events of every superstep, a superstep committed and a task finished,
are not built for a listener that takes what they carry directly: a stream of
one mode (`StreamSink.direct`) takes a committed state or a finished task's
result as it is, and the record is built only when another listener or the
log wants it (`committed`, `finished`).
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Sequence
from typing import Any

from actorgraph._actors.log import log, stdlib_logger
from actorgraph._engine.context import MessagePiece
from actorgraph._model.errors import VertexError
from actorgraph._model.records import NS, ErrorInfo, Task, VertexResult
from actorgraph._model.spec import Face
from actorgraph.events import (
    CheckpointSaved,
    Custom,
    Event,
    Interrupted,
    JoinWaiting,
    Listener,
    MessageChunk,
    RetryScheduled,
    RunFinished,
    RunStarted,
    SuperstepCommitted,
    SuperstepStarted,
    TaskFinished,
    TaskScheduled,
    TaskStarted,
)

__all__ = ["Emitter"]

_MESSAGE = 500  # characters of an error's message a log record carries (the store keeps it whole)


class Emitter:
    """The listeners of one run, and its logger. Safe to call from any thread."""

    def __init__(
        self, run_id: str, thread_id: str | None, listeners: Sequence[Listener], face: Face | None = None
    ) -> None:
        self.run_id = run_id
        self.thread_id = thread_id
        self._listeners = [(fn, getattr(fn, "kinds", None)) for fn in listeners]
        self._everything = any(kinds is None for _, kinds in self._listeners)
        self._kinds: frozenset[type[Event]] = frozenset().union(*(k for _, k in self._listeners if k))
        self._debug = stdlib_logger.isEnabledFor(logging.DEBUG)
        self._takers: dict[type[Event], list[Listener]] = {}  # by event kind: the listeners that take it
        self.schedules = self.wants(TaskScheduled)  # asked on every dispatch: worked out once
        if face is not None:
            _introduce(listeners, face)
        # every superstep's two events: who takes what they carry directly, and whether the record is built
        self._committed_to = [fn.direct[SuperstepCommitted] for fn in _direct(listeners, SuperstepCommitted)]
        self._finished_to = [fn.direct[TaskFinished] for fn in _direct(listeners, TaskFinished)]
        self._committed_record = self._debug or bool(self._taking(SuperstepCommitted))
        self._finished_record = self._debug or bool(self._taking(TaskFinished))

    def _taking(self, kind: type[Event]) -> list[Listener]:
        """The listeners that take events of `kind` (worked out once per kind and run)."""
        takers = self._takers.get(kind)
        if takers is None:
            takers = [
                fn
                for fn, kinds in self._listeners
                if (kinds is None or kind in kinds) and kind not in getattr(fn, "direct", ())
            ]
            self._takers[kind] = takers
        return takers

    def wants(self, kind: type[Event]) -> bool:
        """Whether an event of `kind` would be used (so frequent events are built only then)."""
        return self._everything or self._debug or kind in self._kinds

    def emit(self, event: Event, *, routine: bool = False) -> None:
        """Log `event` and hand it to the listeners that want it.

        `routine` events are logged at debug level only: no level lookup unless
        debug logging was on when the run started.
        """
        if self._debug or not routine:
            level, name = log_entry(event)
            if stdlib_logger.isEnabledFor(level):
                stdlib_logger.log(level, name, extra=log_fields(event), stacklevel=2)
        for listener in self._taking(type(event)):
            try:
                listener(event)
            except BaseException:  # noqa: BLE001 - a broken listener must not break the run
                # not even with SystemExit or KeyboardInterrupt: on a coordinator's thread
                # nobody would catch them, and the run (and its stream) would never end
                who = repr(listener)
                log("warning", "listener failed", run_id=self.run_id, listener=who, exc_info=True)

    def committed(self, step: int, state: Any, checkpoint_id: str | None) -> None:
        """A superstep committed: its state to who takes it as it is, a `SuperstepCommitted` to the rest."""
        for take in self._committed_to:
            try:
                take(state)
            except BaseException:  # noqa: BLE001 - as in `emit`: a broken listener must not break the run
                log("warning", "listener failed", run_id=self.run_id, listener=repr(take), exc_info=True)
        if self._committed_record:
            committed = SuperstepCommitted(self.run_id, self.thread_id, step, state, checkpoint_id)
            self.emit(committed, routine=True)

    def finished(self, step: int, result: VertexResult) -> None:
        """A task ended `ok` for good: its result to who takes it as it is, a `TaskFinished` to the rest."""
        for take in self._finished_to:
            try:
                take(result)
            except BaseException:  # noqa: BLE001 - as in `emit`: a broken listener must not break the run
                log("warning", "listener failed", run_id=self.run_id, listener=repr(take), exc_info=True)
        if self._finished_record:
            finished = TaskFinished(self.run_id, self.thread_id, step, result, cached=result.cached)
            self.emit(finished, routine=True)

    def task_hooks(self) -> dict[str, Any]:
        """What the run's tasks speak through (`TaskEnv`): none unless a listener hears what vertices say."""
        if not (self.wants(TaskStarted) or self.wants(Custom) or self.wants(MessageChunk)):
            return {}
        return {"listen": self.emit, "emit": self.custom, "messages": self.wants(MessageChunk)}

    def nested(self, namespace: str, *, inline: bool = False) -> tuple[Listener, ...]:
        """The listeners of this run, for a subgraph's run: its events carry `namespace`.

        An `inline` run's (`GraphSpec.inline`) custom events carry this run's namespace instead.
        """
        return tuple(_Tagged(getattr(fn, "listener", fn), namespace, inline) for fn, _ in self._listeners)

    def custom(self, task: Task, payload: object) -> None:
        """What `ctx.emit(payload)` (and `ctx.stream_message`) does in a vertex of this run."""
        if type(payload) is MessagePiece:
            chunk = payload.chunk
            self.emit(MessageChunk(self.run_id, self.thread_id, task.step, task.id, task.vertex, chunk))
            return
        self.emit(Custom(self.run_id, self.thread_id, task.step, task.id, task.vertex, payload))


def _introduce(listeners: Sequence[Listener], face: Face) -> None:
    """Tell the listeners that show states as callers see them (streams) that this run's graph has `face`.

    A listener says it wants to know with a `meet_face(namespace, face)` method;
    a subgraph's or nested run's listeners are the top run's, tagged with its namespace.
    """
    for fn in listeners:
        meet = getattr(getattr(fn, "listener", fn), "meet_face", None)
        if meet is not None:
            meet(getattr(fn, "namespace", ""), face)


def _direct(listeners: Sequence[Listener], kind: type[Event]) -> list[Any]:
    """The listeners that take what events of `kind` carry directly (a `direct` mapping naming `kind`)."""
    return [fn for fn in listeners if kind in getattr(fn, "direct", ())]


class _Tagged:
    """A listener of a parent run, receiving a subgraph run's events tagged with its namespace."""

    __slots__ = ("inline", "kinds", "listener", "namespace")

    def __init__(self, listener: Listener, namespace: str, inline: bool = False) -> None:
        self.listener = listener
        self.namespace = namespace
        self.inline = inline  # custom events are the parent's (`Emitter.nested`)
        self.kinds = getattr(listener, "kinds", None)

    def __call__(self, event: Event) -> None:
        inline = self.inline and type(event) is Custom
        namespace = self.namespace.rpartition(NS)[0] if inline else self.namespace
        self.listener(dataclasses.replace(event, namespace=namespace))

    def __repr__(self) -> str:
        return f"{self.listener!r} (in {self.namespace})"


_ROUTINE: dict[type[Event], tuple[int, str]] = {
    RunStarted: (logging.DEBUG, "run started"),
    SuperstepStarted: (logging.DEBUG, "superstep started"),
    TaskScheduled: (logging.DEBUG, "task scheduled"),
    TaskStarted: (logging.DEBUG, "task started"),
    RetryScheduled: (logging.INFO, "retry scheduled"),
    SuperstepCommitted: (logging.DEBUG, "superstep committed"),
    CheckpointSaved: (logging.DEBUG, "checkpoint saved"),
    Interrupted: (logging.INFO, "interrupted"),
    JoinWaiting: (logging.WARNING, "join never fired"),
    Custom: (logging.DEBUG, "custom"),
    MessageChunk: (logging.DEBUG, "message chunk"),
}


def log_entry(event: Event) -> tuple[int, str]:
    """The stdlib level and the name an event is logged with (the one table of both).

    Cheap, so the caller can decide whether to build the event's fields.
    """
    if isinstance(event, TaskFinished):
        match event.result.status:
            case "error":
                return (logging.ERROR if event.final else logging.WARNING), "task failed"
            case "interrupt":
                return logging.INFO, "task finished"
        return logging.DEBUG, "task finished"
    if isinstance(event, RunFinished):
        return (logging.ERROR, "run failed") if event.error is not None else (logging.DEBUG, "run finished")
    return _ROUTINE.get(type(event), (logging.DEBUG, type(event).__name__))


def _run_error(error: ErrorInfo) -> dict[str, Any]:
    """The fields of a failed run's record: the error, and the vertex that raised it when one did."""
    failed = error.exception
    if isinstance(failed, VertexError):
        message = failed.error_message
        return {"vertex": failed.vertex, "error": failed.error_type, "error_message": message[:_MESSAGE]}
    return {"error": error.type, "error_message": error.message[:_MESSAGE]}


def log_fields(event: Event) -> dict[str, Any]:
    """The structured fields of an event's log record."""
    fields: dict[str, Any] = {"run_id": event.run_id, "thread_id": event.thread_id, "step": event.step}
    fields.update({"namespace": event.namespace} if event.namespace else {})
    match event:
        case TaskFinished(result=r):
            fields.update(vertex=r.vertex, task_id=r.task_id, attempt=r.attempts, status=r.status)
            if r.status == "error":
                fields["error"] = r.error.type if r.error else None
                fields["error_message"] = r.error.message[:_MESSAGE] if r.error else None
        case TaskStarted(task_id=task_id, vertex=vertex, attempt=attempt):
            fields.update(task_id=task_id, vertex=vertex, attempt=attempt)
        case RetryScheduled(task_id=task_id, vertex=vertex, attempt=attempt, delay=delay, error=error):
            fields.update(task_id=task_id, vertex=vertex, attempt=attempt, delay=delay, error=error.type)
        case JoinWaiting(join=join, target=target, missing=missing):
            fields.update(join=join, target=target, missing=list(missing))
        case Interrupted(interrupts=interrupts):
            fields["interrupts"] = [i.id for i in interrupts]
        case RunFinished(status=status, error=error):
            fields["status"] = status
            fields.update(_run_error(error) if error is not None else {})
    named = _NAMED.get(type(event))
    if named:
        fields.update({name: getattr(event, name) for name in named})
    return fields


# the events whose log record carries some of their attributes as they are
_NAMED: dict[type[Event], tuple[str, ...]] = {
    Custom: ("vertex", "task_id"),
    MessageChunk: ("vertex", "task_id"),
    TaskScheduled: ("vertex", "task_id"),
    CheckpointSaved: ("checkpoint_id", "parent_id"),
}
