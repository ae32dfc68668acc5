"""The message modes of a run's stream (`messages-tuple`, `messages`) and its `events` mode.

`messages-tuple` parts are `[message chunk, metadata]`, sent as events named
`messages`: one for each piece a vertex streams (`ctx.stream_message`, an
agent's model), and one for each message a vertex adds to a conversation
without having streamed it (as LangGraph sends the messages of a node's output).
The metadata names the vertex as `langgraph_node`.

`messages` is LangGraph's older form: `messages/metadata` once per message,
`messages/partial` with the message so far after each piece, and
`messages/complete` when the vertex that made it finished.

`events` tells what can be told honestly from the engine's events, in the form
of LangChain's `astream_events` (v2): the run and each task as a chain starting
and ending, message pieces as `on_chat_model_stream`, custom payloads as
`on_custom_event`. There are no callbacks of models or tools inside a vertex.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from actorgraph.events import Custom, Event, MessageChunk, RunFinished, RunStarted, TaskFinished, TaskStarted
from actorgraph.server._wire import jsonable, wire_message

__all__ = ["MessageParts", "node_metadata"]

Part = tuple[str, Any]


def node_metadata(event: Any, namespace: tuple[str, ...]) -> dict[str, Any]:
    """Where a message was made, with LangGraph's keys: the vertex, the superstep, the task, the namespace."""
    vertex = getattr(event, "vertex", None) or getattr(getattr(event, "result", None), "vertex", "")
    task_id = getattr(event, "task_id", None) or getattr(getattr(event, "result", None), "task_id", "")
    checkpoint_ns = "|".join(namespace)
    return {
        "langgraph_node": vertex,
        "langgraph_step": event.step,
        "langgraph_task_id": task_id,
        "langgraph_triggers": [],
        "langgraph_path": ["__pregel_pull", vertex],
        "langgraph_checkpoint_ns": checkpoint_ns,
        "checkpoint_ns": checkpoint_ns,
    }


def _chunk(chunk: Any) -> Any:
    """A streamed piece on the wire: an assistant's piece is an `AIMessageChunk`."""
    shown = wire_message(chunk)
    if isinstance(shown, dict) and shown.get("type") == "ai":
        shown = {**shown, "type": "AIMessageChunk", "tool_call_chunks": []}
    return shown


class MessageParts:
    """The parts of the message modes and of `events`, for one run."""

    def __init__(self, modes: frozenset[str], base: Mapping[str, Any]) -> None:
        """Send the parts of `modes`; `base` is added to every message's metadata (run, thread, graph)."""
        self.tuples = "messages-tuple" in modes
        self.legacy = "messages" in modes
        self.base = dict(base)
        self.streamed: set[Any] = set()  # ids of messages sent piece by piece
        self.sofar: dict[Any, dict[str, Any]] = {}  # `messages` mode: id -> the message so far

    def chunk(self, event: MessageChunk, namespace: tuple[str, ...], suffix: str) -> list[Part]:
        """The parts of one streamed piece."""
        if not (self.tuples or self.legacy):
            return []
        shown = _chunk(event.chunk)
        key = shown.get("id") if isinstance(shown, dict) else None
        self.streamed.add(key)
        meta = {**self.base, **node_metadata(event, namespace)}
        found: list[Part] = []
        if self.tuples:
            found.append((f"messages{suffix}", [shown, meta]))
        if self.legacy and isinstance(shown, dict):
            found.extend(self._partial(key, shown, meta, suffix))
        return found

    def _partial(self, key: Any, shown: dict[str, Any], meta: dict[str, Any], suffix: str) -> list[Part]:
        found: list[Part] = []
        before = self.sofar.get(key)
        if before is None:
            found.append((f"messages/metadata{suffix}", {str(key): {"metadata": meta}}))
            self.sofar[key] = {**shown, "type": "ai"}
        elif isinstance(before.get("content"), str) and isinstance(shown.get("content"), str):
            before["content"] += shown["content"]
        found.append((f"messages/partial{suffix}", [self.sofar[key]]))
        return found

    def returned(self, delta: Any, keys: frozenset[str], meta: dict[str, Any], suffix: str) -> list[Part]:
        """The parts of the messages a finished task added (not again as tuples those it streamed)."""
        if not (self.tuples or self.legacy) or not keys or not isinstance(delta, Mapping):
            return []
        found: list[Part] = []
        full = {**self.base, **meta}
        for key in keys:
            for message in delta.get(key) or ():
                shown = wire_message(message)
                ident = shown.get("id") if isinstance(shown, dict) else None
                if self.tuples and ident not in self.streamed:
                    found.append((f"messages{suffix}", [shown, full]))
                if self.legacy:
                    if ident not in self.sofar:
                        found.append((f"messages/metadata{suffix}", {str(ident): {"metadata": full}}))
                    found.append((f"messages/complete{suffix}", [shown]))
        return found

    def events(self, event: Event, graph: str, suffix: str) -> list[Part]:
        """The `events` part of one event, if it makes one."""
        meta = {**self.base, "langgraph_step": event.step}
        match event:
            case RunStarted():
                kind, name, data = "on_chain_start", graph, {}
            case RunFinished():
                kind, name, data = "on_chain_end", graph, {"output": jsonable(event.state)}
            case TaskStarted():
                kind, name, data = "on_chain_start", event.vertex, {}
                meta["langgraph_node"] = event.vertex
            case TaskFinished(final=True):
                kind, name = "on_chain_end", event.result.vertex
                data = {"output": jsonable(event.result.state)}
                meta["langgraph_node"] = event.result.vertex
            case MessageChunk():
                kind, name, data = "on_chat_model_stream", event.vertex, {"chunk": _chunk(event.chunk)}
                meta["langgraph_node"] = event.vertex
            case Custom():
                kind, name, data = "on_custom_event", event.vertex, jsonable(event.payload)
            case _:
                return []
        body = {
            "event": kind,
            "name": name,
            "run_id": event.run_id,
            "tags": [],
            "metadata": meta,
            "data": data,
        }
        return [(f"events{suffix}", body)]
