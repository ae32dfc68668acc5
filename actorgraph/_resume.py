"""Preparing a run: from a fresh input, from a thread's checkpoint, or from an answer.

- A state as input starts a run (a new thread, or a new run on a finished one,
  whose input is an update to the thread's last state: see `_inputs.py`);
  `Command(goto=..., update=...)` starts one at `goto`.
- `None` continues the thread: failed tasks run again, breakpoints are passed,
  and unanswered interrupts stay pending. With `checkpoint_id`, it replays from
  an older checkpoint instead, forking the thread's history.
- `Command(resume=...)` answers pending interrupts (`Command(update=...)` also
  changes the state first).
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

from actorgraph._answers import answers_for
from actorgraph._errors import ActorGraphError, CheckpointError
from actorgraph._inputs import start_position, updated_state
from actorgraph._lineage import distinct
from actorgraph._recorder import DURABILITY, Durability, Recorder, encode_new_states
from actorgraph._run import Breakpoints, RunSetup
from actorgraph._spec import GraphSpec
from actorgraph._superstep import current_state, replace_state, state_of
from actorgraph._task import TaskEnv
from actorgraph._types import UNSET, Command, Node, Position, RunResult
from actorgraph.checkpoint._load import Loaded, load
from actorgraph.checkpoint._protocol import Checkpointer

__all__ = ["RunOptions", "RunRequest", "ThreadNotFoundError", "prepare", "resolve_breakpoints"]


class ThreadNotFoundError(CheckpointError):
    """Raised when a thread (or one of its checkpoints) has no stored checkpoint."""


@dataclass(frozen=True, slots=True)
class RunOptions:
    """Per-run options that are rarely needed (bundled to keep `invoke` short).

    Attributes:
        interrupt_before: pause before these vertices ("*" for all), this run only.
        interrupt_after: pause after the supersteps these vertices ran in, this run only.
        discard_pending: start a new input on a thread whose last superstep failed
            or is paused, dropping that superstep.
        listeners: callables that receive this run's events.
    """

    interrupt_before: Sequence[str] | str | None = None
    interrupt_after: Sequence[str] | str | None = None
    discard_pending: bool = False
    listeners: Sequence[Callable[[Any], None]] = ()


@dataclass(frozen=True, slots=True)
class RunRequest:
    """Everything `invoke`, `start` and `stream` are given, besides the input."""

    thread_id: str | None = None
    context: Any = None
    recursion_limit: int = 10_000
    checkpoint_id: str | None = None
    durability: str | None = None
    options: RunOptions = field(default_factory=RunOptions)


@dataclass(frozen=True, slots=True)
class GraphSettings:
    """What `compile()` fixed for every run."""

    spec: GraphSpec
    checkpointer: Checkpointer | None
    breakpoints: Breakpoints
    durability: str
    listeners: tuple[Callable[[Any], None], ...] = ()
    context: Any = None


def resolve_breakpoints(
    before: Iterable[str] | str | None, after: Iterable[str] | str | None, spec: GraphSpec
) -> Breakpoints:
    """Breakpoints from user input, checked against the graph's vertices."""

    def names(value: Iterable[str] | str | None, what: str) -> frozenset[str]:
        if value is None:
            return frozenset()
        items = (value,) if isinstance(value, str) else tuple(value)
        for item in items:
            if item != "*" and item not in spec.vertices:
                msg = f"{what} names unknown vertex {item!r} (vertices: {', '.join(spec.vertices)}; or '*')"
                raise ActorGraphError(msg)
        return frozenset(items)

    return Breakpoints(names(before, "interrupt_before"), names(after, "interrupt_after"))


def prepare(
    settings: GraphSettings, input_: Any, request: RunRequest, future: Future[RunResult[Any]]
) -> RunSetup:
    """The setup of a run for `input_`; raises any error in the input at once."""
    run_id = _new_run_id()
    prefix = f"{run_id}/"
    common: dict[str, Any] = {
        "run_id": run_id,
        "thread_id": request.thread_id,
        "recursion_limit": request.recursion_limit,
        "future": future,
        "breakpoints": _breakpoints(settings, request.options),
        "listeners": (*settings.listeners, *request.options.listeners),
    }
    cp = settings.checkpointer
    if cp is None or request.thread_id is None:
        return _unrecorded(settings, input_, request, prefix, common)
    thread = _Thread.open(settings, request, prefix)
    if isinstance(input_, Command) and not input_.goto:
        return thread.answer(input_, common)
    if input_ is None:
        return thread.resume(common)
    return thread.start(input_, common)


