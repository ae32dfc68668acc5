"""What a run is asked to do: its options (`RunRequest`), its breakpoints, and the answers claimed.

`RunRequest` is the one record of a run's options, checked once by the facade
(`actorgraph._api.request`) and read by every layer below; a subgraph's run gets
one made by its parent's run. `Claim` is an answer to a question as the engine
sees it once the store has given it: who answered, when, and the answer.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal, Protocol, TypeAlias

from actorgraph._model.policy import NodeCache
from actorgraph._model.records import Interrupt, Position, SuperstepState, VertexResult
from actorgraph._model.spec import ChildSpec
from actorgraph.events import Listener

__all__ = ["DURABILITY", "AtCheckpoint", "Breakpoints", "Claim", "Durability", "RunRequest"]

Durability: TypeAlias = Literal["sync", "step", "exit"]
DURABILITY: Final[tuple[str, ...]] = ("sync", "step", "exit")
"""The durability modes: every finished task stored at once, once per superstep, or when the run stops."""


@dataclass(frozen=True, slots=True)
class Breakpoints:
    """Where a run pauses by itself: before or after some vertices ("*" for all)."""

    before: frozenset[str] = frozenset()
    after: frozenset[str] = frozenset()

    def stops_before(self, vertex: str) -> bool:
        """True when the run pauses before `vertex` runs."""
        return vertex in self.before or "*" in self.before

    def stops_after(self, vertex: str) -> bool:
        """True when the run pauses after the superstep in which `vertex` ran."""
        return vertex in self.after or "*" in self.after

    def inside(self, vertex: str, child: ChildSpec | None = None) -> Breakpoints:
        """The breakpoints of the subgraph of `vertex` (`research/fetch` -> `fetch`).

        A compiled subgraph's own `interrupt_before/after` (in `child`) hold too.
        """
        prefix = f"{vertex}/"

        def within(names: frozenset[str], own: frozenset[str]) -> frozenset[str]:
            return own | {name.removeprefix(prefix) for name in names if name.startswith(prefix)}

        if child is None:
            return Breakpoints(within(self.before, frozenset()), within(self.after, frozenset()))
        return Breakpoints(within(self.before, child.before), within(self.after, child.after))


@dataclass(frozen=True, slots=True)
class RunRequest:
    """One run's options, checked, with the compiled graph's defaults filled in.

    Attributes:
        thread_id: the run's thread, or None (a run that records nothing).
        context: the `context=` object vertices read as `ctx.context`.
        recursion_limit: the most supersteps this run may run.
        checkpoint_id: replay or fork from this older checkpoint.
        durability: when the run's results are stored.
        breakpoints: where the run pauses by itself.
        discard_pending: a new input drops the thread's unfinished superstep.
        listeners: callables that receive the run's events.
        answered_by: who gives the run's answers, recorded with each claim ("": this
            process's `user@host (pid N)`, worked out when it claims an answer).
        namespace: a subgraph's run's namespace ("" for a top-level run).
        store: the `compile(store=...)` object vertices read as `ctx.store`, or None.
        cache: the `compile(cache=...)` node cache, or None.
        live: seconds a vertex that asked a question waits in its actor for the
            answer (`compile(live_interrupts=...)`), or None (the live path is off).
        enclosing: the graphs a run nested in a vertex's task runs inside (their
            runtimes, the invoking one first; empty for any other run): closing one
            of them frees the run's vertices that wait live (`_actors/live.py`).
    """

    thread_id: str | None
    context: Any
    recursion_limit: int
    checkpoint_id: str | None
    durability: Durability
    breakpoints: Breakpoints
    discard_pending: bool
    listeners: tuple[Listener, ...]
    answered_by: str = ""
    namespace: str = ""
    store: Any = None
    cache: NodeCache | None = None
    live: float | None = None
    enclosing: tuple[Any, ...] = ()


@dataclass(frozen=True, slots=True)
class Claim:
    """An answer claimed for a question, read back from the store.

    Attributes:
        interrupt_id: the question.
        vertex: the vertex that asked it.
        answered_by: who answered.
        answered_at: when (wall-clock seconds).
        value: the answer.
    """

    interrupt_id: str
    vertex: str
    answered_by: str
    answered_at: float
    value: Any


class AtCheckpoint(Protocol):
    """A thread at one of its checkpoints, as the engine reads it (the persistence layer's `Loaded`)."""

    @property
    def thread_id(self) -> str:
        """The thread."""
        ...

    @property
    def checkpoint_id(self) -> str:
        """The checkpoint."""
        ...

    @property
    def parent_id(self) -> str | None:
        """The checkpoint before it, if any."""
        ...

    @property
    def source(self) -> str:
        """How the checkpoint was made: "input", "loop", "update" or "fork"."""
        ...

    @property
    def origin(self) -> str:
        """The checkpoint that began this line of the thread's history (names its questions)."""
        ...

    @property
    def position(self) -> Position:
        """The committed position."""
        ...

    @property
    def pending(self) -> Mapping[str, VertexResult]:
        """The results of the superstep after it, by task id (possibly unfinished)."""
        ...

    @property
    def pauses(self) -> tuple[Interrupt, ...]:
        """`interrupt_after` breakpoints waiting to be passed."""
        ...

    @property
    def claims(self) -> Mapping[str, Claim]:
        """Answers claimed for its questions whose tasks have not run with them yet."""
        ...

    @property
    def owner(self) -> str | None:
        """The parent's task whose call of a stateful subgraph began this line (None elsewhere)."""
        ...

    @property
    def superstep(self) -> SuperstepState:
        """The pending results as the next superstep's."""
        ...

    @property
    def asked(self) -> tuple[Interrupt, ...]:
        """Every question of the pending superstep not yet run with an answer, claimed or not."""
        ...

    @property
    def interrupts(self) -> tuple[Interrupt, ...]:
        """The questions still waiting for an answer (claimed ones left out)."""
        ...
