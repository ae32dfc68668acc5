"""Launching a subgraph's run: what the runtime calls when a subgraph task starts (see `_children.py`).

It lives with the facade because it prepares the run as `invoke` would: a
subgraph's run whose thread has a checkpoint continues it (answered when its
parent was answered), one without starts with the task's input.
"""

from __future__ import annotations

from typing import Any

from actorgraph._actors.run import Run
from actorgraph._actors.setup import ChildCall, Launch, Workers
from actorgraph._api.request import GraphSettings, RunRequest
from actorgraph._api.resume import new_run_id, prepare
from actorgraph._model.records import Command

__all__ = ["launch_child"]


def launch_child(call: ChildCall, given: Any, workers: Workers) -> Launch:
    """The launch of a subgraph's run (built on the parent's coordinator, which reads the store)."""
    settings = GraphSettings(
        workers.spec, call.store, call.breakpoints, call.durability, call.listeners, call.context
    )
    request = RunRequest(
        thread_id=call.thread_id,
        context=call.context,
        recursion_limit=call.recursion_limit,
        checkpoint_id=None,
        durability=call.durability,
        breakpoints=call.breakpoints,
        discard_pending=False,
        listeners=call.listeners,
        namespace=call.namespace,
    )
    answered = Command(resume=call.answers) if call.answers else None

    def build(launch: Launch) -> Run:
        run = Run(workers, prepare(settings, answered, request, launch.run_id, fresh=given), launch)
        launch.run = run
        return run

    return Launch(new_run_id(), build, nested=True)
