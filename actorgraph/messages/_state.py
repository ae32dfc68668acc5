"""`MessagesState`: the state of a chat graph, one conversation under `messages`."""

from __future__ import annotations

from typing import Annotated, Any, TypeAlias

from actorgraph.messages._reducer import add_messages

try:  # pydantic reads typing_extensions' TypedDict on Python 3.11 too (langchain-core's @tool with state)
    from typing_extensions import TypedDict
except ImportError:  # pragma: no cover - typing_extensions comes with pydantic, langchain-core and mypy
    from typing import TypedDict

__all__ = ["AnyMessage", "MessagesState"]

AnyMessage: TypeAlias = Any
"""A message: a dict in the common chat format, or a langchain-core message object.

Spelled `Any` so that schemas naming it never need langchain-core installed
(and a pydantic schema accepts both kinds).
"""


class MessagesState(TypedDict):
    """A state holding one conversation: `messages`, combined by `add_messages`.

    `Graph(state=MessagesState)` gives a chat graph; subclass it to add keys
    (`class State(MessagesState): summary: str`).
    """

    messages: Annotated[list[AnyMessage], add_messages]
