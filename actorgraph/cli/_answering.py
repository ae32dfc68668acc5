"""Which question `actorgraph answer` answers, and, when it is too late, who answered it first.

The answer is always given keyed by the question's id (`Command(resume={id: value})`),
so the store's claim (compare-and-set) lets exactly one of several racing
`answer` processes run the vertex. A process that comes late, after the claim
or after the run it started, is told who answered and when (exit 4), never
advised to resume a thread someone else is answering.
"""

from __future__ import annotations

from collections.abc import Iterable

from actorgraph import AlreadyAnsweredError, ThreadNotFoundError
from actorgraph._model.runs import Claim
from actorgraph.checkpoint import AnswerRow, Checkpointer
from actorgraph.checkpoint._load import Loaded, load
from actorgraph.cli._exits import CommandError
from actorgraph.cli._outcome import Next
from actorgraph.cli._stored import status_of_loaded

__all__ = ["question_to_answer"]

_LOOK_BACK = 20  # checkpoints searched for the question a late answer was meant for


def _too_late(thread: str, claims: Iterable[AnswerRow | Claim]) -> AlreadyAnsweredError | None:
    """The error of an answer that comes after `claims` (the latest one named), or None if none."""
    latest = max(claims, key=lambda claim: claim.answered_at, default=None)
    if latest is None:
        return None
    by, at = latest.answered_by, latest.answered_at
    return AlreadyAnsweredError(thread, latest.interrupt_id, latest.vertex, by, at)


def _earlier_claims(checkpointer: Checkpointer, thread: str) -> list[AnswerRow]:
    """The answers taken for the newest recent checkpoint that asked questions (its run since went on)."""
    try:
        for row in checkpointer.history(thread, limit=_LOOK_BACK):
            claims = checkpointer.answers_at(thread, row.checkpoint_id)
            if claims:
                return list(claims.values())
    except (TypeError, ValueError, KeyError, IndexError):  # a damaged older row: no earlier answer to name
        return []
    return []


def _chosen(checkpointer: Checkpointer, then: Next, loaded: Loaded, chosen: str) -> str:
    """`--id` if it waits; else who answered it, or a usage error listing the questions that wait."""
    pending = [p for p in loaded.interrupts if p.kind == "interrupt"]
    if chosen in {p.id for p in pending}:
        return chosen
    late = _too_late(then.thread, checkpointer.get_answers(then.thread, [chosen]).values())
    if late is not None:
        raise late
    ids = ", ".join(f"{p.id} ({p.vertex})" for p in pending) or "none"
    raise CommandError(f"thread {then.thread!r} has no pending interrupt {chosen!r}; pending: {ids}")


def question_to_answer(checkpointer: Checkpointer, then: Next, chosen: str | None) -> str:
    """The id of the question to answer: `chosen` (`--id`), or the only one waiting.

    Raises:
        AlreadyAnsweredError: the question (or, without `--id`, the thread's last one)
            was answered by someone else first; nothing is run (exit 4).
        CommandError: several wait and no `--id`, an unknown id, or nothing to answer (exit 2).
        ThreadNotFoundError: the thread is not in the store.
    """
    loaded = load(checkpointer, then.thread)
    if loaded is None:
        raise ThreadNotFoundError(f"thread {then.thread!r} has no stored checkpoint")
    if chosen is not None:
        return _chosen(checkpointer, then, loaded, chosen)
    pending = [p for p in loaded.interrupts if p.kind == "interrupt"]
    if len(pending) == 1:
        return pending[0].id
    if pending:
        ids = ", ".join(f"{p.id} ({p.vertex})" for p in pending)
        msg = f"thread {then.thread!r} waits for {len(pending)} answers: choose one with --id: {ids}"
        raise CommandError(msg)
    breakpoints = bool(loaded.interrupts)
    late = _too_late(then.thread, loaded.claims.values())
    if late is None and not breakpoints:
        late = _too_late(then.thread, _earlier_claims(checkpointer, then.thread))
    if late is not None:
        raise late
    status = status_of_loaded(loaded)
    advice = f"; resume it: {then.command('resume')}" if status != "done" else ""
    raise CommandError(f"thread {then.thread!r} waits for no answer (status {status}){advice}")
