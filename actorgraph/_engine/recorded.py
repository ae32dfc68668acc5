"""What a task's recorded outcome means when its superstep runs again (a resumed or answered run).

Pure: tasks that ended `ok` are kept; `error` tasks run again (or their
vertex's `on_error` handler, when the failure was final and the handler never
finished); `interrupt` tasks run again once answered, or, for an
`interrupt_before` breakpoint, once passed; a subgraph task runs its subgraph
again once some of its interrupts are answered or its breakpoints passed; the
others keep waiting.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any

from actorgraph._model.records import ErrorInfo, Task, VertexResult
from actorgraph._model.spec import GraphSpec

__all__ = ["Keep", "Rerun", "again"]


@dataclass(frozen=True, slots=True)
class Keep:
    """The recorded outcome stands."""

    result: VertexResult


@dataclass(frozen=True, slots=True)
class Rerun:
    """Run the task again.

    Attributes:
        task: the task (with the answers its vertex has received so far).
        attempt: the attempt number to run.
        failure: run the vertex's `on_error` handler for this error instead.
        answers: for a subgraph task, interrupt id -> answer for its subgraph.
    """

    task: Task
    attempt: int = 1
    failure: ErrorInfo | None = None
    answers: Mapping[str, Any] | None = None


def again(
    spec: GraphSpec,
    task: Task,
    old: VertexResult,
    *,
    passed: Collection[str],
    answers: Mapping[str, Mapping[str, Any]],
) -> Keep | Rerun:
    """Whether `task` runs again, given its recorded outcome `old`.

    Args:
        spec: the graph.
        task: the planned task.
        old: its recorded outcome.
        passed: task ids whose `interrupt_before` breakpoint is passed (for a
            subgraph task: whose subgraph's breakpoints are passed).
        answers: task id -> (interrupt id -> answer) for the interrupts answered now.
    """
    vertex = spec.vertices[task.vertex]
    match old.status:
        case "ok":
            return Keep(old)
        case "error" if not old.handler and old.error and vertex.on_error:
            return Rerun(
                task, old.attempts, failure=old.error
            )  # the failure was final; the handler never finished
        case "error":
            return Rerun(dataclasses.replace(task, resumes=old.resumes, answers=old.answers))
        case "interrupt" if vertex.child is not None:  # its subgraph takes answers by id
            given = answers.get(task.id)
            return Rerun(task, answers=given) if given is not None or task.id in passed else Keep(old)
        case "interrupt" if old.interrupt is not None and old.interrupt.kind == "before":
            return Rerun(task) if task.id in passed else Keep(old)
        case "interrupt" if old.nested:  # paused by graphs its function invoked: answers by id
            given = answers.get(task.id)
            if given is None:
                return Keep(old)
            return Rerun(
                dataclasses.replace(task, resumes=old.resumes, answers={**(old.answers or {}), **given})
            )
    given = answers.get(task.id)
    if given is None:
        return Keep(old)
    resumes = (*old.resumes, next(iter(given.values())))  # a vertex waits for one answer at a time
    return Rerun(dataclasses.replace(task, resumes=resumes))
