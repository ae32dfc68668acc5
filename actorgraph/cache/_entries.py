"""A node cache's entries as plain data, and reading one back: every part checked, as stored rows are.

An entry is `{"format": 1, "returned": [...], "value": ...}`: what the vertex
returned as a tagged list (a state, a `Send`, or a `Command` with its `goto`
spelled out) and its private value. Its bytes come from a file that other
processes, or people, may have changed: `outcome_of` says what is wrong with
an entry (`Damaged`) rather than failing on it with a bare Python error.
"""

from __future__ import annotations

from typing import Any

from actorgraph._model.policy import CachedOutcome
from actorgraph._model.records import Command, Send

__all__ = ["FORMAT", "Damaged", "outcome_of", "plain_entry"]

FORMAT = 1
"""The format of the entries this version writes and reads."""

_FIELDS = frozenset({"format", "returned", "value"})
_SEND_PARTS = 3  # ["send", vertex, state]


class Damaged(Exception):  # noqa: N818 - a finding about an entry, turned into a warning by the cache
    """What is wrong with an entry (its message): the cache counts it as a miss."""


def plain_entry(outcome: CachedOutcome) -> dict[str, Any]:
    """The entry of an outcome, as plain data for the serializer."""
    return {"format": FORMAT, "returned": _plain_returned(outcome.returned), "value": outcome.value}


def outcome_of(entry: Any) -> CachedOutcome:
    """The outcome an entry holds.

    Raises:
        Damaged: the entry is not one this version wrote (its message says what is wrong).
    """
    if type(entry) is not dict:
        raise Damaged(f"it holds a {type(entry).__name__}, not an entry")
    if entry.keys() != _FIELDS:
        found = ", ".join(sorted(map(repr, entry)))
        raise Damaged(f"it holds the fields {found or 'none'}, not format, returned and value")
    if type(entry["format"]) is not int or entry["format"] != FORMAT:
        raise Damaged(f"it is in format {entry['format']!r}; this version reads format {FORMAT}")
    return CachedOutcome(_returned(entry["returned"]), entry["value"])


def _plain_returned(returned: Any) -> list[Any]:
    """What a vertex returned, as plain data: a state, a `Command` or a `Send`."""
    if isinstance(returned, Command):
        goto: list[str | Send] = (
            [returned.goto] if isinstance(returned.goto, (str, Send)) else list(returned.goto)
        )
        single = isinstance(returned.goto, (str, Send))
        return ["command", returned.update, [_plain_target(g) for g in goto], single, returned.graph]
    if isinstance(returned, Send):
        return ["send", returned.vertex, returned.state]
    return ["state", returned]


def _plain_target(target: str | Send) -> Any:
    return ["send", target.vertex, target.state] if isinstance(target, Send) else target


def _returned(plain: Any) -> Any:
    """What `_plain_returned` made, back as the vertex returned it."""
    match plain:
        case ["command", update, list(goto), bool(single), graph]:
            if graph is not None and type(graph) is not str:
                raise Damaged(f"its Command's graph is a {type(graph).__name__}, not a name")
            targets = [_target(g) for g in goto]
            if single and len(targets) != 1:
                raise Damaged(f"its Command's single goto holds {len(targets)} targets")
            return Command(update=update, goto=targets[0] if single else tuple(targets), graph=graph)
        case ["send", str(vertex), state]:
            return Send(vertex, state)
        case ["state", state]:
            return state
    kind = plain[0] if type(plain) is list and plain and type(plain[0]) is str else type(plain).__name__
    raise Damaged(f"what the vertex returned is stored in a form this version never writes ({kind!r})")


def _target(plain: Any) -> str | Send:
    if type(plain) is str:
        return plain
    if type(plain) is list and len(plain) == _SEND_PARTS and plain[0] == "send" and type(plain[1]) is str:
        return Send(plain[1], plain[2])
    raise Damaged(f"its Command's goto holds {type(plain).__name__} {plain!r:.60}, not a vertex or a Send")
