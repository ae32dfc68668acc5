"""Streaming a run as it goes, and the async adapter: both thin layers over `start`.

A stream subscribes a listener to the run's events and hands each wanted item
to the consumer through a queue; the consumer sees items as they happen, not at
the end. Leaving the loop early cancels the run.

A stream ends when the run's future is settled, not when an event says so: a
run that fails before it has a single event (a bad input, a START router that
fails, an unreadable thread), a cancelled run and a run whose graph is closed
all settle it, so every stream ends, with the run's error when it failed.
"""

from __future__ import annotations

import collections
import contextlib
import threading
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from typing import Any, Final

from actorgraph._actors.handle import RunHandle
from actorgraph._actors.reaper import collecting, later
from actorgraph._api.faces import call_update, seen
from actorgraph._api.payloads import checkpoint_payload, debug_item, task_payload, task_result_payload
from actorgraph._model.errors import ActorGraphError
from actorgraph._model.records import NS, VertexResult
from actorgraph._model.results import INTERRUPT_KEY
from actorgraph._model.spec import Face
from actorgraph.events import (
    CheckpointSaved,
    Custom,
    Event,
    Interrupted,
    MessageChunk,
    SuperstepCommitted,
    TaskFinished,
    TaskScheduled,
)

__all__ = ["MODES", "StreamSink", "astream_items", "await_run", "stream_items"]

MODES: Final = ("values", "updates", "events", "custom", "messages", "tasks", "checkpoints", "debug")

_KINDS: Final[dict[str, frozenset[type[Event]] | None]] = {
    "values": frozenset({SuperstepCommitted, Interrupted}),
    "updates": frozenset({TaskFinished, Interrupted}),
    "events": None,
    "custom": frozenset({Custom}),
    "messages": frozenset({MessageChunk}),
    "tasks": frozenset({TaskScheduled, TaskFinished}),
    "checkpoints": frozenset({CheckpointSaved}),
    "debug": frozenset({TaskScheduled, TaskFinished, CheckpointSaved}),
}

_SKIP: Final = object()
_CLOSED: Final = object()  # the run's future is settled: the consumer collects the result


def parse_modes(mode: str | Sequence[str]) -> tuple[tuple[str, ...], bool]:
    """The modes asked for, and whether items come as `(mode, item)` pairs."""
    modes = (mode,) if isinstance(mode, str) else tuple(mode)
    unknown = [m for m in modes if m not in MODES]
    if unknown or not modes:
        msg = f"unknown stream mode(s) {unknown or modes!r}; use one or a list of {', '.join(MODES)}"
        raise ActorGraphError(msg)
    return modes, not isinstance(mode, str)


def _item(mode: str, event: Event) -> Any:
    match mode, event:
        case "values", SuperstepCommitted(state=state):
            return state
        case "updates", TaskFinished(result=result, final=True) if result.status == "ok":
            return {result.task_id: result.state}
        case "updates" | "values", Interrupted():
            return _paused(mode, event)
        case "custom", Custom(payload=payload):
            return payload
        case "messages", MessageChunk(chunk=chunk):
            return (chunk, event.metadata())
        case "events", _:
            return event
        case "tasks" | "checkpoints" | "debug", _:
            return _detail(mode, event)
    return _SKIP


def _paused(mode: str, event: Interrupted) -> Any:
    """The item that says a run paused, as LangGraph's: `{"__interrupt__": (questions...)}`.

    In `updates`, every pause (a breakpoint's has no question: `()`); in `values`,
    the state with the questions beside it, for questions only (a mapping state
    gets the key added; another state is not a mapping, so the item holds the key alone).
    """
    questions = tuple(i for i in event.interrupts if i.kind == "interrupt")
    if mode == "updates":
        return {INTERRUPT_KEY: questions}
    if not questions:
        return _SKIP
    state = event.state
    return {**state, INTERRUPT_KEY: questions} if isinstance(state, Mapping) else {INTERRUPT_KEY: questions}


def _detail(mode: str, event: Event) -> Any:
    """An item of the modes that describe tasks and checkpoints (`debug` wraps both)."""
    match event:
        case TaskScheduled() if mode != "checkpoints":
            payload, kind = task_payload(event), "task"
        case TaskFinished(final=True) if mode != "checkpoints":
            payload, kind = task_result_payload(event), "task_result"
        case CheckpointSaved() if mode != "tasks":
            payload, kind = checkpoint_payload(event), "checkpoint"
        case _:
            return _SKIP
    return debug_item(kind, event, payload) if mode == "debug" else payload


