"""Live interrupts on vertex actors: a vertex waits in its actor for its answer, then goes on.

When a vertex calls `interrupt()` on the live path (`_engine/live.py`), its
actor (a `Turn`) leaves the vertex's pool (it no longer counts toward the
vertex's `concurrency`), takes a *seat* named by the question's id, reports
the task's `interrupt` outcome to the run (which pauses as it always did), and
waits for up to `compile(live_interrupts=...)`.

A resumed run's order for that task comes to the same pool. If a seat waits
for the question that order answers, and the answer was claimed in this
process (`note_claimed` marks it as the claim is made; the claim is stored,
exactly once, before any order runs), the order is handed to the seat instead
of an actor (`adopt`): the vertex goes on from the line that asked, as that
order's attempt, and reports to that run. Anything else (no seat, an answer claimed elsewhere, the wait
over, the graph closed, the state updated before the answer) leaves the order
to run the vertex again: the fallback path. A seat whose question is answered
without it being taken, or whose answer another process stored (a watcher
thread looks about once a second), is released: its vertex unwinds and
reports nothing more.

A seat is released too when its graph closes, or a graph its run is nested in
(the entrypoint whose `@task` call asked, the graph whose vertex invoked it):
a task's graph outlives its entrypoint (it serves every entrypoint of the
process), and its vertex would otherwise hold its actor for the whole wait
after the run that could answer it is gone. A seat taken as its graph closes
sees it closed at once (`LiveTurn.wait`), so none outlasts the close.
"""

from __future__ import annotations

import functools
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from actorgraph._actors.attempt_spans import attempt_paused, attempt_resumed
from actorgraph._engine.context import interrupt_id
from actorgraph._engine.live import Resumed
from actorgraph._model.records import Interrupt, Task, VertexResult
from actorgraph.events import TaskStarted

if TYPE_CHECKING:
    from actorgraph._actors.messages import Order

__all__ = ["LiveTurn", "adopt", "claim_lost", "eligible", "note_claimed", "release_all", "waiting"]

_LOCK = threading.Lock()
_SEATS: dict[str, _Seat] = {}  # question id -> the vertex waiting for its answer, in this process


class Closing(Protocol):
    """A vertex pool, or a graph's runtime: what a seat ends with."""

    @property
    def closed(self) -> bool:
        """True once it was closed."""
        ...


class _Seat:
    """A vertex waiting for the answer to one question."""

    __slots__ = ("adopter", "claimed", "enclosing", "event", "inputs", "owner", "state", "store", "thread_id")

    def __init__(self, owner: Closing, order: Order) -> None:
        self.owner = owner  # the vertex pool whose actor waits
        self.enclosing: tuple[Closing, ...] = order.env.enclosing  # the graphs its run is nested in
        self.inputs = _inputs(order.task)  # the versions its vertex was given
        nest = order.env.nest
        self.store = nest.checkpointer if nest is not None else None  # where another process may answer
        self.thread_id = order.env.thread_id
        self.event = threading.Event()
        self.state = "waiting"  # -> "taken" (an order took it over) or "released"
        self.claimed: float | None = None  # when this process began to claim its answer
        self.adopter: Order | None = None

    def within(self, owner: object) -> bool:
        """Whether closing `owner` (a vertex pool, a graph's runtime) ends this seat."""
        return self.owner is owner or any(graph is owner for graph in self.enclosing)

    def orphaned(self) -> bool:
        """Its graph, or one its run is nested in, was closed: no answer can come to it here."""
        return self.owner.closed or any(graph.closed for graph in self.enclosing)


def eligible(order: Order) -> bool:
    """Whether `order`'s vertex may wait in its actor for its answers."""
    return order.env.live is not None and order.failure is None and order.child is None


def note_claimed(ids: list[str]) -> None:
    """This process is claiming answers to these questions: their seats may be taken once it has.

    Called before the claim is stored, so the watcher never mistakes this
    process's answer for another's; `claim_lost` undoes it.
    """
    with _LOCK:
        for question in ids:
            seat = _SEATS.get(question)
            if seat is not None:
                seat.claimed = time.monotonic()


def claim_lost(ids: list[str]) -> None:
    """This process's claim of these answers failed (another answer won): their vertices unwind."""
    _release(lambda question, _: question in ids)


def _release(which: Callable[[str, _Seat], bool]) -> None:
    with _LOCK:
        seats = [(q, s) for q, s in _SEATS.items() if which(q, s)]
        for question, seat in seats:
            del _SEATS[question]
            seat.state = "released"
    for _, seat in seats:
        seat.event.set()


def adopt(owner: object, order: Order) -> bool:
    """Hand `order` to the vertex waiting for the answer it carries, if one waits in `owner`.

    Returns:
        True when a waiting vertex took the order over (no actor runs it).
    """
    task, env = order.task, order.env
    if not task.resumes or not eligible(order):
        return False
    question = interrupt_id(env.thread_id, env.line, task.step, task.id, len(task.resumes) - 1)
    with _LOCK:
        seat = _SEATS.get(question)
        if seat is None or seat.state != "waiting":
            return False
        del _SEATS[question]  # answered now: taken over here, or never (it runs again elsewhere)
        # not claimed here, another graph's pool, or its state changed meanwhile: the vertex runs again
        taken = seat.claimed is not None and seat.owner is owner and seat.inputs == _inputs(task)
        seat.state = "taken" if taken else "released"
        seat.adopter = order if taken else None
    seat.event.set()
    return taken


