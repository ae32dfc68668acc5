"""A run's events made into the stream parts LangGraph's clients read: `(event name, JSON data)`.

The server streams every run through the facade (`astream(mode="events",
subgraphs=True)`) and builds each mode's parts here, from the event records:

- `values`: the run's state after each committed superstep (from the one it
  starts from), and once more with `__interrupt__: [{value, id}]` when it pauses;
- `updates`: `{vertex: what it changed}` for each finished task, a delta even for
  a vertex that returns the whole state (`_wire.update_delta`), and
  `{"__interrupt__": [...]}` when the run pauses (`[]` at a breakpoint);
- `messages-tuple` (sent as `messages`): `[message chunk, metadata]` for each
  piece a vertex streams, and for each message a vertex adds without streaming it;
- `custom`, `tasks`, `checkpoints`, `debug` as LangGraph sends them; `messages`
  and `events` in `_messages.py`.

A subgraph's parts are named `<mode>|<vertex>:<task>` (one `|` part per level)
and sent only with `stream_subgraphs`; its message pieces are sent without it too,
as LangGraph sends them, with the namespace in their metadata.

An entrypoint's run and its task calls' are shown as the facade's streams show
them (`_api/faces.py`): its values and updates are its return value, each task
call is an update `{task: result}` of the run that made it.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import Any, Final

from actorgraph._api.faces import FaceBook, seen
from actorgraph._api.payloads import checkpoint_payload, task_payload, task_result_payload
from actorgraph._model.records import NS
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
)
from actorgraph.server._graphs import Served
from actorgraph.server._messages import MessageParts, node_metadata
from actorgraph.server._wire import interrupt_list, jsonable, message_keys, update_delta, wire_state

__all__ = ["Part", "Translator", "wire_namespace"]

Part = tuple[str, Any]
"""One stream part: the SSE event's name and its data (plain JSON data)."""

_INTERRUPT: Final = "__interrupt__"


def wire_namespace(namespace: tuple[str, ...]) -> tuple[str, ...]:
    """Actorgraph's namespace parts (`research@2~1a2b`) as LangGraph names them (`research:2~1a2b`)."""
    return tuple(part.replace("@", ":", 1) for part in namespace)


