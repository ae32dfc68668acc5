"""What each user may do: an auth object's handlers, asked about every resource and action a route touches.

One mechanism for every resource. A route names what it touches, once, before
it reads or writes anything:

```python
access = await allowed(request, "threads", "read", {"thread_id": thread_id})
row = await server.thread(thread_id, access.where)          # the filter is in the query
```

The most specific handler of the auth object runs (`threads.read`, else
`threads.*`, else `*.read`, else the global `@auth.on`; none: allowed, no
filter) with `ctx` (the user, their permissions, the resource, the action) and
`value`, which it may change. Its answer becomes an `Access`:

- `access.where`: the filter it returned (`_owners.Filter`), which the route
  passes to every query of the rows it reads or changes; None when it
  returned None or True. Another user's row is then a missing row: 404.
- `access.metadata()`: the metadata it left in `value` (an owner label it
  added), which the route writes on what it creates.
- `access.namespace()`: the store namespace it left (`@auth.on.store` scopes
  a user's items by rewriting it).

False is 403; its `HTTPException` answers its 4xx; any other exception, or an
answer that is no filter, is logged with its traceback and answered 403
without it. Crons, threads, runs and the store all go through `allowed`; runs
are guarded as their thread's (`threads.create_run`, `read`, `update`,
`delete`, `search`), as on LangGraph's server.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

import orjson
from starlette.requests import Request
from starlette.routing import BaseRoute

from actorgraph._model.errors import ConfigError
from actorgraph.server._auth import ACTIONS, AuthContext, HTTPException
from actorgraph.server._models import without_nul
from actorgraph.server._owners import Filter, FilterError, filter_of
from actorgraph.server._users import Authenticating, RefusedError, User, refusal

__all__ = ["Access", "Guard", "allowed"]

log = logging.getLogger("actorgraph.server")

_FAILED: Final = "forbidden: the server's auth handler failed on this request (its log says why)"


@dataclass(frozen=True, slots=True)
class Access:
    """What a user may do with what a route touches: the handler's `value` and the filter it returned."""

    value: dict[str, Any] = field(default_factory=dict)
    where: Filter | None = None

    def metadata(self, key: str = "metadata") -> dict[str, Any]:
        """The metadata in `value` (as the handler left it), checked: a dict that is JSON.

        Raises:
            RefusedError: 403 when the handler left something else (logged).
        """
        found = self.value.get(key)
        if found is None:
            return {}
        if not isinstance(found, Mapping):
            log.error("the auth handler set %s to a %s, not a JSON object", key, type(found).__name__)
            raise RefusedError(403, _FAILED)
        try:
            return without_nul(dict(orjson.loads(orjson.dumps(dict(found)))))
        except (TypeError, ValueError, orjson.JSONEncodeError) as exc:
            log.error("the auth handler set %s to something that is not a JSON object: %s", key, exc)  # noqa: TRY400
            raise RefusedError(403, _FAILED) from None

    def namespace(self, key: str = "namespace") -> tuple[str, ...] | None:
        """The store namespace in `value` (as the handler left it): labels, or None when absent.

        Raises:
            RefusedError: 403 when the handler left something that is not a list of strings (logged).
        """
        found = self.value.get(key)
        if found is None:
            return None
        if isinstance(found, (str, bytes)) or not isinstance(found, Sequence):
            log.error("the auth handler set the store's %s to %r, not a list of labels", key, found)
            raise RefusedError(403, _FAILED)
        if not all(isinstance(label, str) for label in found):
            log.error("the auth handler set the store's %s to %r, not a list of labels", key, found)
            raise RefusedError(403, _FAILED)
        return tuple(found)

    def items(self, given: Mapping[str, Any] | None) -> dict[str, Any] | None:
        """A store search's filter: the request's (`given`) and the handler's equalities.

        None when no item can meet both (they want one field equal to two values).

        Raises:
            RefusedError: 403 when the handler's filter is not equalities (logged).
        """
        wanted = dict(given or {})
        if self.where is None:
            return wanted
        try:
            equal = self.where.equalities()
        except FilterError as exc:
            log.error("the auth handler of store.search returned a filter the store cannot take: %s", exc)  # noqa: TRY400
            raise RefusedError(403, _FAILED) from None
        for key, value in equal.items():
            asked = wanted.get(key)
            operators = {} if key not in wanted else {"$eq": asked}
            if isinstance(asked, Mapping) and asked and all(str(k).startswith("$") for k in asked):
                operators = dict(asked)  # the request's operators on the field ($gt, $ne, ...) stay
            if "$eq" in operators and operators["$eq"] != value:
                return None
            wanted[key] = {**operators, "$eq": value}
        return wanted


def _context_type(auth: Any) -> Callable[..., Any]:
    """The auth object's own `AuthContext` (LangGraph's, for `langgraph_sdk.Auth`), else ours."""
    made = getattr(getattr(auth, "types", None), "AuthContext", None)
    if callable(made):
        try:
            made(permissions=[], user=None, resource="threads", action="read")
        except Exception:  # noqa: BLE001 - a shape of another version: ours has the same fields
            return AuthContext
        return made  # type: ignore[no-any-return]
    return AuthContext


