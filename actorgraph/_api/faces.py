"""What a stream shows of the runs of a graph with a face: an `@entrypoint`'s, a `@task` call's.

Such a graph's state is a record of its own (`{"input", "output", "save"}`,
`{"args", "kwargs"}` then `{"value"}`), and its events carry the record, as
every event carries the state the engine keeps (`mode="events"` and listeners
see them so). The other modes show the run as LangGraph's streams show the
functional API's (`GraphSpec.face`):

- an entrypoint's run: `values` are what the function returns (nothing for the
  state the run starts from), `updates` `{name: return value}`, a pause's
  `values` item holds the questions alone, the `tasks` stream's `input` is the
  function's input; checkpoints hold the return value;
- a task call's run is one task of the run that made it: its result is that
  run's update `{task: result}` and its `tasks` items are that run's (the
  call's `input` is `(args, kwargs)`, its id the call's namespace), in that
  run's namespace; nothing else of it is shown (its pause is the calling run's,
  so a call that asks a question has no `tasks` result, as in LangGraph).

A stream learns which runs have a face as they start (`Emitter` calls the
listener's `meet_face(namespace, face)`), so a plain graph's stream pays nothing.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from actorgraph._model.records import NS, VertexResult
from actorgraph._model.spec import Face
from actorgraph.events import (
    CheckpointSaved,
    Custom,
    Event,
    Interrupted,
    MessageChunk,
    RunFinished,
    SuperstepCommitted,
    TaskFinished,
    TaskScheduled,
    TaskStarted,
)

__all__ = ["FaceBook", "call_update", "seen"]


class FaceBook(dict[str, Face]):
    """A listener that takes no event: it learns which runs of a run have a face, by namespace.

    Give it to a run (`listeners=[book]`) whose events are read as they are
    (`mode="events"`), to show them as `seen` does.
    """

    kinds: frozenset[type[Event]] = frozenset()

    def __call__(self, event: Event) -> None:
        """Never called: it takes no kind of event."""

    def meet_face(self, namespace: str, face: Face) -> None:
        """Note that the run `namespace` (as it starts) is of a graph with `face`."""
        self[namespace] = face


def seen(event: Event, faces: Mapping[str, Face]) -> Event | None:
    """`event` of a run of a graph with a face, as the streams show it; None when they show nothing of it.

    Args:
        event: an event of the run `event.namespace`, one of `faces`.
        faces: the faces of the runs of the stream, by namespace.
    """
    face = faces[event.namespace]
    if face.call:
        return _call_seen(event, face, _home(event.namespace, faces))
    match event:
        case SuperstepCommitted(step=0):
            return None  # the state the run starts from: an entrypoint's values are what it returns
        case SuperstepCommitted(state=state):
            return dataclasses.replace(event, state=face.shown(state))
        case TaskFinished(result=result):
            return dataclasses.replace(event, result=_shown(result, face))
        case TaskScheduled(input=given):
            return dataclasses.replace(event, input=face.asked(given))
        case Interrupted():
            return dataclasses.replace(event, state=None)  # its `values` item: the questions alone
        case CheckpointSaved(state=state, results=results):
            shown = {task_id: _shown(result, face) for task_id, result in results.items()}
            return dataclasses.replace(event, state=face.shown(state), results=shown)
        case RunFinished(state=state):
            return dataclasses.replace(event, state=face.shown(state))
    return event


def call_update(event: Event) -> dict[str, Any] | None:
    """The `updates` item of a task call's event (as `seen`): `{task: result}` if it ended ok, else None."""
    if type(event) is not TaskFinished or event.result.status != "ok":
        return None
    return {event.result.vertex: event.result.state}


def _home(namespace: str, faces: Mapping[str, Face]) -> str:
    """The namespace of the run a task call is a task of: its caller's, or further up.

    A task's own calls are tasks of the run its call is a task of, as LangGraph's are.
    """
    home = namespace.rpartition(NS)[0]
    while home and (face := faces.get(home)) is not None and face.call:
        home = home.rpartition(NS)[0]
    return home


def _call_seen(event: Event, face: Face, home: str) -> Event | None:
    """An event of a task call's run, as one task of the run `home` (None: nothing of it is shown)."""
    call = event.namespace.rpartition(NS)[2]
    match event:
        case TaskFinished(final=True, result=result) if result.status != "interrupt":  # a pause: its caller's
            shown = dataclasses.replace(_shown(result, face), task_id=call)
            return dataclasses.replace(event, namespace=home, result=shown)
        case TaskScheduled(input=given):
            return dataclasses.replace(event, namespace=home, task_id=call, input=face.asked(given))
        case TaskStarted():
            return dataclasses.replace(event, namespace=home, task_id=call)
        case MessageChunk() | Custom():  # a task's calls' own (its custom data is its caller's)
            return dataclasses.replace(event, namespace=home)
    return None


def _shown(result: VertexResult, face: Face) -> VertexResult:
    """A task's outcome with its new state as the face shows it (the record's, when it is `ok`)."""
    if result.status != "ok":
        return result
    return dataclasses.replace(result, state=face.shown(result.state))