_PROCESS = os.urandom(6).hex()
_runs = itertools.count()


def _new_run_id() -> str:
    """A run id, unique across processes: a random tag of this process and a counter."""
    return f"{_PROCESS}{next(_runs):x}"


def _breakpoints(settings: GraphSettings, options: RunOptions) -> Breakpoints:
    breakpoints = settings.breakpoints
    if options.interrupt_before is None and options.interrupt_after is None:
        return breakpoints
    return resolve_breakpoints(
        options.interrupt_before if options.interrupt_before is not None else breakpoints.before,
        options.interrupt_after if options.interrupt_after is not None else breakpoints.after,
        settings.spec,
    )


def _unrecorded(
    settings: GraphSettings, input_: Any, request: RunRequest, prefix: str, common: dict[str, Any]
) -> RunSetup:
    """A run that keeps no checkpoints."""
    if settings.checkpointer is not None:
        msg = "this graph has a checkpointer, so a run needs a thread: pass thread_id=..."
        raise ActorGraphError(msg)
    if request.checkpoint_id is not None:
        msg = "checkpoint_id=... needs a graph compiled with a checkpointer"
        raise ActorGraphError(msg)
    env = TaskEnv(node_prefix=prefix, thread_id=request.thread_id, context=_context(settings, request))
    position = start_position(settings.spec, None, input_, f"{prefix}0:input")
    return RunSetup(position=position, env=env, **common)


def _context(settings: GraphSettings, request: RunRequest) -> Any:
    """The run's `context=`, or the compiled graph's default."""
    return request.context if request.context is not None else settings.context


@dataclass(frozen=True, slots=True)
class _Thread:
    """A thread about to be run: what was loaded, and how to record the run."""

    settings: GraphSettings
    request: RunRequest
    store: Checkpointer
    thread_id: str
    prefix: str
    env: TaskEnv
    loaded: Loaded | None
    head: str | None
    durability: Durability

    @staticmethod
    def open(settings: GraphSettings, request: RunRequest, prefix: str) -> _Thread:
        store = settings.checkpointer
        thread_id = request.thread_id
        assert store is not None  # noqa: S101 - checked by the caller
        assert thread_id is not None  # noqa: S101 - checked by the caller
        env = TaskEnv(
            node_prefix=prefix,
            thread_id=thread_id,
            context=_context(settings, request),
            encode=lambda own, result: encode_new_states(store, thread_id, own, result),
        )
        loaded = load(store, thread_id, request.checkpoint_id)
        head = loaded.row.checkpoint_id if loaded is not None else None
        if request.checkpoint_id is not None:
            if loaded is None:
                msg = f"thread {thread_id!r} has no checkpoint {request.checkpoint_id!r}"
                raise ThreadNotFoundError(msg)
            current = store.get(thread_id)
            head = current.checkpoint_id if current is not None else None
        durability = _durability(request.durability or settings.durability)
        return _Thread(settings, request, store, thread_id, prefix, env, loaded, head, durability)

    @property
    def replaying(self) -> bool:
        return self.request.checkpoint_id is not None

    def recorder(self, source: str, *, known: bool = True) -> Recorder:
        loaded = self.loaded
        return Recorder(
            self.store,
            self.thread_id,
            self.durability,
            head=self.head,
            parent=loaded.row.checkpoint_id if loaded else None,
            stored=loaded.stored if loaded and known else (),
            source=source,
        )

    def _existing(self) -> Loaded:
        if self.loaded is None:
            raise _no_thread(self.thread_id)
        return self.loaded

    def answer(self, command: Command, common: dict[str, Any]) -> RunSetup:
        """Answer pending interrupts (and apply `Command(update=...)`), then continue."""
        loaded = self._existing()
        answers: dict[str, Any] = {}
        passed: frozenset[str] = frozenset()
        if command.resume is not UNSET:
            answers, passed = answers_for(loaded, command.resume)
        elif command.update is None:
            msg = "an empty Command() as input does nothing: give it resume=..., update=... or goto=..."
            raise ActorGraphError(msg)
        position = loaded.position
        if command.update is not None:
            position = _updated(position, command.update, f"{self.prefix}update", self.settings.spec)
        changed = position is not loaded.position
        source = "update" if changed else ("fork" if self.replaying else "loop")
        return RunSetup(
            position=position,
            env=self.env,
            recorder=self.recorder(source),
            pending=_pending_after_update(loaded, position),
            answers=answers,
            passed=passed,
            record_start=changed or self.replaying,  # a fork records from a checkpoint of its own
            **common,
        )

    def resume(self, common: dict[str, Any]) -> RunSetup:
        """Continue the thread (re-run what failed, pass breakpoints), or replay a checkpoint."""
        loaded = self._existing()
        before = frozenset(
            r.task_id for r in loaded.pending.values() if r.interrupt and r.interrupt.kind == "before"
        )
        return RunSetup(
            position=loaded.position,
            env=self.env,
            recorder=self.recorder("fork" if self.replaying else "loop"),
            pending={} if self.replaying else loaded.pending,
            passed=before,
            record_start=self.replaying,  # never write into an old checkpoint: fork from it
            **common,
        )

    def start(self, input_: Any, common: dict[str, Any]) -> RunSetup:
        """A new input on this thread: a new thread, or a new run continuing from its last state."""
        loaded = self.loaded
        if loaded is not None and not self.request.options.discard_pending and not self.replaying:
            _refuse_if_unfinished(loaded, self.thread_id)
        spec = self.settings.spec
        base = state_of(loaded.position, spec.merge) if loaded is not None else None
        return RunSetup(
            position=start_position(spec, base, input_, f"{self.prefix}0:input"),
            env=self.env,
            recorder=self.recorder("fork" if self.replaying else "input", known=False),
            record_start=True,
            **common,
        )


