"""A compiled graph invoked inside a running vertex: its run nests in the invoking task's.

`CompiledGraph.start` (and so `invoke`, `stream`) asks `nested_order` first.
Inside a vertex of a run on threads, a state input with no `thread_id` of its
own makes a nested run: named by the task and the invocation's number in call
order, checkpointed in the run's thread under that name, streaming into the
run's listeners, and answering the run's questions for it. A nested run that
finished before (the vertex runs again after a crash, a failure or an
interrupt) returns its recorded result without running again; one that was
recorded with another graph or another input refuses to (`ResumeError`), so a
changed program never gets another call's result.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from actorgraph._actors.messages import RunOrder
from actorgraph._api.request import GraphSettings
from actorgraph._engine.context import NestedPause, current_nest
from actorgraph._engine.nesting import NestFrame
from actorgraph._engine.subgraphs import namespace_of
from actorgraph._model.errors import ResumeError
from actorgraph._model.records import NS, Command
from actorgraph._model.results import RunResult
from actorgraph._model.runs import RunRequest

__all__ = ["Nested", "nested_order", "paused_by"]

_GRAPH = "nested_graph"  # thread metadata: what the nested run was invoked with
_INPUT = "nested_input"


@dataclass(frozen=True, slots=True)
class Nested:
    """A nested run's order, and the task attempt that invoked it."""

    order: RunOrder
    frame: NestFrame
    namespace: str


def nested_order(
    settings: GraphSettings, input_: Any, request: RunRequest, *, label: str = ""
) -> Nested | None:
    """The order of a run nested in the running task, or None when this run does not nest.

    It nests when called inside a vertex of a run on threads, with a state as
    input, no `thread_id`, and no checkpointer of its own other than the run's.

    Args:
        settings: the invoked graph's settings.
        input_: the invocation's input.
        request: the invocation's options.
        label: what the invocation is, for the resume check (default: the graph's name).

    Raises:
        ResumeError: the task invoked something else, or with another input, at this
            point of its code when it ran before.
    """
    frame = current_nest.get()
    if frame is None or request.thread_id is not None or input_ is None or isinstance(input_, Command):
        return None
    nest = frame.nest
    own = settings.checkpointer
    if own is not None and not settings.stateful and own is not nest.checkpointer:
        return None  # a graph with a store of its own keeps its runs there
    call = f"{namespace_of(frame.task, nest.origin)}#{frame.next_call()}"
    # a stateful graph (compile(checkpointer=True)) keeps one run per vertex and graph, across the
    # run's supersteps and the thread's runs; each call continues it, the call's own line owned by it
    name = f"{frame.task.vertex}~{settings.spec.name}" if settings.stateful else call
    namespace = f"{nest.namespace}{NS}{name}" if nest.namespace else name
    recorded = nest.checkpointer is not None and nest.thread_id is not None
    thread_id = f"{nest.thread_id}{NS}{name}" if recorded else None
    if thread_id is not None and not settings.stateful:
        _check_same_call(nest.checkpointer, thread_id, label or settings.spec.name, input_, frame)
    nested_request = dataclasses.replace(
        request,
        thread_id=thread_id,
        namespace=namespace,
        durability=nest.durability,
        listeners=(*request.listeners, *nest.listeners(namespace)),
        context=request.context if request.context is not None else nest.context,
        store=request.store if request.store is not None else nest.store,
        cache=request.cache if request.cache is not None else nest.cache,
        discard_pending=request.discard_pending or settings.stateful,
    )
    answers = frame.task.answers
    answered = Command(resume=dict(answers)) if answers else None
    owner = call if settings.stateful else None
    order = RunOrder(nest.checkpointer, nested_request, answered, fresh=input_, owner=owner)
    return Nested(order, frame, namespace)


def _check_same_call(checkpointer: Any, thread_id: str, label: str, input_: Any, frame: NestFrame) -> None:
    """Record what this invocation is; refuse it when the recorded one was another.

    Raises:
        ResumeError: another graph or task, or another input, was invoked here before.
    """
    import hashlib  # noqa: PLC0415 - it loads OpenSSL (3 MiB): on first use, not at `import actorgraph`

    digest = hashlib.blake2b(checkpointer.serializer.dumps(input_), digest_size=16).hexdigest()
    before = checkpointer.get_metadata(thread_id)
    if not before.get(_GRAPH):
        checkpointer.set_metadata(thread_id, {_GRAPH: label, _INPUT: digest})
        return
    where = f"vertex {frame.task.vertex!r} (task {frame.task.id!r}), invocation {frame.calls - 1}"
    if before[_GRAPH] != label:
        msg = (
            f"{where} invokes {label!r} where the run it resumes invoked {before[_GRAPH]!r}: the code "
            "changed since the thread was recorded, so no recorded result fits; put the code back to "
            "finish the thread (it is unchanged), or start a new thread"
        )
        raise ResumeError(msg)
    if before.get(_INPUT) != digest:
        msg = (
            f"{where} invokes {label!r} with another input than the run it resumes did: the code or "
            "its input changed, so the recorded result is not this call's; put them back to finish "
            "the thread (it is unchanged), or start a new thread"
        )
        raise ResumeError(msg)


def paused_by(nested: Nested, result: RunResult[Any]) -> NestedPause:
    """The signal that pauses the invoking task: the nested run's questions, named by path."""
    return nested.frame.pause(result.interrupts)
