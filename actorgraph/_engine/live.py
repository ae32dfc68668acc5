"""Live interrupts: a vertex that asks a question waits in its thread, and goes on from that line.

Without them, `interrupt()` ends the task and the answer re-runs the vertex from
its first line (the fallback path). On the live path the task's `interrupt`
outcome is reported at once, while the vertex function stays on its stack
waiting; when the resumed run takes the task over (the answer was claimed in
this process, in time), the function goes on from the line that asked, as an
attempt of the resumed run's task. The actors do the waiting and the taking
over (`_actors/live.py`, the `Turn`); this module is what the task runner does
with them: report the pause, then carry on as the new attempt.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING, Any, Protocol

from actorgraph._engine.context import Context, InterruptSignal, TaskScope
from actorgraph._model.records import Interrupt, Task, VertexResult

if TYPE_CHECKING:
    from actorgraph._engine.nesting import NestFrame

__all__ = ["LIVE_DEFAULT", "Continuation", "Resumed", "Turn"]

LIVE_DEFAULT = timedelta(minutes=10)  # compile(live_interrupts=...)'s default: how long a question waits live


@dataclass(frozen=True, slots=True)
class Resumed:
    """The resumed run's attempt that took a waiting vertex over, and its answer."""

    answer: Any
    task: Task
    attempt: int
    env: Any  # the resumed run's `TaskEnv` (`_engine/task.py`, which imports this module)


class Turn(Protocol):
    """How a vertex waits in its actor (`_actors/live.py`)."""

    def wait(self, pending: Interrupt, paused: VertexResult) -> Resumed | None:
        """Report `paused` as the task's outcome, then wait for an attempt that takes it over.

        Returns:
            That attempt, or None when the wait ended without one (too long, the
            graph closed, the answer went elsewhere): the vertex then unwinds.
        """
        ...


class Continuation:
    """One task attempt whose vertex may wait for its answers: where it stands now.

    Attributes:
        prepared: the attempt the function's outcome belongs to (the resumed
            run's, once it took the vertex over).
        asked: the vertex asked a question on the live path (its outcome then
            depends on the answer: the node cache keeps none of it).
    """

    __slots__ = ("_ctx", "_frame", "_prepare", "_spec", "_turn", "asked", "prepared")

    def __init__(  # noqa: PLR0913 - the attempt and what it hands over
        self,
        turn: Turn,
        spec: Any,
        prepared: Any,
        ctx: Context[Any],
        *,
        frame: NestFrame | None,
        prepare: Callable[[Any, Task, int, Any], Any],
    ) -> None:
        """Track `prepared`'s attempt; `prepare` makes the attempt of a resumed run's task."""
        self._turn = turn
        self._spec = spec
        self.prepared = prepared
        self._ctx = ctx
        self._frame = frame
        self._prepare = prepare
        self.asked = False

    def ask(self, pending: Interrupt, scope: TaskScope) -> Any:
        """`interrupt()` on the live path: report the pause, wait, and return the answer.

        Raises:
            InterruptSignal: the wait ended without an answer; the task's outcome
                was reported already, so the vertex unwinds and nothing more is said.
        """
        self.asked = True
        if self._frame is not None:
            self._frame.settle()  # the graphs it invoked are written before the pause is reported
        resumed = self._turn.wait(pending, self.prepared.at.paused(pending))
        prepared = self._prepare(self._spec, resumed.task, resumed.attempt, resumed.env) if resumed else None
        if resumed is None or isinstance(prepared, VertexResult):  # a merge cannot fail twice: defensive
            scope.pending = pending
            raise InterruptSignal(pending)
        self.prepared = prepared
        task, env = resumed.task, resumed.env
        scope.resumes = task.resumes
        emit = functools.partial(env.emit, task) if env.emit is not None else None
        self._ctx.rebind(attempt=resumed.attempt, emit=emit, context=env.context, store=env.store)
        if self._frame is not None and env.nest is not None:
            self._frame.nest, self._frame.task = env.nest, task
        return resumed.answer
