"""The stored form: records turned into plain values, and back.

A checkpoint record holds the run's position (the messages in flight, join
buffers, END deliveries, private values) with every state replaced by the id
of its lineage version, plus the lineage structure (each version's parents and
depth). The states themselves are blobs, stored once per version id (as a manifest
of content-addressed parts, see `_parts.py`) and shared by every checkpoint
and task result that refers to them. A task result
(`VertexResult`) is stored the same way.

Every piece of bytes is bound to where it belongs (`aad`): the thread and the
checkpoint, task or version id, so an authenticating serializer refuses bytes
moved elsewhere.
"""

from __future__ import annotations

import itertools
import os
import threading
import time
from collections.abc import Iterable, Mapping
from typing import Any

from actorgraph._model.errors import SerializationError
from actorgraph._model.records import ErrorInfo, Handoff, Interrupt, Message, Node, Position, VertexResult

__all__ = [
    "FORMAT",
    "aad",
    "blob_aad",
    "build_nodes",
    "decode_position",
    "decode_result",
    "encode_position",
    "encode_result",
    "new_checkpoint_id",
    "reachable",
    "structure_of",
    "whole_versions",
]

FORMAT = 2
"""The format of stored records: 2 stores each version as a manifest and parts (`_parts.py`);
format 1 stored each version whole. Both are read; a version stored whole keeps a marker
(a third item in its lineage entry) in later records."""

_id_lock = threading.Lock()
_last_id = [0]
_process = os.urandom(3).hex()
_counter = itertools.count()


def new_checkpoint_id() -> str:
    """A checkpoint id: sorts by creation time, unique across processes.

    26 hex digits of nanoseconds (strictly increasing within the process),
    then a per-process random tag.
    """
    with _id_lock:
        now = max(time.time_ns(), _last_id[0] + 1)
        _last_id[0] = now
    return f"{now:020x}-{_process}{next(_counter) % 4096:03x}"


def aad(thread_id: str, key: str) -> bytes:
    """The associated data binding stored bytes to their thread and key."""
    return f"actorgraph\x00{thread_id}\x00{key}".encode()


def blob_aad(thread_id: str, node_id: str) -> bytes:
    """The associated data of a state version's blob."""
    return aad(thread_id, f"blob:{node_id}")


# -- lineage ---------------------------------------------------------------------------


def reachable(roots: Iterable[Node]) -> dict[str, Node]:
    """Every version reachable from `roots` (themselves included), by id."""
    out: dict[str, Node] = {}
    stack = list(roots)
    while stack:
        node = stack.pop()
        if node.id not in out:
            out[node.id] = node
            stack.extend(node.parents)
    return out


def structure_of(nodes: Mapping[str, Node], whole: Iterable[str] = ()) -> dict[str, list[Any]]:
    """The stored form of a lineage: version id -> `[parent ids, depth]` (and `1` if stored whole)."""
    out = {key: [[p.id for p in node.parents], node.depth] for key, node in nodes.items()}
    for key in whole:
        out[key].append(1)
    return out


def whole_versions(structure: Mapping[str, list[Any]], record_format: int) -> dict[str, bool]:
    """Which versions of a stored lineage are stored whole (format 1) rather than as manifests."""
    if record_format == 1:
        return dict.fromkeys(structure, True)
    return {key: len(entry) > 2 for key, entry in structure.items()}  # noqa: PLR2004 - the marker


def build_nodes(
    structure: Mapping[str, list[Any]], states: Mapping[str, Any], nodes: dict[str, Node]
) -> dict[str, Node]:
    """Rebuild versions from their structure and states, adding them to `nodes`.

    Parents always have a smaller depth, so building shallowest first finds every
    parent already built (or in `nodes` from an earlier call).
    """
    for node_id in sorted(structure, key=lambda k: structure[k][1]):
        if node_id in nodes:
            continue
        parent_ids, depth = structure[node_id][:2]
        try:
            parents = tuple(nodes[p] for p in parent_ids)
            state = states[node_id]
        except KeyError as missing:
            msg = f"the stored lineage is incomplete: version {missing} is missing; the checkpoint is damaged"
            raise SerializationError(msg) from None
        nodes[node_id] = Node(node_id, state, parents, depth)
    return nodes


# -- messages and positions ---------------------------------------------------------------


def _message(m: Message) -> list[Any]:
    return [m.target, m.node.id, m.sender, m.send, m.step, m.join]