class StreamSink:
    """A listener that turns a run's events into the items of the chosen modes.

    The events of subgraphs' runs make items only with `subgraphs`; every item
    is then tagged with its namespace as a tuple (`()` for the run itself,
    `("research@2~1a2b3c4d",)` for a subgraph's): `(namespace, item)`, or
    `(namespace, mode, item)` with a list of modes.

    The runs of a graph with a face (an entrypoint's, a task call's) are shown
    as LangGraph shows them (`faces.py`), in every mode but `events`.
    """

    def __init__(
        self, modes: tuple[str, ...], pairs: bool, put: Callable[[Any], None], *, subgraphs: bool = False
    ) -> None:
        self.modes = modes
        self.pairs = pairs
        self.put = put
        self.subgraphs = subgraphs
        self.single = modes[0] if len(modes) == 1 and not pairs and not subgraphs else ""
        self.paused_order = sorted(modes, key=lambda m: m != "updates")  # a pause: LangGraph's order
        self.faces: dict[str, Face] = {}  # by namespace: the runs of graphs with a face (`meet_face`)
        wanted = [_KINDS[m] for m in modes]
        self.kinds: frozenset[type[Event]] | None = (
            None if any(k is None for k in wanted) else frozenset[type[Event]]().union(*wanted)  # type: ignore[arg-type]
        )
        # one mode, no tags: the run hands a committed state, or a finished task's result, straight
        # here (`Emitter.committed`, `Emitter.finished`), building no event record for it
        self.direct: dict[type[Event], Callable[[Any], None]] = {}
        if self.single == "values":
            self.direct[SuperstepCommitted] = put
        elif self.single == "updates":
            self.direct[TaskFinished] = self._update

    def _update(self, result: VertexResult) -> None:
        """A task's result, taken directly: `{task_id: state}`, as `_item` makes of its `TaskFinished`."""
        self.put({result.task_id: result.state})

    def __call__(self, event: Event) -> None:
        if self.faces and event.namespace in self.faces:
            self._faced(event, self.faces[event.namespace].call)
            return
        namespace = event.namespace
        if namespace and not self.subgraphs:
            # a subgraph's message pieces stream without `subgraphs`, as LangGraph's do:
            # their metadata names the namespace
            if type(event) is MessageChunk and "messages" in self.modes:
                item = _item("messages", event)
                self.put(("messages", item) if self.pairs else item)
            return
        if self.single:  # the common case, a superstep's one item: no tuple, no loop
            item = _item(self.single, event)
            if item is not _SKIP:
                self.put(item)
            return
        for mode in self.paused_order if type(event) is Interrupted else self.modes:
            item = _item(mode, event)
            if item is not _SKIP:
                self._tagged(mode, item, namespace)

    def _tagged(self, mode: str, item: Any, namespace: str) -> None:
        if self.subgraphs:
            path = tuple(namespace.split(NS)) if namespace else ()
            self.put((path, mode, item) if self.pairs else (path, item))
        else:
            self.put((mode, item) if self.pairs else item)

    def meet_face(self, namespace: str, face: Face) -> None:
        """Note that the run `namespace` (as it starts) is of a graph with a face.

        The run's emitter asks before it reads `direct`: a top run with a face
        hands its events as records, which `_faced` shows as the caller sees them.
        """
        self.faces[namespace] = face
        if not namespace:
            self.direct = {}

    def _faced(self, event: Event, call: bool) -> None:
        """The items of an event of a run whose graph has a face: `events` as it is, the others as seen."""
        shown = seen(event, self.faces)
        for mode in self.paused_order if type(event) is Interrupted else self.modes:
            told = event if mode == "events" else shown
            if told is None:
                continue
            called = call and mode == "updates"  # a task call's update: `{task: result}`
            item = (call_update(told) or _SKIP) if called else _item(mode, told)
            if item is _SKIP:
                continue
            if not told.namespace or self.subgraphs:
                self._tagged(mode, item, told.namespace)
            elif mode == "messages":  # a subgraph's message pieces stream without `subgraphs`
                self.put(("messages", item) if self.pairs else item)


class Mailbox:
    """Items handed from the run's threads to one consumer, in batches.

    Waking the consumer for every item would cost a thread hand-off per
    superstep. So while items flow, the consumer is *hot*: it sleeps `BATCH`
    seconds at a time and takes whatever came, and no producer wakes it. When a
    period passes with nothing, it goes *cold*: it sleeps until a producer wakes
    it with the next item. A run that pauses or works slowly costs no periodic
    wake-ups; an item waits at most `BATCH` seconds. The end of the run always
    wakes the consumer, hot or cold: a stream ends when its run does, not up to
    `BATCH` later (on a short run that wait was a fifth of the stream's time).
    """

    BATCH: Final = 0.002

    def __init__(self, wake: Callable[[], None]) -> None:
        self.items: collections.deque[Any] = collections.deque()
        self.asleep = False
        self.closed = False  # the run ended: its last item is in
        self.wake = wake

    def put(self, item: Any) -> None:
        """Add an item (from any thread); wake the consumer if it sleeps."""
        self.items.append(item)
        if self.asleep:  # read after the append: a consumer going to sleep sees one or the other
            self.asleep = False
            self.wake()

    def close(self) -> None:
        """The run ended: add the end marker and wake the consumer, even a hot one."""
        self.closed = True
        self.items.append(_CLOSED)
        self.asleep = False
        self.wake()

    def going_to_sleep(self) -> bool:
        """Mark the consumer asleep until the next item; False (and awake) if one came in meanwhile."""
        self.asleep = True
        if self.items:
            self.asleep = False
            return False
        return True

    def taken(self, hot: bool) -> bool:
        """Whether the consumer stays hot after a sleep: it does while items keep coming."""
        return bool(self.items) or not hot


