"""Thread ids in URLs: each id is one percent-encoded path segment, read back from the raw path.

A thread id may hold `/`, `..`, `%`, `#`, `?` or a backslash, so the inbox never
puts one in a URL as it is: `segment()` percent-encodes every reserved character
(`quote(id, safe="")`), and the ids `.` and `..`, which browsers resolve as
relative paths even when encoded, are written `%7C.` and `%7C..` (no thread id
contains `|`, so a leading `|` is unambiguous). The server decodes `%2F` before
routing, so `target()` reads the id from the raw path the client sent, never
from the decoded one: `/threads/x%2F..%2Fvictim` is the page of `x/../victim`.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import quote, unquote

from starlette._utils import get_route_path
from starlette.types import Scope

from actorgraph._model.errors import ActorGraphError, ConfigError
from actorgraph.checkpoint._store import check_thread_id

__all__ = ["NotAThreadError", "Target", "segment", "target"]

_ESCAPE = "|"  # no thread id holds it (check_thread_id refuses it)
_DOTS = frozenset({".", ".."})
_PREFIX = "threads"


class NotAThreadError(ActorGraphError):
    """Raised by `target()` when a path names no thread page: `status` is the HTTP status to answer."""

    def __init__(self, message: str, status: int = 404) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True, slots=True)
class Target:
    """What a `/threads/...` URL names: a thread and what of it ("" for its page)."""

    thread_id: str
    action: str


def segment(thread_id: str) -> str:
    """`thread_id` as one path segment that no client or server splits, normalises or cuts."""
    return quote(_ESCAPE + thread_id if thread_id in _DOTS else thread_id, safe="")


def target(scope: Scope, actions: frozenset[str]) -> Target:
    """The thread and action a `/threads/{id}[/{action}]` request names.

    Args:
        scope: the request's ASGI scope (its `raw_path`, when the server gives one).
        actions: the actions a thread has (`answer`, `status.json`, ...).

    Raises:
        NotAThreadError: no such page (404), a segment that is not UTF-8 (400), or an id
            the API refuses (404: no thread can have it).
    """
    encoded, action = _segments(scope, actions)
    try:
        thread_id = unquote(encoded, errors="strict")
    except UnicodeDecodeError:
        msg = "the thread id in this address is not UTF-8 text"
        raise NotAThreadError(msg, 400) from None
    thread_id = thread_id.removeprefix(_ESCAPE)
    try:
        check_thread_id(thread_id)
    except ConfigError as exc:
        raise NotAThreadError(f"no thread can have this id: {exc}") from None
    return Target(thread_id, action)


def _segments(scope: Scope, actions: frozenset[str]) -> tuple[str, str]:
    """The id's encoded segment and the action, from the raw path (or the decoded one, without it)."""
    raw = scope.get("raw_path")
    if isinstance(raw, bytes):
        parts = raw.decode("latin-1").split("?", 1)[0].split("/")[1:]
        root = [p for p in str(scope.get("root_path", "")).split("/") if p]
        tail = parts[len(root) :]
    else:  # a server without raw_path: `/` in an id cannot be told from a separator
        first, _, rest = get_route_path(scope).removeprefix("/").partition("/")
        head, _, last = rest.rpartition("/")
        tail = (
            [first, quote(head, safe=""), last] if head and last in actions else [first, quote(rest, safe="")]
        )
    if len(tail) not in (2, 3) or tail[0] != _PREFIX:
        raise NotAThreadError("no such page")
    action = unquote(tail[2]) if len(tail) == 3 else ""  # noqa: PLR2004 - /threads/{id}/{action}
    if action and action not in actions:
        raise NotAThreadError(f"a thread has no page {action!r}")
    if len(tail) == 3 and not action:  # noqa: PLR2004 - a trailing slash
        raise NotAThreadError("no such page")
    return tail[1], action
