"""Where a stateful subgraph's new call starts: its state as of the calling task's place in history.

A stateful subgraph (`compile(checkpointer=True)`, a vertex or a graph invoked
in one) keeps one thread per thread of its parent. Each of its checkpoints
names its owner, the parent's task whose call made it (`task@step~line`,
`#k` added for an invocation: `subgraphs.namespace_of`). A new call starts
from the newest checkpoint made by a call in the calling task's past: a call
of a superstep committed on the chain of the parent's checkpoints that leads
to the task. On a thread that only moves forward that is the thread's head;
after the parent is replayed or forked from an older checkpoint, it is the
state the subgraph had at that checkpoint (LangGraph's `checkpoint_map`), so a
replay ends as the run it replays did, and calls made on an abandoned line
never leak into the new one.

The past is read back a line at a time, as far as needed (a line of the
parent's history is begun by a new input or a fork, and named by its first
checkpoint: `Recorder.origin`): the task's own line up to the superstep
before it, then the line it branched from up to the branch point, and so on.
Pure: the store is read through the function it is given.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["LineRow", "Past", "PastLines", "line_hash", "place"]

LineRow = tuple[str | None, str, int]
"""What the past needs of a parent's checkpoint: (its parent's id, its line's origin, its superstep)."""


def line_hash(origin: str) -> str:
    """The short name of a line of history in the names of subgraph runs and owners (8 hex digits)."""
    import hashlib  # noqa: PLC0415 - it loads OpenSSL (3 MiB): on first use, not at `import actorgraph`

    return hashlib.blake2b(origin.encode(), digest_size=4).hexdigest()


def place(owner: str) -> tuple[int, str] | None:
    """The superstep and the line (`line_hash`) of a call named `owner`; None for any other text."""
    call, _, number = owner.rpartition("#")
    if not (call and number.isdigit()):
        call = owner
    head, _, line = call.rpartition("~")
    _, _, step = head.rpartition("@")
    if not (step.isdigit() and len(line) == 8 and all(c in "0123456789abcdef" for c in line)):  # noqa: PLR2004 - line_hash's digits
        return None
    return int(step), line


@dataclass(frozen=True, slots=True)
class Past:
    """Where a stateful subgraph's calling task stands in its parent's history.

    Attributes:
        thread_id: the parent's thread.
        origin: the line the parent's run is on (the id of the line's first checkpoint).
        step: the superstep the calling task runs in.
        parent: the checkpoint the parent's run writes after (`Recorder.parent`): the
            one its line branched from while the line's first checkpoint is not
            written yet (a run that began the line and has written nothing since).
        task: the calling task's own name (`namespace_of`): its earlier invocations
            (`task#k`) are past too, as a vertex may invoke a stateful graph twice.
    """

    thread_id: str
    origin: str
    step: int
    parent: str | None = None
    task: str = ""


class PastLines:
    """The lines of a task's past, read back as needed: which calls were made in it."""

    def __init__(self, past: Past, read: Callable[[str], LineRow | None]) -> None:
        """The past of `past`'s task; `read(checkpoint_id)` reads a checkpoint of the parent's thread."""
        self._read = read
        self._task = f"{past.task}#" if past.task else None
        self._last = {line_hash(past.origin): past.step - 1}  # line -> its last superstep in the past
        self._line: str | None = past.origin  # the line whose branch point is read next
        self._unwritten = past.parent  # its branch point if its first checkpoint is not stored

    def holds(self, owner: str | None) -> bool:
        """Whether the call named `owner` was made in the past (a checkpoint without one: assumed so)."""
        at = place(owner) if owner is not None else None
        if at is None or (self._task is not None and owner is not None and owner.startswith(self._task)):
            return True
        step, line = at
        while line not in self._last:
            if not self._back():
                return False
        return step <= self._last[line]

    def _back(self) -> bool:
        """Read the line the last one read branched from; False when there is none."""
        if self._line is None:
            return False
        first = self._read(self._line)
        branch = first[0] if first is not None else self._unwritten
        point = self._read(branch) if branch is not None else None
        if point is None:
            self._line = None
            return False
        _, origin, step = point
        self._last.setdefault(line_hash(origin), step)
        self._line, self._unwritten = origin, None
        return True
