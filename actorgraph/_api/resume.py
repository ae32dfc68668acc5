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

import dataclasses
import itertools
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from actorgraph._actors.recorder import Recorder, encode_new_states
from actorgraph._actors.setup import RunSetup
from actorgraph._api.answers import Answering, answers_for, claimed_only
from actorgraph._api.request import GraphSettings, RunRequest
from actorgraph._engine.context import is_interrupt_id
from actorgraph._engine.inputs import input_state, start_position, updated_state
from actorgraph._engine.lineage import distinct
from actorgraph._engine.superstep import current_state, replace_state, state_of
from actorgraph._engine.task import TaskEnv
from actorgraph._model.errors import ActorGraphError, AlreadyAnsweredError, CheckpointError, ConfigError
from actorgraph._model.records import UNSET, Command, Node, Position
from actorgraph._model.spec import GraphSpec
from actorgraph.checkpoint._load import Loaded, answer_aad, load
from actorgraph.checkpoint._protocol import AnswerRow, Checkpointer

__all__ = ["ThreadNotFoundError", "new_run_id", "prepare"]


class ThreadNotFoundError(CheckpointError):
    """Raised when a thread (or one of its checkpoints) has no stored checkpoint."""


def prepare(
    settings: GraphSettings, input_: Any, request: RunRequest, run_id: str, *, fresh: Any = UNSET
) -> RunSetup:
    """The setup of a run for `input_` (reads the thread's checkpoint, on the coordinator's thread).

    Args:
        settings: what `compile()` fixed.
        input_: the input: a state, None (continue the thread) or a `Command`.
        request: the run's options.
        run_id: the run's id.
        fresh: a subgraph's input: the run starts with it when its thread has no
            checkpoint yet, and continues the thread (with `input_`) when it has.

    Raises:
        ActorGraphError: the input does not fit the thread (no thread to resume,
            nothing to answer, a paused thread given a new input, ...).
    """
    start = _Start(request, run_id)
    if settings.checkpointer is None or request.thread_id is None:
        return _unrecorded(settings, fresh if fresh is not UNSET else input_, start)
    thread = _Resumable.open(settings, start)
    if fresh is not UNSET and thread.loaded is None:
        return thread.start(fresh)
    if isinstance(input_, Command) and not input_.goto:
        return thread.answer(input_)
    if input_ is None:
        return thread.resume()
    return thread.start(input_)


_PROCESS = os.urandom(6).hex()
_runs = itertools.count()


def new_run_id() -> str:
    """A run id, unique across processes: a random tag of this process and a counter."""
    return f"{_PROCESS}{next(_runs):x}"


@dataclass(frozen=True, slots=True)
class _Start:
    """What every run begins with, whatever its input: its request and id."""

    request: RunRequest
    run_id: str

    @property
    def prefix(self) -> str:
        """Makes the run's lineage ids unique within its thread."""
        return f"{self.run_id}/"

    def setup(self, position: Position, env: TaskEnv, **fields: Any) -> RunSetup:
        request = self.request
        recorder: Recorder | None = fields.get("recorder")
        # the line names the run's questions; a run that records nothing can ask none
        line = recorder.origin if recorder is not None else None
        return RunSetup(
            run_id=self.run_id,
            thread_id=request.thread_id,
            position=position,
            env=dataclasses.replace(env, line=line),
            recursion_limit=request.recursion_limit,
            breakpoints=request.breakpoints,
            listeners=request.listeners,
            nested=bool(request.namespace),
            namespace=request.namespace,
            **fields,
        )