def _refusals(auth: Any) -> tuple[type[BaseException], ...]:
    """The exceptions a handler raises to choose its answer: the auth object's `HTTPException`, and ours."""
    theirs = getattr(getattr(auth, "exceptions", None), "HTTPException", None)
    if isinstance(theirs, type) and issubclass(theirs, BaseException) and theirs is not HTTPException:
        return (theirs, HTTPException)
    return (HTTPException,)


class Guard:
    """An auth object as the server uses it: its authenticate handler, its handlers by resource and action."""

    def __init__(self, auth: Any) -> None:
        """Read `auth`: a `langgraph_sdk.Auth` or an `actorgraph.server.Auth` (their registries are alike).

        Raises:
            ConfigError: it is neither, or has no authenticate handler.
        """
        handlers = getattr(auth, "_handlers", None)
        everything = getattr(auth, "_global_handlers", None)
        authenticate = getattr(auth, "_authenticate_handler", None)
        if not isinstance(handlers, Mapping) or not isinstance(everything, list):
            msg = (
                f"auth: {auth!r:.80} is not an Auth object: give langgraph_sdk.Auth() or "
                "actorgraph.server.Auth()"
            )
            raise ConfigError(msg)
        if authenticate is None:
            msg = "auth: the Auth object has no authenticate handler: register one with @auth.authenticate"
            raise ConfigError(msg)
        self.authenticate = authenticate
        self.handlers: dict[tuple[str, str], Any] = {tuple(k): v[-1] for k, v in handlers.items() if v}
        self.fallback = everything[-1] if everything else None
        self.context = _context_type(auth)
        self.refusals = _refusals(auth)

    def backend(self, routes: Sequence[BaseRoute]) -> Authenticating:
        """Starlette's authentication backend of this auth object (`routes` give handlers `path_params`).

        Raises:
            ConfigError: the authenticate handler needs a parameter the server does not give.
        """
        return Authenticating(self.authenticate, routes, self.refusals)

    def handler(self, resource: str, action: str) -> Any:
        """The handler asked about `action` on `resource`: the most specific one, or None."""
        for key in ((resource, action), (resource, "*"), ("*", action), ("*", "*")):
            if key in self.handlers:
                return self.handlers[key]
        return self.fallback

    def uncovered(self) -> list[str]:
        """`resource.action` pairs no handler guards (every authenticated user may do them, unfiltered)."""
        return [f"{r}.{a}" for r, actions in ACTIONS.items() for a in actions if self.handler(r, a) is None]

    def unused(self) -> list[str]:
        """Handlers registered for a resource or action this server never asks about."""
        known = {(r, a) for r, actions in ACTIONS.items() for a in (*actions, "*")}
        known |= {("*", a) for actions in ACTIONS.values() for a in actions} | {("*", "*")}
        return sorted(f"{r}.{a}" for r, a in self.handlers if (r, a) not in known)

    async def decide(self, user: User, resource: str, action: str, value: dict[str, Any]) -> Access:
        """Ask the handler of `action` on `resource`; its answer as an `Access`.

        Raises:
            RefusedError: the handler said False (403), raised its `HTTPException` (its 4xx),
                failed, or returned what is not a filter (403, logged).
        """
        handler = self.handler(resource, action)
        if handler is None:
            return Access(value)
        ctx = self.context(permissions=list(user.permissions), user=user, resource=resource, action=action)
        try:
            result = handler(ctx=ctx, value=value)
            if inspect.isawaitable(result):
                result = await result
        except Exception as exc:
            if isinstance(exc, self.refusals):
                raise refusal(exc, 403) from None
            if isinstance(exc, AssertionError):  # LangGraph's server: an assertion refuses
                raise RefusedError(403, f"forbidden: {resource}.{action} was refused") from None
            log.exception("the auth handler of %s.%s failed", resource, action)
            raise RefusedError(403, _FAILED) from None
        if result is None or result is True:
            return Access(value)
        if result is False:
            raise RefusedError(403, f"forbidden: {resource}.{action} was refused")
        try:
            return Access(value, filter_of(result))
        except FilterError as exc:
            log.error("the auth handler of %s.%s returned %r: %s", resource, action, result, exc)  # noqa: TRY400
            raise RefusedError(403, _FAILED) from None


async def allowed(request: Request, resource: str, action: str, value: dict[str, Any]) -> Access:
    """What the request's user may do with `action` on `resource` (`value`: what it touches).

    Without an auth object everyone may do everything: `Access(value)`.

    Raises:
        RefusedError: the handlers refused (401 without a user, 403, or a handler's 4xx).
    """
    if action not in ACTIONS.get(resource, ()):
        raise ConfigError(f"no action {action!r} on {resource!r}")  # a route's mistake, found by its tests
    guard: Guard | None = request.app.state.server.guard
    if guard is None:
        return Access(value)
    user = request.scope.get("user")
    if not isinstance(user, User):
        raise RefusedError(401, "this request needs a user: the server's authenticate handler named none")
    return await guard.decide(user, resource, action, value)
