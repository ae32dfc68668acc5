"""What a task needs from the run it belongs to (`TaskEnv`): its thread, listeners, stores and limits."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from actorgraph._engine.nesting import Nest
from actorgraph._model.policy import NodeCache
from actorgraph._model.records import Task, VertexResult

__all__ = ["TaskEnv"]


@dataclass(frozen=True, slots=True)
class TaskEnv:
    """What a task needs from the run it belongs to.

    Attributes:
        node_prefix: makes lineage ids unique within the thread.
        thread_id: the run's thread, or None.
        context: the run's `context=` object.
        emit: where `ctx.emit(payload)` goes (`emit(task, payload)`), or None.
        listen: receives the events vertices emit (task started), or None.
        now: the wall clock, for the result's timestamps.
        encode: with a checkpointer, `encode(node_id, result)` serializes the
            states a task made (on the vertex's thread); None otherwise.
        nested: the run is a subgraph's (`Command(graph=PARENT)` is allowed).
        line: the line of the thread's history the run continues (the checkpoint
            that began it, or the run's id when nothing is recorded): it makes the
            ids of the questions its tasks ask unique to this run.
        store: the graph's `compile(store=...)` object, given to vertices as `ctx.store`.
        cache: the graph's node cache (`compile(cache=...)`), or None.
        nest: what the run offers the graphs its vertices invoke (`Nest`), or None.
        live: seconds a vertex that asks a question waits in its actor for the
            answer (`_actors/live.py`), or None.
        stop: the superstep after which the run's recursion limit allows no more
            (its starting superstep plus the limit), or None: a task's remaining steps.
        messages: someone listens to the message pieces vertices stream
            (`stream(mode="messages")`), so a vertex calling a model may stream it.
        enclosing: the graphs the run is nested in (`RunRequest.enclosing`).
    """

    node_prefix: str
    thread_id: str | None = None
    context: Any = None
    emit: Callable[[Task, Any], None] | None = None
    now: Callable[[], float] = time.time
    encode: Callable[[str, VertexResult], Mapping[str, bytes]] | None = None
    listen: Callable[[Any], None] | None = None
    nested: bool = False
    line: str | None = None
    store: Any = None
    cache: NodeCache | None = None
    nest: Nest | None = None
    live: float | None = None
    stop: int | None = None
    messages: bool = False
    enclosing: tuple[Any, ...] = ()

    def node_id(self, task: Task) -> str:
        """The lineage id of `task`'s output (its other versions add `<` or `>n`)."""
        return f"{self.node_prefix}{task.step}:{task.id}"
