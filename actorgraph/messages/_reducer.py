"""`add_messages`: the reducer of a conversation, by message id.

The apply rule `add_messages(old, new)` is LangGraph's: new messages are
appended, a message whose id is already present replaces it in place, a
`RemoveMessage(id)` deletes one, `RemoveMessage(REMOVE_ALL_MESSAGES)` deletes
everything before it; messages get ids. The merge rule, for parallel branches,
works on each branch's change to the conversation they started from (which
ids it added, replaced and deleted), so every branch's change lands exactly
once, in task order, whatever the number of branches.

Ids: a new message without one gets a random uuid4 when an update is applied
(inside a task, whose result is recorded once). Everywhere else an id is
derived from what is merged: where the message stands and what it says, and
for a branch's new message which branch made it. A merge repeated in another
process (a resumed run) gives the same ids, so it ends equal to a run that
never stopped.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Callable, Sequence
from typing import Any, Final

from actorgraph._model.errors import InvalidUpdateError
from actorgraph.merge import MISSING, Reducer
from actorgraph.messages._coerce import canonical, coerce_message, is_langchain, kept_types
from actorgraph.messages._remove import REMOVE_ALL_MESSAGES, RemoveMessage

__all__ = ["AddMessages", "add_messages"]

_NAMESPACE: Final = uuid.UUID("5d0c3a52-6a43-4b8e-9a59-2f1c0c1d7e21")
_STATE: Final = "state"


def _as_list(value: Any) -> list[Any]:
    """A value given for the conversation as a list of message-likes (one message is a list of one)."""
    if value is None or value is MISSING:
        return []
    if isinstance(value, list):
        return value
    return [value]


def _fingerprint(message: Any) -> str:
    """What a message says, as text that is the same in every process (its id left out)."""
    if isinstance(message, dict):
        body = {k: v for k, v in message.items() if k != "id"}
    else:
        body = message.model_dump(exclude={"id"})
    return json.dumps(body, sort_keys=True, default=repr, ensure_ascii=False)


def derived_id(where: str, position: int, message: Any) -> str:
    """A deterministic id for a message without one: from where it stands and what it says."""
    digest = hashlib.sha256(_fingerprint(message).encode("utf-8", "surrogatepass")).hexdigest()
    return str(uuid.uuid5(_NAMESPACE, f"{where}:{position}:{digest}"))


def _with_id(message: Any, new_id: str) -> Any:
    """`message` holding `new_id` (a copy: the given message is never changed)."""
    if isinstance(message, dict):
        out = {**message, "id": new_id}
        calls = out.get("tool_calls")
        if calls and any(c.get("id") is None for c in calls):  # a tool message must be able to answer it
            out["tool_calls"] = [
                c if c.get("id") is not None else {**c, "id": f"{new_id}:{i}"} for i, c in enumerate(calls)
            ]
        return out
    return message.model_copy(update={"id": new_id})


def _id(message: Any) -> Any:
    return message.get("id") if type(message) is dict else message.id


def identified(values: Any, where: str, known: Sequence[tuple[str, str]] = ()) -> list[Any]:
    """`values` coerced to messages, each with an id (derived deterministically where it has none).

    Args:
        values: a conversation (a list of message-likes, or one).
        where: names the list (the merge base, a branch): part of the derived ids.
        known: (fingerprint, id) of the base's messages that had no id, in
            order: a message without one saying the same as the next of them
            is that message, and gets its id (so a branch's copy of the base
            is not taken for new messages, whatever it deleted before).

    Raises:
        InvalidUpdateError: an item is not a message, or is a `RemoveMessage` (a
            conversation holds messages; removals are updates).
    """
    out = []
    next_known = 0
    for position, item in enumerate(_as_list(values)):
        kind = type(item)
        if (kind is dict and item.get("id") is not None and canonical(item)) or (
            kind in kept_types and item.id is not None
        ):
            out.append(item)  # the common case: a message the reducer already made
            continue
        found = coerce_message(item)
        if isinstance(found, RemoveMessage):
            msg = (
                f"a conversation holds {found!r}, which is an update, not a message; return it "
                "as an update (returns='update') so add_messages applies it"
            )
            raise InvalidUpdateError(msg)
        if _id(found) is None:
            said = _fingerprint(found)
            match = next((i for i in range(next_known, len(known)) if known[i][0] == said), None)
            if match is not None:
                next_known = match + 1
                found = _with_id(found, known[match][1])
            else:
                found = _with_id(found, derived_id(where, position, found))
        out.append(found)
    return out


def _anonymous(values: Any) -> list[tuple[str, str]]:
    """(fingerprint, derived id) of the messages of `values` that have no id, in order."""
    out = []
    for position, item in enumerate(_as_list(values)):
        found = coerce_message(item)
        if not isinstance(found, RemoveMessage) and _id(found) is None:
            out.append((_fingerprint(found), derived_id(_STATE, position, found)))
    return out


def _random_id(where: str, position: int, message: Any) -> str:  # noqa: ARG001 - an id maker's signature
    return str(uuid.uuid4())


def apply_messages(left: Any, right: Any, new_id: Callable[[str, int, Any], str] = _random_id) -> list[Any]:
    """LangGraph's `add_messages(left, right)`; `new_id` names the new messages that have none."""
    merged = identified(left, _STATE)
    updates = [coerce_message(item) for item in _as_list(right)]
    for position, item in enumerate(updates):
        if not isinstance(item, RemoveMessage) and _id(item) is None:
            updates[position] = _with_id(item, new_id("update", position, item))
    cut = max((i for i, m in enumerate(updates) if _is_remove_all(m)), default=None)
    if cut is not None:
        merged, updates = [], updates[cut + 1 :]
    index = {_id(m): i for i, m in enumerate(merged)}
    removed: set[Any] = set()
    for item in updates:
        at = index.get(item.id if isinstance(item, RemoveMessage) else _id(item))
        if isinstance(item, RemoveMessage):
            if at is None:
                known = [str(k) for k in list(index)[:10]]
                msg = (
                    f"RemoveMessage({item.id!r}) removes a message the conversation does not hold "
                    f"(its ids: {known}{'...' if len(index) > 10 else ''}); remove an id it holds"  # noqa: PLR2004
                )
                raise InvalidUpdateError(msg)
            removed.add(item.id)
        elif at is not None:
            removed.discard(_id(item))
            merged[at] = item
        else:
            index[_id(item)] = len(merged)
            merged.append(item)
    return [m for m in merged if _id(m) not in removed] if removed else merged


