"""Answering a paused thread: which tasks get which answers, and which breakpoints pass.

An answer keyed by interrupt id goes to that question and no other: a mapping
that names any interrupt id is always an id map, and an id that is not pending
refuses the whole answer. A bare value answers the one pending interrupt.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from actorgraph._context import is_interrupt_id
from actorgraph._errors import ResumeError
from actorgraph._superstep import status_of
from actorgraph._types import Interrupt
from actorgraph.checkpoint._load import Loaded

__all__ = ["answers_for"]


def answers_for(loaded: Loaded, resume: Any) -> tuple[dict[str, dict[str, Any]], frozenset[str]]:
    """Task id -> (interrupt id -> answer) for the interrupts `resume` answers, and the breakpoints it passes.

    A subgraph task may wait for several answers (its subgraph's interrupts), so
    answers are grouped by task and kept by interrupt id.

    Raises:
        ResumeError: nothing waits for an answer, an id is not pending, or a bare
            value is given while several interrupts wait.
    """
    pending = {i.id: i for i in loaded.interrupts}
    if not pending:
        raise _nothing_to_answer(loaded)
    answers: dict[str, dict[str, Any]] = {}
    passed: set[str] = set()
    for interrupt_id, value in _match(resume, pending).items():
        interrupt = pending[interrupt_id]
        if interrupt.kind == "interrupt" or "/" in interrupt.vertex:  # a subgraph's breakpoint is its own
            answers.setdefault(interrupt.task_id, {})[interrupt_id] = value
        else:
            passed.add(interrupt.task_id)
    return answers, frozenset(passed)


def _nothing_to_answer(loaded: Loaded) -> ResumeError:
    status = status_of(loaded.position, loaded.superstep, loaded.pauses)
    advice = {
        "error": "its last superstep failed: fix the cause and re-run the failed tasks with "
        "invoke(None, thread_id=...)",
        "done": "its run is done: give it a new input to start the next run",
    }.get(status, "continue it with invoke(None, thread_id=...)")
    msg = (
        f"thread {loaded.row.thread_id!r} waits for no answer (status {status!r}), so "
        f"Command(resume=...) has nothing to answer; {advice}"
    )
    return ResumeError(msg)


def _match(resume: Any, pending: Mapping[str, Interrupt]) -> dict[str, Any]:
    """Interrupt id -> answer. A mapping that names any interrupt id is always an id map."""
    listing = ", ".join(f"{i} ({p.vertex})" for i, p in pending.items())
    if isinstance(resume, Mapping) and any(is_interrupt_id(k) or k in pending for k in resume):
        unknown = [k for k in resume if k not in pending]
        if unknown:
            msg = (
                f"Command(resume=...) answers interrupt id(s) {unknown} that are not pending (answered "
                f"already, or asked in another thread), so nothing was applied; the pending "
                f"interrupts are: {listing}"
            )
            raise ResumeError(msg)
        return dict(resume)
    if len(pending) == 1:
        return {next(iter(pending)): resume}
    msg = (
        f"{len(pending)} interrupts are pending, so a bare resume value is ambiguous; pass "
        f"Command(resume={{interrupt_id: value, ...}}) with some of: {listing}"
    )
    raise ResumeError(msg)
