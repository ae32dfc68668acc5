"""`RemoveMessage`: an update that deletes a message from a conversation by its id."""

from __future__ import annotations

import dataclasses
from typing import Final

from actorgraph._model.errors import ConfigError

__all__ = ["REMOVE_ALL_MESSAGES", "RemoveMessage"]

REMOVE_ALL_MESSAGES: Final = "__remove_all__"
"""The id `RemoveMessage(REMOVE_ALL_MESSAGES)` deletes every message before it (LangGraph's value)."""


@dataclasses.dataclass(frozen=True, slots=True)
class RemoveMessage:
    """An update that deletes the message with this id when `add_messages` applies it.

    `RemoveMessage("m1")` or `RemoveMessage(id="m1")` deletes message `"m1"`;
    removing an id the conversation does not hold is an `InvalidUpdateError`.
    `RemoveMessage(REMOVE_ALL_MESSAGES)` deletes every message before it, so an
    update `[RemoveMessage(REMOVE_ALL_MESSAGES), *kept]` replaces the whole
    conversation. A dict `{"role": "remove", "id": ...}` and langchain-core's
    `RemoveMessage` mean the same. It is a plain record: the safe checkpoint
    serializer stores it without pickle.

    Attributes:
        id: the id of the message to delete, or `REMOVE_ALL_MESSAGES`.
    """

    id: str

    def __post_init__(self) -> None:
        """Refuse an id that is not a non-empty string."""
        if not isinstance(self.id, str) or not self.id:
            msg = f"RemoveMessage takes the id (a non-empty string) of the message to delete, got {self.id!r}"
            raise ConfigError(msg)
