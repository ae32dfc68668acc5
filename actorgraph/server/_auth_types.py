"""`Auth.types` and `Auth.exceptions`: what an `auth.py` annotates its handlers with, and what they raise.

The names are LangGraph's (`langgraph_sdk.auth.types`, `langgraph_sdk.auth.exceptions`),
so a handler written for either `Auth` reads the same.
"""

from __future__ import annotations

import http
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from actorgraph._model.errors import ActorGraphError

__all__ = ["AuthContext", "FilterType", "HTTPException", "HandlerResult", "MinimalUserDict"]

FilterType = dict[str, Any]
"""A filter on the metadata of what a route touches: `{"owner": "alice"}`, `$eq`, `$contains`, `$or`..."""

HandlerResult = None | bool | FilterType
"""What a handler returns: None or True (allowed), False (403), or a filter."""

MinimalUserDict = dict[str, Any]
"""What authenticate may return: `{"identity": ..., "permissions": [...], ...}`."""


class HTTPException(ActorGraphError):  # noqa: N818 - LangGraph's name, which auth.py files raise
    """Raised by an auth handler to answer the request with `status_code` (401 by default) and `detail`."""

    def __init__(
        self, status_code: int = 401, detail: str | None = None, headers: Mapping[str, str] | None = None
    ) -> None:
        """Say how to answer: the status (401 unless given), what to tell the client, headers to add."""
        self.status_code = status_code
        self.detail = detail if detail is not None else http.HTTPStatus(status_code).phrase
        self.headers = headers
        super().__init__(f"{status_code}: {self.detail}")


@dataclass(frozen=True, slots=True)
class AuthContext:
    """What a handler of `Auth.on` is given as `ctx`: the user, their permissions, the resource and action."""

    permissions: Sequence[str]
    user: Any
    resource: str
    action: str