def _is_remove_all(item: Any) -> bool:
    return isinstance(item, RemoveMessage) and item.id == REMOVE_ALL_MESSAGES


class AddMessages(Reducer):
    """The `add_messages` reducer: a conversation by message id (see the module)."""

    name = "add_messages"
    checks_updates = False  # an update may be one message, a pair or a string: the state is checked instead

    def __call__(self, left: Any, right: Any) -> list[Any]:
        """Apply an update: append, replace by id, delete on `RemoveMessage`.

        Args:
            left: the conversation (a list of messages, or one message).
            right: the update: a message-like or a list of them, with
                `RemoveMessage(id)` / `RemoveMessage(REMOVE_ALL_MESSAGES)` among them.

        Returns:
            A new list of messages; new messages without an id get a uuid4.

        Raises:
            InvalidUpdateError: an item is not a message, or a `RemoveMessage`
                names an id the conversation does not hold.
        """
        return apply_messages(left, right)

    def normalize(self, value: Any) -> Any:
        """The conversation `value` gives where there is none yet (a run's first input).

        That is `add_messages([], value)`: messages converted and given ids.
        """
        return apply_messages([], value)

    def merge(self, base: Any, values: Sequence[Any]) -> Any:
        """Combine parallel branches' conversations by their changes to `base` (see the module).

        A message added by a branch is appended once, in task order; one
        replaced by a branch is kept replaced (the last such branch wins); one
        deleted by a branch stays deleted. A branch that deleted the key
        deleted every message of `base`.
        """
        if all(v is MISSING for v in values):
            return MISSING
        known = _anonymous(base)
        start = identified(base, _STATE)
        original = {_id(m): m for m in start}
        replaced: dict[Any, Any] = {}
        added: dict[Any, Any] = {}
        deleted: set[Any] = set()
        for branch, value in enumerate(values):
            mine = identified(value, f"branch{branch}", known)
            seen = set()
            for found in mine:
                key = _id(found)
                seen.add(key)
                if key not in original:
                    added[key] = found
                elif not _equal(found, original[key]):
                    replaced[key] = found
            deleted.update(k for k in original if k not in seen)
        kept = [replaced.get(_id(m), m) for m in start if _id(m) not in deleted]
        return kept + list(added.values())


def _equal(a: Any, b: Any) -> bool:
    if is_langchain(a) or is_langchain(b):
        return type(a) is type(b) and bool(a == b)
    return bool(a == b)


add_messages: Final[AddMessages] = AddMessages()
"""The conversation reducer: `messages: Annotated[list, add_messages]` (see `AddMessages`)."""
