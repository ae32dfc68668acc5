"""Groups of partitions: where a vertex's attempts go, and waiting for a restarted partition."""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Group", "Partition", "Profile"]

Profile = tuple[tuple[str, float], ...]  # a vertex's resources, sorted: the key of its group


@dataclass(slots=True)
class Partition:
    """One partition actor, the attempts it is running (the driver's count), and its recovery."""

    actor: Any
    node: str | None = None  # the node it is bound to (None: Ray's scheduler placed it)
    load: int = 0
    recovering: Future[None] | None = None  # set while the driver waits for it to answer again
    known: set[str] = field(default_factory=set)  # the vertices (code keys) it ran: sent without code


@dataclass(slots=True)
class Group:
    """The partitions that hold one resource profile; attempts go to the least loaded."""

    profile: Profile
    partitions: list[Partition]
    lock: threading.Lock = field(default_factory=threading.Lock)

    def pick(self) -> Partition:
        """The least-loaded partition (one that is not recovering, if any), counted as running one more."""
        with self.lock:
            best = min(self.partitions, key=lambda p: (p.recovering is not None, p.load))
            best.load += 1
            return best

    def recover(self, partition: Partition, revive: Callable[[Group, Partition], bool]) -> Future[None]:
        """A future done once `partition` answers again (restarted), or after the backend's wait.

        Attempts that died with it are reported when it is done, so their retries
        are not sent to a partition still restarting (which would fail them too).
        """
        with self.lock:
            if partition.recovering is not None:
                return partition.recovering
            future: Future[None] = Future()
            partition.recovering = future

        def wait() -> None:
            revive(self, partition)
            with self.lock:
                partition.recovering = None
                partition.known.clear()  # restarted: it knows no vertex
            future.set_result(None)

        threading.Thread(target=wait, name="actorgraph-ray-recover", daemon=True).start()
        return future

    def release(self, partition: Partition) -> None:
        """An attempt on `partition` ended."""
        with self.lock:
            partition.load -= 1