class Translator:
    """The stream parts of one run, in the modes its request asked for."""

    def __init__(
        self, served: Served, modes: tuple[str, ...], *, subgraphs: bool, base: Mapping[str, Any]
    ) -> None:
        """Translate the events of a run of `served` into `modes`; `base` is every message's metadata."""
        self.served = served
        self.modes = frozenset(modes)
        self.subgraphs = subgraphs
        self.merge = served.app.spec.merge
        self.messages = MessageParts(self.modes, base)
        self.state: Any = None  # the run's last committed state (for the values part of a pause)
        self.finished: RunFinished | None = None
        self.faces = FaceBook()  # a listener of the run: which runs are an entrypoint's or a task call's

    def parts(self, path: tuple[str, ...], event: Event) -> list[Part]:
        """The parts of one event (`path` is its run's namespace, `()` for the run itself)."""
        if isinstance(event, RunFinished) and not path:
            self.finished = event
        if self.faces and event.namespace in self.faces:
            shown = seen(event, self.faces)
            if shown is None:
                return []
            event, path = shown, tuple(shown.namespace.split(NS)) if shown.namespace else ()
        if path and not self.subgraphs:
            if isinstance(event, MessageChunk):
                return self.messages.chunk(event, wire_namespace(path), "")
            return []
        suffix = "|" + "|".join(wire_namespace(path)) if path else ""
        found = self._parts(path, event, suffix)
        if "events" in self.modes:
            found.extend(self.messages.events(event, self.served.name, suffix))
        return found

    def _parts(self, path: tuple[str, ...], event: Event, suffix: str) -> list[Part]:
        match event:
            case SuperstepCommitted():
                return self._values(path, event, suffix)
            case TaskFinished(final=True):
                return self._finished(path, event, suffix)
            case Interrupted() if not path:
                return self._paused(event)
            case Custom() if "custom" in self.modes:
                return [(f"custom{suffix}", jsonable(event.payload))]
            case MessageChunk():
                return self.messages.chunk(event, wire_namespace(path), suffix)
            case TaskScheduled():
                return self._detail("task", event, _task(event), suffix)
            case CheckpointSaved():
                return self._detail("checkpoint", event, self._checkpoint(event), suffix)
        return []

    def _values(self, path: tuple[str, ...], event: SuperstepCommitted, suffix: str) -> list[Part]:
        if not path:
            self.state = event.state
        if "values" not in self.modes:
            return []
        state = event.state
        return [(f"values{suffix}", wire_state(state, message_keys(self.merge, state)))]

    def _finished(self, path: tuple[str, ...], event: TaskFinished, suffix: str) -> list[Part]:
        result = event.result
        found: list[Part] = []
        if result.status == "ok":
            # a run with a face (an entrypoint's, a task call's) updates with the value it shows
            delta = result.state if event.namespace in self.faces else _delta(self.merge, result)
            keys = message_keys(self.merge, delta)
            if "updates" in self.modes:
                found.append((f"updates{suffix}", {result.vertex: wire_state(delta, keys)}))
            meta = node_metadata(event, wire_namespace(path))
            found.extend(self.messages.returned(delta, keys, meta, suffix))
        found.extend(self._detail("task_result", event, _task_result(event), suffix))
        return found

    def _paused(self, event: Interrupted) -> list[Part]:
        questions = interrupt_list(event.interrupts)
        found: list[Part] = []
        if "updates" in self.modes:
            found.append(("updates", {_INTERRUPT: questions}))
        if "values" in self.modes and questions:
            state = self.state
            shown = wire_state(state, message_keys(self.merge, state))
            if (
                "" in self.faces
            ):  # an entrypoint's state is its return value: the questions alone, as LangGraph's
                shown = {_INTERRUPT: questions}
            elif isinstance(shown, dict):
                shown = {**shown, _INTERRUPT: questions}
            found.append(("values", shown))
        return found

    def _detail(self, kind: str, event: Event, payload: dict[str, Any] | None, suffix: str) -> list[Part]:
        if payload is None:
            return []
        mode = "checkpoints" if kind == "checkpoint" else "tasks"
        found: list[Part] = []
        if mode in self.modes:
            found.append((f"{mode}{suffix}", payload))
        if "debug" in self.modes:
            stamp = dt.datetime.now(dt.UTC).isoformat()
            found.append(
                (f"debug{suffix}", {"type": kind, "step": event.step, "timestamp": stamp, "payload": payload})
            )
        return found

    def _checkpoint(self, event: CheckpointSaved) -> dict[str, Any] | None:
        if not {"checkpoints", "debug"} & self.modes:
            return None
        raw = checkpoint_payload(event)
        state = event.state
        return {
            "config": _config(raw["config"]),
            "parent_config": _config(raw["parent_config"]),
            "values": wire_state(state, message_keys(self.merge, state)),
            "metadata": {**raw["metadata"], "parents": {}},
            "next": raw["next"],
            "tasks": [
                {
                    "id": t["id"],
                    "name": t["name"],
                    "interrupts": interrupt_list(t["interrupts"]),
                    "state": None,
                }
                for t in raw["tasks"]
            ],
        }


def _config(config: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """Actorgraph's checkpoint config (`get_state(**config)`) as LangGraph's `{"configurable": ...}`."""
    if config is None:
        return None
    namespace = "|".join(wire_namespace(tuple(filter(None, str(config.get("namespace") or "").split("|")))))
    wanted = {
        "thread_id": config["thread_id"],
        "checkpoint_ns": namespace,
        "checkpoint_id": config["checkpoint_id"],
    }
    return {"configurable": wanted}


def _task(event: TaskScheduled) -> dict[str, Any]:
    payload = task_payload(event)
    return {**payload, "input": jsonable(payload["input"]), "triggers": list(payload["triggers"])}


def _task_result(event: TaskFinished) -> dict[str, Any]:
    payload = task_result_payload(event)
    error = payload["error"]
    return {
        "id": payload["id"],
        "name": payload["name"],
        "error": None if error is None else jsonable(error),
        "result": jsonable(payload["result"]) if payload["result"] is not None else {},
        "interrupts": interrupt_list(payload["interrupts"]),
    }


def _delta(merge: Any, result: Any) -> Any:
    """What a finished task changed: its new state against the state it was given."""
    node, inputs = result.node, result.inputs
    if node is not None and any(m.node == node for m in inputs):
        return {}  # it returned None, or its input unchanged
    if node is not None and node.parents:
        before = node.parents[0].state
    elif len(inputs) == 1:
        before = inputs[0].state
    else:
        return result.state
    return update_delta(merge, before, result.state)
