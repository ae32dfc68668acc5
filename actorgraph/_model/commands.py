"""What a vertex may return besides a state: `Command` and `Send`, and the `Handoff` a subgraph hands up.

`Command` is generic in where it may go, as LangGraph's is: a vertex annotated
`-> Command[Literal["review", "publish"]]` declares its destinations, which the
builder reads from the annotation (see `_build/functions.py`).
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Final, Generic

__all__ = ["PARENT", "UNSET", "Command", "Handoff", "Send"]

PARENT: Final = "__parent__"
"""`Command(goto=..., graph=PARENT)` from a vertex of a subgraph routes in the parent graph."""

if TYPE_CHECKING:  # a default (PEP 696) keeps a bare `Command` typed; Python 3.11's TypeVar has none
    from typing_extensions import TypeVar

    N = TypeVar("N", default=Any)
else:
    from typing import TypeVar

    N = TypeVar("N")


class _Unset(enum.Enum):
    """Marks an argument that was not given (distinct from `None`); survives pickling."""

    UNSET = "UNSET"

    def __repr__(self) -> str:
        return "UNSET"

    def __bool__(self) -> bool:
        return False


UNSET: Final = _Unset.UNSET


@dataclass(frozen=True, slots=True)
class Send:
    """Run `vertex` as a task of its own with `state` (map-reduce, fan-out).

    Return it (or a list of them) from a router or in `Command(goto=...)`.
    """

    vertex: str
    state: Any


@dataclass(frozen=True, slots=True)
class Command(Generic[N]):
    """What a vertex may return instead of a state, or what `invoke` may take.

    Generic in its destinations, as LangGraph's: `-> Command[Literal["a", "b"]]` on
    a vertex function declares that it routes to `a` or `b` (`add_vertex` reads it
    as `destinations=("a", "b")`). `Command.PARENT` is `PARENT`.

    Attributes:
        update: an update (some keys, applied through the reducers) to the
            vertex's input; as `invoke` input, to the thread's state.
        goto: vertex name(s) or `Send`(s) to route to, besides the static edges.
        resume: the answer(s) to pending interrupts when passed to `invoke`.
        graph: `PARENT` to leave a subgraph: the subgraph's run ends, and its
            vertex in the parent graph applies `update` and routes to `goto`.
    """

    PARENT: ClassVar[str] = PARENT

    update: Any = None
    goto: str | Send | Sequence[str | Send] = ()
    resume: Any = UNSET
    graph: str | None = None


@dataclass(frozen=True, slots=True)
class Handoff:
    """A subgraph task's `Command(graph=PARENT)`: what its vertex in the parent applies and where it routes.

    Attributes:
        update: an update to the parent task's input state, or None.
        goto: the vertices of the parent graph to route to.
    """

    update: Any
    goto: tuple[str, ...]
