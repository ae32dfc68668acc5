"""Preparing a run: from a fresh input, from a thread's checkpoint, or from an answer. Pure.

- A state as input starts a run (a new thread, or a new run on a finished one,
  whose input is an update to the thread's last state: see `inputs`);
  `Command(goto=..., update=...)` starts one at `goto`.
- `None` continues the thread: failed tasks run again, breakpoints are passed,
  answers claimed before are applied, unanswered interrupts stay pending. With
  `checkpoint_id`, it replays from an older checkpoint instead, forking the
  thread's history.
- `Command(resume=...)` answers pending interrupts (`Command(update=...)` also
  changes the state first).

The actors read the thread's checkpoint (and, for an answer, the stored answers
that `lookups` names), call `plan_run`, claim the plan's new answers in the
store, and start the run from the plan. Nothing here reads or writes a store.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from actorgraph._engine.answers import Answering, answers_for, claimed_only
from actorgraph._engine.context import is_interrupt_id
from actorgraph._engine.inputs import input_state, start_position, updated_state
from actorgraph._engine.lineage import distinct
from actorgraph._engine.superstep import current_state, replace_state, state_of
from actorgraph._model.errors import ActorGraphError, ConfigError, ThreadNotFoundError
from actorgraph._model.records import UNSET, Command, Interrupt, Node, Position, VertexResult
from actorgraph._model.runs import AtCheckpoint, Claim, RunRequest
from actorgraph._model.spec import GraphSpec

__all__ = ["RunPlan", "lookups", "plan_run", "plan_unrecorded"]


@dataclass(frozen=True, slots=True)
class RunPlan:
    """Where a run starts and what it does first: the engine's answer to an input on a thread.

    Attributes:
        position: where the run starts (after its input, or at a checkpoint).
        source: what the run's first checkpoint records ("input", "loop", "update", "fork").
        record_start: write the starting position as a checkpoint first.
        pending: the recorded results of the checkpoint's unfinished superstep, by task id.
        answers: resume values for interrupted tasks, by task id (then interrupt id).
        passed: task ids whose breakpoint is passed.
        claims: the answers given now, each with its question: the actors claim them
            in the store before the run starts (none for a fork or a subgraph's run).
        continues: the run continues the checkpoint's line (its stored blobs may be
            relied on); False for a new input.
    """

    position: Position
    source: str
    record_start: bool
    pending: Mapping[str, VertexResult] = field(default_factory=dict)
    answers: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    passed: frozenset[str] = frozenset()
    claims: tuple[tuple[Interrupt, Any], ...] = ()
    continues: bool = True


def plan_unrecorded(spec: GraphSpec, request: RunRequest, input_: Any, node_prefix: str) -> RunPlan:
    """The plan of a run that keeps no checkpoints.

    Raises:
        ConfigError: breakpoints, which could never be continued.
        ActorGraphError: nothing to resume or answer, or a replay, without a thread.
    """
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
    return RunPlan(start_position(spec, None, input_, f"{node_prefix}0:input"), "input", record_start=False)


def plan_run(  # noqa: PLR0913 - the graph, the run, and what the store said
    spec: GraphSpec,
    request: RunRequest,
    input_: Any,
    node_prefix: str,
    loaded: AtCheckpoint | None,
    *,
    fresh: Any = UNSET,
    earlier: Mapping[str, Claim] | None = None,
    owner: str | None = None,
) -> RunPlan:
    """The plan of a run on a recorded thread, given its checkpoint (None for a new thread).

    Args:
        spec: the graph.
        request: the run's options.
        input_: a state, None (continue the thread) or a `Command`; checked and copied.
        node_prefix: makes the run's lineage ids unique within its thread.
        loaded: the thread's checkpoint (the head, or `request.checkpoint_id`), or None.
        fresh: a subgraph's input: the run starts with it when its thread has no
            checkpoint yet, and continues the thread (with `input_`) when it has.
        earlier: the stored answers `lookups` asked for (who answered what `input_` answers).
        owner: for a stateful subgraph's run, the parent's task it serves: a thread
            whose line another task began takes `fresh` as a new input (applied to
            the state it keeps), a line this task began is continued.

    Raises:
        ActorGraphError: the input does not fit the thread (no thread to resume, nothing
            to answer, a paused thread given a new input, an answer already given, ...).
    """
    if fresh is not UNSET and (loaded is None or (owner is not None and loaded.owner != owner)):
        return _started(spec, request, fresh, node_prefix, loaded)
    if request.namespace and loaded is not None:
        input_ = _own_answers(input_, loaded)
    if isinstance(input_, Command) and not input_.goto:
        return _answered(spec, request, input_, node_prefix, _existing(loaded, request), earlier)
    if input_ is None:
        return _resumed(request, _existing(loaded, request))
    return _started(spec, request, input_, node_prefix, loaded)


def lookups(loaded: AtCheckpoint | None, input_: Any) -> tuple[list[str], list[str]]:
    """Which stored answers say who answered what `input_` answers, when it is not pending any more.

    Returns:
        Interrupt ids (an answer keyed by ids this checkpoint did not ask: earlier runs'
        questions), and checkpoint ids whose answers to read, first found first (a bare
        answer while nothing waits: another process answered at this checkpoint or the
        one before, and its run went on).
    """
    if loaded is None or not isinstance(input_, Command) or input_.resume is UNSET:
        return [], []
    resume = input_.resume
    if isinstance(resume, Mapping) and any(is_interrupt_id(k) for k in resume):
        asked = {i.id for i in loaded.asked}
        return [k for k in resume if is_interrupt_id(k) and k not in asked], []
    if loaded.interrupts or loaded.claims:
        return [], []
    before = [loaded.parent_id] if loaded.parent_id is not None and loaded.source == "loop" else []
    return [], [loaded.checkpoint_id, *before]


def _own_answers(input_: Any, loaded: AtCheckpoint) -> Any:
    """A nested run's part of its parent's answers: those to its own questions (None: no answer).

    A task's answers go to every run it nests (the graphs its function invoked);
    its parent checked and claimed them all, so each run takes its own and
    continues without an answer when none is its own.
    """
    if not isinstance(input_, Command) or not isinstance(input_.resume, Mapping):
        return input_
    asked = {i.id for i in loaded.asked} | set(loaded.claims)
    own = {k: v for k, v in input_.resume.items() if k in asked}
    if len(own) == len(input_.resume):
        return input_
    return dataclasses.replace(input_, resume=own) if own else None


def _existing(loaded: AtCheckpoint | None, request: RunRequest) -> AtCheckpoint:
    if loaded is None:
        msg = f"thread {request.thread_id!r} has no checkpoint to resume; start it with an input state"
        raise ThreadNotFoundError(msg)
    return loaded


def _answered(  # noqa: PLR0913, PLR0917 - the graph, the run, the answer and what the store said
    spec: GraphSpec,
    request: RunRequest,
    command: Command,
    node_prefix: str,
    loaded: AtCheckpoint,
    earlier: Mapping[str, Claim] | None,
) -> RunPlan:
    """Answer pending interrupts (and apply `Command(update=...)`), then continue."""
    replaying = request.checkpoint_id is not None  # a fork: the old line's claims are not its answers
    answering = Answering({}, frozenset()) if replaying else claimed_only(loaded)
    if command.resume is not UNSET:
        answering = answers_for(loaded, command.resume, earlier, fork=replaying)
    elif command.update is None:
        msg = "an empty Command() as input does nothing: give it resume=..., update=... or goto=..."
        raise ActorGraphError(msg)
    position = loaded.position
    if command.update is not None:
        position = _updated(position, command.update, f"{node_prefix}update", spec)
    changed = position is not loaded.position
    return RunPlan(
        position,
        "update" if changed else ("fork" if replaying else "loop"),
        record_start=changed or replaying,  # a fork records from a checkpoint of its own
        pending=_pending_after_update(loaded, position, answering if replaying else None),
        answers=answering.by_task,
        passed=answering.passed,
        claims=_to_claim(answering, request),
    )


def _to_claim(answering: Answering, request: RunRequest) -> tuple[tuple[Interrupt, Any], ...]:
    """The answers to claim: a fork answers questions of its own line, a subgraph's run its parent's."""
    if request.checkpoint_id is not None or request.namespace:
        return ()
    return answering.new


def _resumed(request: RunRequest, loaded: AtCheckpoint) -> RunPlan:
    """Continue the thread (re-run what failed, pass breakpoints, apply claimed answers), or replay."""
    replaying = request.checkpoint_id is not None
    before = frozenset(
        r.task_id
        for r in loaded.pending.values()
        if r.interrupt and (r.interrupt.kind == "before" or any(i.kind != "interrupt" for i in r.nested))
    )
    claimed = Answering({}, frozenset()) if replaying else claimed_only(loaded)
    return RunPlan(
        loaded.position,
        "fork" if replaying else "loop",
        record_start=replaying,  # never write into an old checkpoint: fork from it
        pending={} if replaying else loaded.pending,
        answers=claimed.by_task,  # answers claimed by a process that stopped before running them
        passed=before | claimed.passed,
    )


def _started(
    spec: GraphSpec, request: RunRequest, input_: Any, node_prefix: str, loaded: AtCheckpoint | None
) -> RunPlan:
    """A new input on this thread: a new thread, or a new run continuing from its last state."""
    replaying = request.checkpoint_id is not None
    if loaded is not None and not request.discard_pending and not replaying:
        _refuse_if_unfinished(loaded)
    base = state_of(loaded.position, spec.merge) if loaded is not None else None
    return RunPlan(
        start_position(spec, base, input_, f"{node_prefix}0:input"),
        "fork" if replaying else "input",
        record_start=True,
        continues=False,
    )


def _refuse_if_unfinished(loaded: AtCheckpoint) -> None:
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
        f"thread {loaded.thread_id!r} has an unfinished superstep {loaded.position.step + 1} "
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


def _pending_after_update(
    loaded: AtCheckpoint, position: Position, fork: Answering | None
) -> dict[str, VertexResult]:
    """A state update re-runs finished tasks (their inputs changed); others keep their outcome.

    A fork (a replay, answered by `fork`) keeps only the questions it answers: its
    other tasks ask again, under its own ids (`by_hand.kept_pending`).
    """
    pending = dict(loaded.pending)
    if fork is not None:
        answered = fork.by_task.keys() | fork.passed
        pending = {k: r for k, r in pending.items() if r.status != "interrupt" or k in answered}
    if position is loaded.position:
        return pending
    return {k: r for k, r in pending.items() if r.status != "ok"}
