"""The events that describe a run's tasks and checkpoints in full, built only when a listener wants them.

`TaskScheduled` (what a task is given, and what sent it) and `CheckpointSaved`
(a stored checkpoint with its state, its next vertices and their tasks) feed
the stream modes `tasks`, `checkpoints` and `debug`. Building one costs a merge
of inputs or a plan of the next superstep, so a run none of whose listeners
takes them never builds them: the emitter says so once per run, and the
coordinator's hot path pays one attribute test per dispatch.
"""

from __future__ import annotations

from collections.abc import Mapping

from actorgraph._actors.emitter import Emitter
from actorgraph._actors.recorder import Recorder
from actorgraph._engine.subgraphs import namespace_of
from actorgraph._engine.superstep import next_vertices, plan, state_of
from actorgraph._engine.task import TaskEnv, prepare
from actorgraph._model.errors import MergeConflictError
from actorgraph._model.records import Position, SuperstepState, Task, VertexResult
from actorgraph._model.spec import GraphSpec
from actorgraph.checkpoint._protocol import CheckpointRow
from actorgraph.events import CheckpointSaved, TaskScheduled

__all__ = ["CheckpointReporter", "schedule"]


def schedule(events: Emitter, spec: GraphSpec, task: Task, env: TaskEnv) -> None:
    """Emit the `TaskScheduled` of `task`, about to run its first attempt.

    Its input is merged here as the vertex merges it (a conflict gives None: the
    task reports it when it runs).
    """
    prepared = prepare(spec, task, 1, env)
    given = None if isinstance(prepared, VertexResult) else prepared.given(spec)
    triggers = tuple(dict.fromkeys(m.sender for m in task.inputs))
    scheduled = TaskScheduled(
        events.run_id, events.thread_id, task.step, task.id, task.vertex, given, triggers
    )
    events.emit(scheduled, routine=True)


class CheckpointReporter:
    """Tells a run's listeners of each checkpoint its recorder stores (it is the recorder's `saved`)."""

    def __init__(self, events: Emitter, spec: GraphSpec, recorder: Recorder) -> None:
        self.events = events
        self.spec = spec
        self.recorder = recorder

    @staticmethod
    def of(events: Emitter, spec: GraphSpec, recorder: Recorder | None) -> CheckpointReporter | None:
        """The reporter of a run that stores checkpoints and has a listener for them, else None."""
        if recorder is None or not events.wants(CheckpointSaved):
            return None
        reporter = CheckpointReporter(events, spec, recorder)
        recorder.saved = reporter
        return reporter

    def __call__(self, row: CheckpointRow, pos: Position, superstep: SuperstepState | None) -> None:
        """The recorder stored `row` for `pos` (with `superstep`'s outcomes, for a run that paused)."""
        results = superstep.results if superstep is not None else {}
        self._emit(row, pos, results)

    def resumed(self, pos: Position, pending: Mapping[str, VertexResult]) -> None:
        """A resumed run starts at its recorder's parent checkpoint: report that one first."""
        recorder = self.recorder
        if recorder.parent is None:
            return
        row = recorder.checkpointer.get(recorder.thread_id, recorder.parent)
        if row is not None:
            self._emit(row, pos, pending)

    def _emit(self, row: CheckpointRow, pos: Position, results: Mapping[str, VertexResult]) -> None:
        spec = self.spec
        try:
            state = state_of(pos, spec.merge)
        except MergeConflictError:  # the run fails with it; the checkpoint is stored all the same
            state = None
        tasks = plan(pos, spec.deferred)
        origin = self.recorder.origin
        subgraphs = {
            t.id: namespace_of(t, origin) for t in tasks if spec.vertices[t.vertex].child is not None
        }
        saved = CheckpointSaved(
            self.events.run_id,
            self.events.thread_id,
            pos.step,
            row.checkpoint_id,
            row.parent_id,
            row.source,
            state,
            next_vertices(spec, pos),
            tasks,
            {t.id: results[t.id] for t in tasks if t.id in results},
            subgraphs,
        )
        self.events.emit(saved, routine=True)