def _durability(value: str) -> Durability:
    if value not in DURABILITY:
        msg = f"durability must be one of {', '.join(DURABILITY)}, got {value!r}"
        raise ActorGraphError(msg)
    return value  # type: ignore[return-value]


def _no_thread(thread_id: str) -> ThreadNotFoundError:
    msg = f"thread {thread_id!r} has no checkpoint to resume; start it with an input state"
    return ThreadNotFoundError(msg)


def _refuse_if_unfinished(loaded: Loaded, thread_id: str) -> None:
    unfinished = [r for r in loaded.pending.values() if r.status != "ok"]
    if not unfinished and not loaded.pauses and loaded.position.done:
        return
    kinds: list[str] = sorted({r.status for r in unfinished}) or (
        ["interrupt"] if loaded.pauses else ["running"]
    )
    how = (
        "answer it with invoke(Command(resume=...), thread_id=...)"
        if "interrupt" in kinds and "error" not in kinds
        else "resume it with invoke(None, thread_id=...)"
    )
    msg = (
        f"thread {thread_id!r} has an unfinished superstep {loaded.position.step + 1} "
        f"({', '.join(kinds)}), so it takes no new input yet; {how}, or pass "
        "options=RunOptions(discard_pending=True) to drop that superstep and apply this input "
        "to the thread's state"
    )
    raise ActorGraphError(msg)


def _updated(position: Position, update: Any, node_id: str, spec: GraphSpec) -> Position:
    """`position` with `Command(update=...)` applied to its state (the vertices about to run see it)."""
    state = updated_state(spec, current_state(position, spec.merge), update, "Command(update=...)")
    live = distinct(m.node for m in position.messages())
    return replace_state(position, Node.child(node_id, state, *live))


def _pending_after_update(loaded: Loaded, position: Position) -> dict[str, Any]:
    """A state update re-runs finished tasks (their inputs changed); others keep their outcome."""
    if position is loaded.position:
        return dict(loaded.pending)
    return {k: r for k, r in loaded.pending.items() if r.status != "ok"}
