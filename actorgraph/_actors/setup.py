"""What a run starts with once built on its coordinator: its plan, its recorder and its surroundings."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from actorgraph._actors.recorder import Recorder
from actorgraph._engine.task import TaskEnv
from actorgraph._model.records import Position, VertexResult
from actorgraph._model.runs import Breakpoints
from actorgraph.events import Listener

__all__ = ["RunSetup"]


@dataclass(frozen=True, slots=True)
class RunSetup:
    """Everything a run is started with.

    Attributes:
        run_id: the invoke's id.
        thread_id: the thread, or None.
        position: where the run starts (after its input, or a checkpoint).
        env: the surroundings handed to every task.
        recursion_limit: the most supersteps this invoke may run.
        breakpoints: where the run pauses by itself.
        listeners: callables that receive the run's events.
        recorder: writes the run to its checkpointer, or None.
        pending: the results of the checkpoint's unfinished superstep, by task id.
        answers: resume values for interrupted tasks, by task id.
        passed: task ids whose `interrupt_before` breakpoint is passed.
        record_start: write the starting position as a checkpoint first.
        nested: a subgraph's run (it may hand off to its parent with `Command(graph=PARENT)`).
        namespace: a subgraph's run's namespace ("" for a top-level run).
    """

    run_id: str
    thread_id: str | None
    position: Position
    env: TaskEnv
    recursion_limit: int
    breakpoints: Breakpoints = field(default_factory=Breakpoints)
    listeners: tuple[Listener, ...] = ()
    recorder: Recorder | None = None
    pending: Mapping[str, VertexResult] = field(default_factory=dict)
    answers: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    passed: frozenset[str] = frozenset()
    record_start: bool = False
    nested: bool = False
    namespace: str = ""
