"""The items of the stream modes `tasks`, `checkpoints` and `debug`, built from a run's events.

They carry what LangGraph's carry, as plain dicts with its keys, holding our
records: an error is an `ErrorInfo`, a question an `Interrupt`. A `config` is
the keywords that read the checkpoint back: `get_state(**config)`.

- task start (`TaskScheduled`): `id`, `name`, `input`, `triggers`.
- task result (a task's final `TaskFinished`): `id`, `name`, `result` (its new
  state when `ok`, else None), `error`, `interrupts`, `cached`.
- checkpoint (`CheckpointSaved`): `config`, `parent_config`, `metadata`
  (`source`, `step`, `run_id`), `values`, `next`, `tasks` (each `id`, `name`,
  `interrupts`, `state`: the `config` of a subgraph task's run, and its stored
  `result` or `error` when it has one).
- debug: `{"type": "task" | "task_result" | "checkpoint", "step", "timestamp", "payload"}`.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from actorgraph._model.records import NS, Interrupt, Task, VertexResult
from actorgraph.events import CheckpointSaved, Event, TaskFinished, TaskScheduled

__all__ = ["checkpoint_payload", "debug_item", "task_payload", "task_result_payload"]


def task_payload(event: TaskScheduled) -> dict[str, Any]:
    """A task about to run: what it is given and what sent it."""
    return {"id": event.task_id, "name": event.vertex, "input": event.input, "triggers": event.triggers}


def task_result_payload(event: TaskFinished) -> dict[str, Any]:
    """A task's outcome: its new state, or its error, or the questions it asks."""
    result = event.result
    return {
        "id": result.task_id,
        "name": result.vertex,
        "result": result.state if result.status == "ok" else None,
        "error": result.error if result.status == "error" else None,
        "interrupts": _questions(result),
        "cached": event.cached,
    }


def checkpoint_payload(event: CheckpointSaved) -> dict[str, Any]:
    """A stored checkpoint: where it is, what it holds, and what runs next."""
    thread_id, namespace = _root(event)
    parent = None
    if event.parent_id is not None:
        parent = {"thread_id": thread_id, "checkpoint_id": event.parent_id, "namespace": namespace}
    return {
        "config": {"thread_id": thread_id, "checkpoint_id": event.checkpoint_id, "namespace": namespace},
        "parent_config": parent,
        "metadata": {"source": event.source, "step": event.step, "run_id": event.run_id},
        "values": event.state,
        "next": list(event.next),
        "tasks": [_checkpoint_task(event, task, thread_id, namespace) for task in event.tasks],
    }


def debug_item(kind: str, event: Event, payload: dict[str, Any]) -> dict[str, Any]:
    """A `debug` item: a task, task result or checkpoint payload with its kind, superstep and time."""
    timestamp = dt.datetime.now(dt.UTC).isoformat()
    return {"type": kind, "step": event.step, "timestamp": timestamp, "payload": payload}


def _checkpoint_task(event: CheckpointSaved, task: Task, thread_id: str, namespace: str) -> dict[str, Any]:
    child = event.subgraphs.get(task.id)
    state = None
    if child is not None:
        state = {"thread_id": thread_id, "namespace": f"{namespace}{NS}{child}" if namespace else child}
    item: dict[str, Any] = {"id": task.id, "name": task.vertex, "interrupts": (), "state": state}
    result = event.results.get(task.id)
    if result is not None:
        item["interrupts"] = _questions(result)
        if result.status == "ok":
            item["result"] = result.state
        elif result.status == "error":
            item["error"] = result.error
    return item


def _questions(result: VertexResult) -> tuple[Interrupt, ...]:
    """The questions a task asks (all of a subgraph task's), as `RunResult.interrupts` lists them."""
    if result.status != "interrupt":
        return ()
    return result.nested or ((result.interrupt,) if result.interrupt is not None else ())


def _root(event: Event) -> tuple[str, str]:
    """The top-level thread and the namespace of the run an event belongs to.

    A subgraph's run stores its checkpoints in a thread of its own (the parent's,
    then `|` and the namespace); `get_state(thread_id, namespace=...)` reads them.
    """
    thread_id, namespace = event.thread_id or "", event.namespace
    suffix = f"{NS}{namespace}"
    if namespace and thread_id.endswith(suffix):
        thread_id = thread_id[: -len(suffix)]
    return thread_id, namespace