def _message_back(rec: list[Any], nodes: Mapping[str, Node]) -> Message:
    target, node_id, sender, send, step, join = rec
    return Message(target, nodes[node_id], sender, send, step, join)


def encode_position(pos: Position) -> dict[str, Any]:
    """A position as plain values (states referred to by version id)."""
    return {
        "step": pos.step,
        "inbox": [_message(m) for m in pos.inbox],
        "joins": {k: [_message(m) for m in v] for k, v in pos.joins.items()},
        "finished": [_message(m) for m in pos.finished],
        "values": dict(pos.values),
    }


def decode_position(rec: Mapping[str, Any], nodes: Mapping[str, Node]) -> Position:
    """The position stored by `encode_position`."""
    return Position(
        rec["step"],
        tuple(_message_back(m, nodes) for m in rec["inbox"]),
        {k: tuple(_message_back(m, nodes) for m in v) for k, v in rec["joins"].items()},
        tuple(_message_back(m, nodes) for m in rec["finished"]),
        dict(rec["values"]),
    )


# -- task results ---------------------------------------------------------------------------


def _interrupt(i: Interrupt | None) -> list[Any] | None:
    return None if i is None else [i.id, i.vertex, i.value, i.task_id, i.kind]


def _interrupt_back(rec: list[Any] | None) -> Interrupt | None:
    return None if rec is None else Interrupt(*rec)


def _error(e: ErrorInfo | None) -> list[Any] | None:
    return None if e is None else [e.type, e.message, e.traceback, e.retryable]


def _error_back(rec: list[Any] | None) -> ErrorInfo | None:
    if rec is None:
        return None
    kind, message, traceback, retryable = rec
    return ErrorInfo(kind, message, traceback, None, retryable)


def encode_result(r: VertexResult) -> dict[str, Any]:
    """A task result as plain values (states referred to by version id)."""
    return {
        "task_id": r.task_id,
        "vertex": r.vertex,
        "status": r.status,
        "node": r.node.id if r.node is not None else None,
        "outbox": [_message(m) for m in r.outbox],
        "error": _error(r.error),
        "interrupt": _interrupt(r.interrupt),
        "attempts": r.attempts,
        "inputs": [_message(m) for m in r.inputs],
        "value": r.value,
        "resumes": list(r.resumes),
        "started_at": r.started_at,
        "finished_at": r.finished_at,
        "handler": r.handler,
        **({"nested": [_interrupt(i) for i in r.nested]} if r.nested else {}),
        **({"handoff": [r.handoff.update, list(r.handoff.goto)]} if r.handoff is not None else {}),
        **({"answers": dict(r.answers)} if r.answers else {}),
        **({"cached": True} if r.cached else {}),
    }


def result_nodes(r: VertexResult) -> list[Node]:
    """The versions a task result refers to."""
    nodes = [m.node for m in r.inputs]
    nodes.extend(m.node for m in r.outbox)
    if r.node is not None:
        nodes.append(r.node)
    return nodes


def decode_result(rec: Mapping[str, Any], nodes: Mapping[str, Node]) -> VertexResult:
    """The task result stored by `encode_result`."""
    node = nodes[rec["node"]] if rec["node"] is not None else None
    return VertexResult(
        rec["task_id"],
        rec["vertex"],
        rec["status"],
        state=node.state if node is not None else None,
        outbox=tuple(_message_back(m, nodes) for m in rec["outbox"]),
        error=_error_back(rec["error"]),
        interrupt=_interrupt_back(rec["interrupt"]),
        attempts=rec["attempts"],
        inputs=tuple(_message_back(m, nodes) for m in rec["inputs"]),
        value=rec["value"],
        resumes=tuple(rec["resumes"]),
        started_at=rec["started_at"],
        finished_at=rec["finished_at"],
        handler=rec.get("handler", False),
        nested=tuple(i for i in map(_interrupt_back, rec.get("nested", ())) if i is not None),
        handoff=Handoff(rec["handoff"][0], tuple(rec["handoff"][1])) if "handoff" in rec else None,
        answers=rec.get("answers"),
        cached=rec.get("cached", False),
        node=node,
    )


def encode_interrupts(interrupts: Iterable[Interrupt]) -> list[Any]:
    """Pending breakpoint interrupts as plain values."""
    return [_interrupt(i) for i in interrupts]


def decode_interrupts(rec: Iterable[Any]) -> tuple[Interrupt, ...]:
    """The interrupts stored by `encode_interrupts`."""
    return tuple(i for i in (_interrupt_back(r) for r in rec) if i is not None)