def _inputs(task: Task) -> tuple[str, ...]:
    """The versions a task is given, by lineage id."""
    return tuple(message.node.id for message in task.inputs)


def release_all(owner: object) -> None:
    """Free every vertex waiting in `owner` (its graph is closing): each unwinds at once.

    `owner` is a vertex pool, or a graph's runtime: then the vertices waiting in
    runs nested in its tasks (its `@task` calls, the graphs its vertices invoked)
    unwind, though their own graphs stay open. Call it once `owner` says it is
    closed (a seat taken after that releases itself).
    """
    _release(lambda _, seat: seat.within(owner))
    _WAKE.set()


# -- the watcher: answers claimed by other processes --------------------------------

POLL = 1.0  # seconds between looks for answers another process claimed
CLAIM_GRACE = 30.0  # seconds a seat whose answer this process claimed waits for its order
_WAKE = threading.Event()
_watcher: threading.Thread | None = None


def _watch(seat: _Seat) -> None:
    """Make sure a thread looks for answers to `seat` claimed elsewhere (a store other processes share)."""
    global _watcher  # noqa: PLW0603 - one watcher per process, started on demand
    if not _shared(seat):
        return  # no other process answers there
    with _LOCK:
        if _watcher is not None and _watcher.is_alive():
            return
        _watcher = threading.Thread(target=_watching, name="actorgraph-live-watcher", daemon=True)
        _watcher.start()


def _watching() -> None:
    """Release the seats whose answers were claimed by another process; end when none waits."""
    global _watcher  # noqa: PLW0603 - it lets go of itself
    while True:
        _WAKE.wait(POLL)
        _WAKE.clear()
        with _LOCK:
            late = time.monotonic() - CLAIM_GRACE  # claimed here, yet no order came: look in the store
            watched = [(q, s) for q, s in _SEATS.items() if _shared(s) and _unclaimed(s, late)]
            if not any(_shared(s) for s in _SEATS.values()):
                _watcher = None
                return
        gone = frozenset(question for question, seat in watched if _answered_elsewhere(question, seat))
        if gone:
            _release(functools.partial(_unclaimed_among, gone))


def _shared(seat: _Seat) -> bool:
    """Whether other processes may answer `seat`'s question (its store is not this process's memory)."""
    if seat.store is None:
        return False
    from actorgraph.checkpoint.memory import MemoryCheckpointer  # noqa: PLC0415 - a run with no store needs none

    return not isinstance(seat.store, MemoryCheckpointer)


def _unclaimed(seat: _Seat, late: float) -> bool:
    """Not claimed by this process, or claimed before `late` and never taken over."""
    return seat.claimed is None or seat.claimed <= late


def _unclaimed_among(questions: frozenset[str], question: str, seat: _Seat) -> bool:
    return question in questions and _unclaimed(seat, time.monotonic() - CLAIM_GRACE)


def _answered_elsewhere(question: str, seat: _Seat) -> bool:
    """Whether the store holds an answer to `question` (read errors: ask again next time)."""
    store, thread_id = seat.store, seat.thread_id
    if store is None or thread_id is None:
        return False
    try:
        return bool(store.get_answers(thread_id, [question]))
    except Exception:  # noqa: BLE001 - a store that cannot be read now is read again later
        return False


def waiting() -> int:
    """How many vertices of this process wait for an answer."""
    with _LOCK:
        return len(_SEATS)


class LiveTurn:
    """One attempt's actor, waiting for its vertex's answers (`_engine/live.Turn`).

    Attributes:
        order: the order the attempt's outcome goes to (the resumed run's, once taken over).
        released: the wait ended without an order: nothing more is reported.
    """

    __slots__ = ("_actor", "_tell", "order", "released")

    def __init__(self, actor: Any, order: Order, tell: Callable[[Order, VertexResult], None]) -> None:
        """A turn of `actor` (a `_VertexWork`) running `order`; `tell` reports an outcome to a run."""
        self._actor = actor
        self._tell = tell
        self.order = order
        self.released = False

    def wait(self, pending: Interrupt, paused: VertexResult) -> Resumed | None:
        """Leave the pool, take a seat, report `paused`, and wait for an order that takes it over."""
        actor, order = self._actor, self.order
        pool = actor.pool
        seat = _Seat(pool, order)
        with _LOCK:
            _SEATS[pending.id] = seat  # before the report: an answer may come right after it
        if seat.orphaned():  # closed meanwhile, after its seats were released: this one goes too
            _release(lambda _, other: other is seat)
        _watch(seat)
        pool.leave(order, actor)
        attempt_paused(paused)  # its span ends with the question
        self._tell(order, paused)
        if pool.dispatcher is not None:  # a scheduler thread: what it would run next goes elsewhere
            pool.dispatcher.blocking()
        seat.event.wait(order.env.live)
        with _LOCK:
            if seat.state == "waiting":
                seat.state = "released"
                if _SEATS.get(pending.id) is seat:
                    del _SEATS[pending.id]
        if seat.state != "taken" or seat.adopter is None:
            self.released = True
            return None
        taken = self.order = seat.adopter
        pool.rejoin(taken, actor)
        attempt_resumed(taken)  # the rest of the vertex is the resumed run's attempt, in a span of its own
        task = taken.task
        if taken.env.listen is not None:
            taken.env.listen(
                TaskStarted(taken.run_id, taken.env.thread_id, task.step, task.id, task.vertex, taken.attempt)
            )
        return Resumed(task.resumes[-1], task, taken.attempt, taken.env)