class Bell:
    """What a stream's consumer sleeps on until a producer rings: a lock that is held while nobody rang.

    `threading.Event` does the same in Python (a condition, a new lock for each
    wait); a hot consumer waits once per batch, so the bell is a lock, waited on
    and rung in C. Any thread may ring it, and ringing it twice is once.
    """

    __slots__ = ("_lock",)

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._lock.acquire()

    def ring(self) -> None:
        """Wake the consumer (now, or as soon as it next waits)."""
        with contextlib.suppress(RuntimeError):  # rung already, and not yet heard
            self._lock.release()

    def clear(self) -> None:
        """Forget a ring not yet heard."""
        self._lock.acquire(blocking=False)

    def wait(self, timeout: float = -1) -> None:
        """Sleep until the bell rings, or `timeout` seconds (-1: no limit)."""
        self._lock.acquire(timeout=timeout)


def _started(
    start: Callable[[StreamSink], RunHandle[Any]], sink: StreamSink, mailbox: Mailbox
) -> RunHandle[Any]:
    """Start the run with `sink`; the mailbox closes when the run's future is settled, however it ends.

    The run's last items are put before its future is settled (both on the
    coordinator's thread), so they reach the consumer before the close does.
    """
    handle = start(sink)
    handle.future.add_done_callback(lambda _: mailbox.close())
    return handle


def stream_items(
    start: Callable[[StreamSink], RunHandle[Any]], mode: str | Sequence[str], *, subgraphs: bool = False
) -> Iterator[Any]:
    """Start a run with a sink and yield its items; raise its error at the end."""
    modes, pairs = parse_modes(mode)
    ready = Bell()
    mailbox = Mailbox(ready.ring)
    handle = _started(start, StreamSink(modes, pairs, mailbox.put, subgraphs=subgraphs), mailbox)
    hot, items = False, mailbox.items
    try:
        while True:
            ready.clear()
            if hot:
                if not mailbox.closed:  # close() sets `ready`: the wait ends with the run
                    ready.wait(Mailbox.BATCH)
            elif mailbox.going_to_sleep():
                ready.wait()
            hot = mailbox.taken(hot)
            while items:
                item = items.popleft()
                if item is _CLOSED:
                    handle.result()
                    return
                yield item
    finally:
        if not handle.done():  # left early (a run that ended has nothing to cancel, and asking costs)
            if collecting():  # a stream left in a reference cycle: never cancel on the collecting thread
                later(handle.cancel)
            else:
                handle.cancel()  # a no-op if the run has just ended


async def await_run(handle: RunHandle[Any], timeout: float | None = None) -> Any:  # noqa: ASYNC109 - invoke's keyword
    """Await a run's result; cancelling the awaiting task cancels the run."""
    import asyncio  # noqa: PLC0415 - asyncio pulls in ssl (4 MiB): only async paths import it

    try:
        async with asyncio.timeout(timeout):
            return await asyncio.wrap_future(handle.future)
    except TimeoutError:
        raise handle.give_up(timeout) from None
    except asyncio.CancelledError:
        await handle.acancel()
        raise


async def astream_items(
    start: Callable[[StreamSink], RunHandle[Any]], mode: str | Sequence[str], *, subgraphs: bool = False
) -> AsyncIterator[Any]:
    """The async form of `stream_items`."""
    import asyncio  # noqa: PLC0415 - asyncio pulls in ssl (4 MiB): only async paths import it

    modes, pairs = parse_modes(mode)
    loop = asyncio.get_running_loop()
    ready = asyncio.Event()

    def wake() -> None:
        with contextlib.suppress(RuntimeError):  # the loop closed while the run went on
            loop.call_soon_threadsafe(ready.set)

    mailbox = Mailbox(wake)
    handle = _started(start, StreamSink(modes, pairs, mailbox.put, subgraphs=subgraphs), mailbox)
    hot = False
    try:
        while True:
            ready.clear()
            if hot:
                if not mailbox.closed:  # close() sets `ready`: the wait ends with the run
                    with contextlib.suppress(TimeoutError):
                        async with asyncio.timeout(Mailbox.BATCH):
                            await ready.wait()
            elif mailbox.going_to_sleep():
                await ready.wait()
            hot = mailbox.taken(hot)
            while mailbox.items:
                item = mailbox.items.popleft()
                if item is _CLOSED:
                    await asyncio.wrap_future(handle.future)
                    return
                yield item
    finally:
        await handle.acancel()  # a no-op once the run has ended