def _unrecorded(settings: GraphSettings, input_: Any, start: _Start) -> RunSetup:
    """A run that keeps no checkpoints."""
    request = start.request
    if settings.checkpointer is not None:
        msg = "this graph has a checkpointer, so a run needs a thread: pass thread_id=..."
        raise ActorGraphError(msg)
    if request.checkpoint_id is not None:
        msg = "checkpoint_id=... needs a graph compiled with a checkpointer"
        raise ActorGraphError(msg)
    stops = request.breakpoints
    if not request.namespace and (stops.before or stops.after):  # a subgraph's are its parent's business
        which = "interrupt_before" if stops.before else "interrupt_after"
        msg = (
            f"{which}={sorted(stops.before or stops.after)} pauses the run, but this run keeps no "
            "checkpoints, so it could never be continued; compile the graph with a checkpointer "
            "(MemoryCheckpointer() within one process) and pass thread_id=... to invoke"
        )
        raise ConfigError(msg)
    if input_ is None or (isinstance(input_, Command) and input_.resume is not UNSET):
        input_state(input_)  # raises: nothing to resume or answer without a thread
    env = TaskEnv(
        node_prefix=start.prefix,
        thread_id=request.thread_id,
        context=request.context,
        nested=bool(request.namespace),
    )
    return start.setup(start_position(settings.spec, None, input_, f"{start.prefix}0:input"), env)


