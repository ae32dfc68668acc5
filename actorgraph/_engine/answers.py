"""Answering a paused thread: which tasks get which answers, and which breakpoints pass.

An answer keyed by interrupt id goes to that question and no other: a mapping
that names any interrupt id is always an id map, and an id that is not pending
refuses the whole answer. A bare value answers the one pending interrupt. A
question whose answer was claimed already (by this process or another) takes
no second answer: `AlreadyAnsweredError` names who answered it and when, and its
claimed answer is applied whenever the thread runs next.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from actorgraph._engine.context import is_interrupt_id
from actorgraph._engine.superstep import status_of
from actorgraph._model.errors import AlreadyAnsweredError, ResumeError
from actorgraph._model.records import Interrupt
from actorgraph._model.runs import AtCheckpoint, Claim

__all__ = ["Answering", "answers_for", "claimed_only"]


@dataclass(frozen=True, slots=True)
class Answering:
    """What answers do to a paused thread.

    Attributes:
        by_task: task id -> (interrupt id -> answer): the tasks that run again with
            answers (a subgraph task may take several, for its subgraph's questions).
        passed: task ids whose breakpoint is passed.
        new: the answers given now, each with its question: to be claimed before
            anything runs with them.
    """

    by_task: dict[str, dict[str, Any]]
    passed: frozenset[str]
    new: tuple[tuple[Interrupt, Any], ...] = ()


def answers_for(
    loaded: AtCheckpoint, resume: Any, earlier: Mapping[str, Claim] | None = None, *, fork: bool = False
) -> Answering:
    """The answers `resume` gives the thread's pending questions, with those claimed before.

    Args:
        loaded: the thread's checkpoint (with the answers claimed for its questions).
        resume: the value of `Command(resume=...)`.
        earlier: stored answers to questions `resume` names that are not `loaded`'s
            (questions of earlier runs of the thread), to say who answered them.
        fork: the answers are given to a replay of `loaded`, a new line of the
            thread's history: what was claimed on the old line is not its answer.

    Raises:
        AlreadyAnsweredError: `resume` answers a question whose answer was claimed.
        ResumeError: nothing waits for an answer, an id is not pending, or a bare
            value is given while several interrupts wait.
    """
    claimed = {} if fork else loaded.claims
    pending = {i.id: i for i in loaded.asked if i.id not in claimed}
    claims = {**(earlier or {}), **claimed}
    if isinstance(resume, Mapping):  # an answer to a question answered already says by whom, first
        for key in resume:
            if isinstance(key, str) and key in claims:
                raise _already(loaded, claims[key])
    if not pending and not claimed:
        if claims and not isinstance(resume, Mapping):  # a bare answer to a question just answered
            raise _already(loaded, next(iter(claims.values())))
        raise _nothing_to_answer(loaded)
    asked = {i.id: i for i in loaded.asked}
    given = _match(resume, pending, loaded)
    new = tuple((asked[i], value) for i, value in given.items())
    before = ((asked[i], c.value) for i, c in claimed.items() if i in asked)
    return _grouped((*new, *before), new)


def claimed_only(loaded: AtCheckpoint) -> Answering:
    """The answers claimed before for `loaded`'s questions (a thread continued with no new answer)."""
    asked = {i.id: i for i in loaded.asked}
    return _grouped([(asked[i], c.value) for i, c in loaded.claims.items() if i in asked], ())


def _grouped(answers: Iterable[tuple[Interrupt, Any]], new: tuple[tuple[Interrupt, Any], ...]) -> Answering:
    by_task: dict[str, dict[str, Any]] = {}
    passed: set[str] = set()
    for interrupt, value in answers:
        if interrupt.kind == "interrupt" or "/" in interrupt.vertex:  # a subgraph's breakpoint is its own
            by_task.setdefault(interrupt.task_id, {})[interrupt.id] = value
        else:
            passed.add(interrupt.task_id)
    return Answering(by_task, frozenset(passed), new)


def _already(loaded: AtCheckpoint, claim: Claim) -> AlreadyAnsweredError:
    return AlreadyAnsweredError(
        loaded.thread_id, claim.interrupt_id, claim.vertex, claim.answered_by, claim.answered_at
    )


def _nothing_to_answer(loaded: AtCheckpoint) -> ResumeError:
    status = status_of(loaded.position, loaded.superstep, loaded.pauses)
    advice = {
        "error": "its last superstep failed: fix the cause and re-run the failed tasks with "
        "invoke(None, thread_id=...)",
        "done": "its run is done: give it a new input to start the next run",
    }.get(status, "continue it with invoke(None, thread_id=...)")
    msg = (
        f"thread {loaded.thread_id!r} waits for no answer (status {status!r}), so "
        f"Command(resume=...) has nothing to answer; {advice}"
    )
    return ResumeError(msg)


def _match(resume: Any, pending: Mapping[str, Interrupt], loaded: AtCheckpoint) -> dict[str, Any]:
    """Interrupt id -> answer. A mapping that names any interrupt id is always an id map."""
    if isinstance(resume, Mapping) and any(is_interrupt_id(k) or k in pending for k in resume):
        unknown = [k for k in resume if k not in pending]
        if unknown:
            listing = ", ".join(f"{i} ({p.vertex})" for i, p in pending.items()) or "none"
            msg = (
                f"Command(resume=...) answers interrupt id(s) {unknown} that are not pending in thread "
                f"{loaded.thread_id!r} (asked by an earlier run of the thread, answered already, or "
                f"asked in another thread), so nothing was applied; the pending interrupts are: {listing}"
            )
            raise ResumeError(msg)
        return dict(resume)
    if not pending:  # every question of the thread was answered already
        raise _already(loaded, next(iter(loaded.claims.values())))
    if len(pending) == 1:
        return {next(iter(pending)): resume}
    listing = ", ".join(f"{i} ({p.vertex})" for i, p in pending.items())
    msg = (
        f"{len(pending)} interrupts are pending, so a bare resume value is ambiguous; pass "
        f"Command(resume={{interrupt_id: value, ...}}) with some of: {listing}"
    )
    raise ResumeError(msg)
