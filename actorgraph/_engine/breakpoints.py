"""The questions breakpoints ask: `interrupt_before` a task runs, `interrupt_after` a superstep commits.

A breakpoint's question is an `Interrupt` of kind "before" or "after", with an
id made like any question's (thread, line, superstep, task), so it is answered
or passed like one.
"""

from __future__ import annotations

from actorgraph._engine.context import interrupt_id
from actorgraph._model.records import Interrupt, SuperstepState, Task, VertexResult
from actorgraph._model.runs import Breakpoints

__all__ = ["paused_before", "pauses_after"]


def paused_before(task: Task, thread_id: str | None, line: str | None) -> VertexResult:
    """The `interrupt` outcome of a task stopped by its `interrupt_before` breakpoint (it did not run)."""
    asked = Interrupt(
        interrupt_id(thread_id, line, task.step, task.id, -1), task.vertex, None, task.id, "before"
    )
    return VertexResult(task.id, task.vertex, "interrupt", interrupt=asked, attempts=0, inputs=task.inputs)


def pauses_after(
    superstep: SuperstepState, stops: Breakpoints, thread_id: str | None, line: str | None
) -> tuple[Interrupt, ...]:
    """The `interrupt_after` questions of a committed superstep: one per vertex that stops after it."""
    if not stops.after:
        return ()
    vertices = sorted({r.vertex for r in superstep.results.values() if stops.stops_after(r.vertex)})
    return tuple(
        Interrupt(interrupt_id(thread_id, line, superstep.step, f"after:{v}", 0), v, None, v, "after")
        for v in vertices
    )