@dataclass(frozen=True, slots=True)
class _Resumable:
    """A thread about to be run: what was loaded, and how to record the run."""

    spec: GraphSpec
    start_: _Start
    store: Checkpointer
    thread_id: str
    env: TaskEnv
    loaded: Loaded | None
    head: str | None

    @staticmethod
    def open(settings: GraphSettings, start: _Start) -> _Resumable:
        store, request = settings.checkpointer, start.request
        thread_id = request.thread_id
        assert store is not None  # noqa: S101 - checked by the caller
        assert thread_id is not None  # noqa: S101 - checked by the caller
        env = TaskEnv(
            node_prefix=start.prefix,
            thread_id=thread_id,
            context=request.context,
            encode=lambda own, result: encode_new_states(store, thread_id, own, result),
            nested=bool(request.namespace),
        )
        loaded = load(store, thread_id, request.checkpoint_id)
        head = loaded.row.checkpoint_id if loaded is not None else None
        if request.checkpoint_id is not None:
            if loaded is None:
                msg = f"thread {thread_id!r} has no checkpoint {request.checkpoint_id!r}"
                raise ThreadNotFoundError(msg)
            current = store.get(thread_id)
            head = current.checkpoint_id if current is not None else None
        return _Resumable(settings.spec, start, store, thread_id, env, loaded, head)

    @property
    def replaying(self) -> bool:
        return self.start_.request.checkpoint_id is not None

    def recorder(self, source: str, *, known: bool = True) -> Recorder:
        loaded = self.loaded
        return Recorder(
            self.store,
            self.thread_id,
            self.start_.request.durability,
            head=self.head,
            parent=loaded.row.checkpoint_id if loaded else None,
            stored=loaded.stored if loaded and known else (),
            source=source,
            origin=loaded.origin if loaded else None,
        )

    def _existing(self) -> Loaded:
        if self.loaded is None:
            raise _no_thread(self.thread_id)
        return self.loaded

    def _claimed(self, loaded: Loaded) -> dict[str, Any]:
        """The answers claimed before for the pending questions, decoded."""
        loads = self.store.serializer.loads
        return {i: loads(row.data, aad=answer_aad(self.thread_id, i)) for i, row in loaded.claims.items()}

    def _earlier(self, loaded: Loaded, resume: Any) -> dict[str, AnswerRow]:
        """Stored answers that say who answered what `resume` answers, when it is not pending any more.

        An answer keyed by ids that this checkpoint did not ask gets the answers
        to those ids (earlier runs' questions); a bare answer when nothing waits
        gets the answers just given at this checkpoint or the one before (another
        process answered, and its run went on).
        """
        if not isinstance(resume, Mapping) or not any(is_interrupt_id(k) for k in resume):
            if loaded.interrupts or loaded.claims:
                return {}
            row = loaded.row
            found = self.store.answers_at(self.thread_id, row.checkpoint_id)
            if not found and row.parent_id is not None and row.source == "loop":
                found = self.store.answers_at(self.thread_id, row.parent_id)
            return found
        asked = {i.id for i in loaded.asked}
        named = [k for k in resume if is_interrupt_id(k) and k not in asked]
        return self.store.get_answers(self.thread_id, named) if named else {}

    def _claim(self, loaded: Loaded, answering: Answering) -> None:
        """Claim the new answers in the store before anything runs with them (compare-and-set).

        A fork answers questions of its own line, and a subgraph's run answers
        what its parent claimed: neither claims.

        Raises:
            AlreadyAnsweredError: another answer to one of the questions was claimed first.
        """
        request = self.start_.request
        if not answering.new or self.replaying or request.namespace:
            return
        dumps, at = self.store.serializer.dumps, time.time()
        rows = [
            AnswerRow(
                question.id,
                loaded.row.checkpoint_id,
                question.vertex,
                request.answered_by,
                at,
                dumps(value, aad=answer_aad(self.thread_id, question.id)),
            )
            for question, value in answering.new
        ]
        won = self.store.claim_answers(self.thread_id, loaded.row.checkpoint_id, rows)
        if won:
            first = won[0]
            raise AlreadyAnsweredError(
                self.thread_id, first.interrupt_id, first.vertex, first.answered_by, first.answered_at
            )

    def answer(self, command: Command) -> RunSetup:
        """Answer pending interrupts (and apply `Command(update=...)`), then continue.

        The answers are claimed in the store before the run starts, so nothing
        runs with an answer that lost to another.
        """
        loaded = self._existing()
        answering = claimed_only(loaded, self._claimed(loaded))
        if command.resume is not UNSET:
            resume = command.resume
            answering = answers_for(loaded, resume, self._claimed(loaded), self._earlier(loaded, resume))
            self._claim(loaded, answering)
        elif command.update is None:
            msg = "an empty Command() as input does nothing: give it resume=..., update=... or goto=..."
            raise ActorGraphError(msg)
        position = loaded.position
        if command.update is not None:
            position = _updated(position, command.update, f"{self.start_.prefix}update", self.spec)
        changed = position is not loaded.position
        source = "update" if changed else ("fork" if self.replaying else "loop")
        return self.start_.setup(
            position,
            self.env,
            recorder=self.recorder(source),
            pending=_pending_after_update(loaded, position),
            answers=answering.by_task,
            passed=answering.passed,
            record_start=changed or self.replaying,  # a fork records from a checkpoint of its own
        )

    def resume(self) -> RunSetup:
        """Continue the thread (re-run what failed, pass breakpoints), or replay a checkpoint."""
        loaded = self._existing()
        before = frozenset(
            r.task_id
            for r in loaded.pending.values()
            if r.interrupt and (r.interrupt.kind == "before" or any(i.kind != "interrupt" for i in r.nested))
        )
        claimed = claimed_only(loaded, {} if self.replaying else self._claimed(loaded))
        return self.start_.setup(
            loaded.position,
            self.env,
            recorder=self.recorder("fork" if self.replaying else "loop"),
            pending={} if self.replaying else loaded.pending,
            answers=claimed.by_task,  # answers claimed by a process that stopped before running them
            passed=before | claimed.passed,
            record_start=self.replaying,  # never write into an old checkpoint: fork from it
        )

    def start(self, input_: Any) -> RunSetup:
        """A new input on this thread: a new thread, or a new run continuing from its last state."""
        loaded = self.loaded
        if loaded is not None and not self.start_.request.discard_pending and not self.replaying:
            _refuse_if_unfinished(loaded, self.thread_id)
        base = state_of(loaded.position, self.spec.merge) if loaded is not None else None
        return self.start_.setup(
            start_position(self.spec, base, input_, f"{self.start_.prefix}0:input"),
            self.env,
            recorder=self.recorder("fork" if self.replaying else "input", known=False),
            record_start=True,
        )


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
        "discard_pending=True to drop that superstep and apply this input "
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
