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

Each nested thread records the vertex and the graph that made it (`nested_of`),
and the graph is remembered for the vertex's function (`invoked.py`), so
`get_state(..., subgraphs=True)` and `get_history(..., namespace=...)` read
nested runs as they read subgraph runs.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from actorgraph._actors.messages import RunOrder
from actorgraph._api.invoked import remember
from actorgraph._api.request import GraphSettings
from actorgraph._engine.context import NestedPause, current_nest
from actorgraph._engine.nesting import Nest, NestFrame, NoNest
from actorgraph._engine.subgraphs import namespace_of
from actorgraph._model.errors import ConfigError, ResumeError
from actorgraph._model.records import NS, Command
from actorgraph._model.results import RunResult
from actorgraph._model.runs import RunRequest
from actorgraph._model.spec import FACE_KEY

__all__ = ["STATEFUL", "Nested", "NestedRun", "nested_of", "nested_order", "paused_by"]

_GRAPH = "nested_graph"  # thread metadata: what the nested run was invoked with
_INPUT = "nested_input"
_SLOT = "nested_slot"  # ... the graph's name among those its vertex invoked (`NestFrame.slot`)
_VERTEX = "nested_vertex"  # ... and the vertex that invoked it
STATEFUL = "nested_stateful:"
"""The invoking thread's label of each stateful graph's run in it: `STATEFUL + name` -> the graph's name."""


@dataclass(frozen=True, slots=True)
class NestedRun:
    """What a nested run's thread records of its making: the vertex and the graph.

    Attributes:
        vertex: the vertex whose function invoked the graph.
        label: the graph's name (a `@task`'s: the task's).
        slot: the graph's name among the graphs the vertex invoked (`NestFrame.slot`).
    """

    vertex: str
    label: str
    slot: str


def nested_of(checkpointer: Any, thread_id: str) -> NestedRun | None:
    """What the thread of a nested run records of its making; None for any other thread."""
    meta = checkpointer.get_metadata(thread_id)
    label, vertex = meta.get(_GRAPH), meta.get(_VERTEX)
    if not label or not vertex:
        return None
    return NestedRun(vertex, label, meta.get(_SLOT) or label)


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
    if isinstance(frame, NoNest):
        raise _unnested(frame, label or settings.spec.name)
    nest = frame.nest
    own = settings.checkpointer
    if own is not None and not settings.stateful and own is not nest.checkpointer:
        return None  # a graph with a store of its own keeps its runs there
    label = label or settings.spec.name
    call = f"{namespace_of(frame.task, nest.origin)}#{frame.next_call()}"
    slot = frame.slot(settings, label)
    # a stateful graph (compile(checkpointer=True)) keeps one run per vertex and graph, across the
    # run's supersteps and the thread's runs; each call continues it, the call's own line owned by it
    name = f"{frame.task.vertex}~{slot}" if settings.stateful else call
    namespace = f"{nest.namespace}{NS}{name}" if nest.namespace else name
    recorded = nest.checkpointer is not None and nest.thread_id is not None
    thread_id = f"{nest.thread_id}{NS}{name}" if recorded else None
    seen = {_GRAPH: label, _SLOT: slot, _VERTEX: frame.task.vertex}
    if settings.spec.face is not None:  # a task call's thread says so to readers without the graph
        seen[FACE_KEY] = settings.spec.face.name
    _record(settings, frame, thread_id, seen, input_)
    nested_request = _nested_request(settings, request, nest, thread_id, namespace)
    answers = frame.task.answers
    answered = Command(resume=dict(answers)) if answers else None
    owner = call if settings.stateful else None
    past = nest.past(frame.task.step, call.rpartition("#")[0]) if owner and nest.past else None
    order = RunOrder(nest.checkpointer, nested_request, answered, fresh=input_, owner=owner, past=past)
    return Nested(order, frame, namespace)


def _unnested(frame: NoNest, label: str) -> ConfigError:
    """Why a vertex on a Ray worker may not invoke `label` (a graph, or a `@task`'s)."""
    return ConfigError(
        f"vertex {frame.vertex!r} invokes {label!r} in a Ray worker, where its run could not nest in "
        "the task's run: it would run unrecorded (a resumed run would call it again, its questions "
        "never reach the thread); add the graph as a subgraph vertex (add_vertex(name, graph): it "
        "runs on Ray, nested and recorded), or compile this graph on threads (backend=None)"
    )


def _nested_request(
    settings: GraphSettings, request: RunRequest, nest: Nest, thread_id: str | None, namespace: str
) -> RunRequest:
    """The nested run's options: the invocation's, with the invoking run's where it gave none.

    Its live wait is the invoking run's, as a subgraph's is (a task's is its entrypoint's), and
    it ends when the invoking graph (or one that graph's run is nested in) is closed.
    """
    return dataclasses.replace(
        request,
        thread_id=thread_id,
        namespace=namespace,
        durability=nest.durability,
        listeners=(*request.listeners, *nest.listeners(namespace, inline=settings.spec.inline)),
        context=request.context if request.context is not None else nest.context,
        store=request.store if request.store is not None else nest.store,
        cache=request.cache if request.cache is not None else nest.cache,
        discard_pending=request.discard_pending or settings.stateful,
        live=nest.live,
        enclosing=nest.enclosing,  # its vertices that wait live are freed when one of those graphs closes
    )


def _record(
    settings: GraphSettings, frame: NestFrame, thread_id: str | None, seen: dict[str, str], input_: Any
) -> None:
    """Say which graph the nested run is: to the vertex's readers here, and with its thread.

    Raises:
        ResumeError: see `_check_same_call`.
    """
    nest = frame.nest
    if nest.spec is not None:  # so the thread's readers know the graph that ran it (`History`)
        remember(nest.spec.vertices[frame.task.vertex].fn, seen[_SLOT], settings.spec)
    if thread_id is None:
        return
    if settings.stateful:
        _note_stateful(nest, thread_id, thread_id.rpartition(NS)[2], seen)
    else:
        _check_same_call(nest.checkpointer, thread_id, seen, input_, frame)


def _note_stateful(nest: Nest, thread_id: str, name: str, seen: dict[str, str]) -> None:
    """Record a stateful graph's run with its thread, and its name with the invoking run's thread.

    The run of a stateful graph outlives the task that invoked it, so its name is
    listed in the invoking thread's labels (`STATEFUL` + name): `History` finds it there.
    """
    checkpointer = nest.checkpointer
    if checkpointer.get_metadata(thread_id).get(_SLOT) is None:
        checkpointer.set_metadata(thread_id, seen)
        checkpointer.set_metadata(nest.thread_id, {f"{STATEFUL}{name}": seen[_GRAPH]})


def _check_same_call(
    checkpointer: Any, thread_id: str, seen: dict[str, str], input_: Any, frame: NestFrame
) -> None:
    """Record what this invocation is; refuse it when the recorded one was another.

    Raises:
        ResumeError: another graph or task, or another input, was invoked here before.
    """
    import hashlib  # noqa: PLC0415 - it loads OpenSSL (3 MiB): on first use, not at `import actorgraph`

    digest = hashlib.blake2b(checkpointer.serializer.dumps(input_), digest_size=16).hexdigest()
    before = checkpointer.get_metadata(thread_id)
    label = seen[_GRAPH]
    if not before.get(_GRAPH):
        checkpointer.set_metadata(thread_id, {**seen, _INPUT: digest})
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
