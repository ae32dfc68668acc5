"""States on their way to Ray workers: pickled once per version, large ones put in the object store once."""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any

from actorgraph._model.errors import SerializationError
from actorgraph._model.records import Node
from actorgraph.ray._wire import dumps

__all__ = ["StateCache"]

_KEPT = 256  # versions remembered: a superstep's fan-out sends one version to many tasks


class StateCache:
    """Encodes a task's input version for the wire, remembering recent versions.

    Each version is pickled once, however many tasks it is sent to (a fan-out
    sends one version to every branch); one larger than `large` bytes is put
    in Ray's object store once and the tasks get its reference.
    """

    def __init__(self, ray: Any, *, large: int, most: int) -> None:
        """Args: the `ray` module, the size from which states go by reference, the largest state allowed."""
        self.ray = ray
        self.large = large
        self.most = most
        self._lock = threading.Lock()
        self._kept: OrderedDict[int, tuple[Node, Any]] = OrderedDict()
        self.pickled = 0  # versions pickled, and of them put in the object store (for tests and tuning)
        self.stored = 0

    def encode(self, node: Node, vertex: str, given: Any) -> Any:
        """What the vertex is `given` of `node`'s state, as bytes or an object reference to them.

        The whole state (`given is node.state`) is remembered by version; a vertex's
        declared inputs are pickled for it alone.

        Raises:
            SerializationError: the state cannot be pickled, or is larger than the
                object store can hold (naming the vertex and the size).
        """
        key = id(node)
        whole = given is node.state
        with self._lock:
            kept = self._kept.get(key) if whole else None
            if kept is not None and kept[0] is node:
                self._kept.move_to_end(key)
                return kept[1]
        try:
            blob = dumps(given)
        except Exception as exc:
            msg = (
                f"the state given to vertex {vertex!r} cannot be pickled to travel to a Ray worker "
                f"({type(exc).__name__}: {exc}); keep states to plain data on the Ray backend"
            )
            raise SerializationError(msg) from exc
        if len(blob) > self.most:
            msg = (
                f"the state given to vertex {vertex!r} is {len(blob):,} bytes pickled, more than the "
                f"{self.most:,} bytes the Ray object store can hold (RayBackend(max_state_bytes=...), "
                "or a larger object_store_memory); keep large data outside the state and pass references"
            )
            raise SerializationError(msg)
        encoded = self.ray.put(blob) if len(blob) > self.large else blob
        with self._lock:
            self.pickled += 1
            self.stored += encoded is not blob
            if not whole:
                return encoded
            self._kept[key] = (node, encoded)
            while len(self._kept) > _KEPT:
                self._kept.popitem(last=False)
        return encoded
