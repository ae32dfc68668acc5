"""`Auth`: LangGraph's custom auth, in the same shape, for servers that do not install `langgraph-sdk`.

An `auth.py` written for LangGraph's server works on actorgraph's with either
object: `langgraph_sdk.Auth()` as it is, or `actorgraph.server.Auth()`, which
has the same decorators and registers the same handlers the same way:

```python
from actorgraph.server import Auth   # or: from langgraph_sdk import Auth

auth = Auth()


@auth.authenticate
async def who(authorization: str | None) -> str:
    user = USERS.get((authorization or "").removeprefix("Bearer "))
    if user is None:
        raise Auth.exceptions.HTTPException(status_code=401, detail="unknown token")
    return user


@auth.on
async def owner_only(ctx: Auth.types.AuthContext, value: dict) -> dict:
    value.setdefault("metadata", {})["owner"] = ctx.user.identity
    return {"owner": ctx.user.identity}
```

`@auth.authenticate` reads the request (any of `authorization`, `headers`,
`path`, `method`, `path_params`, `query_params`, `scope`, `request`, by name)
and returns the user: a string, a dict with `identity` (and `permissions`,
`display_name`, ...), or an object with an `identity`. `@auth.on` (every
resource), `@auth.on.threads` (every action on threads),
`@auth.on.threads.create` (one action), `@auth.on(resources=..., actions=...)`
and `@auth.on.store` register async handlers `(ctx, value)` that may change
`value` and return None or True (allowed), False (403) or a filter on the
resources' metadata. The server picks the most specific one (see `_access.py`).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import Any, Final, TypeVar

import actorgraph.server._auth_types as _auth_types  # noqa: PLR0402 - the module, not the package: no cycle
from actorgraph._model.errors import ConfigError
from actorgraph.server._auth_types import AuthContext, HTTPException

__all__ = ["ACTIONS", "Auth", "AuthContext", "HTTPException"]

F = TypeVar("F", bound=Callable[..., Any])

ACTIONS: Final[dict[str, tuple[str, ...]]] = {
    "threads": ("create", "read", "update", "delete", "search", "create_run"),
    "assistants": ("create", "read", "update", "delete", "search"),
    "crons": ("create", "read", "update", "delete", "search"),
    "store": ("put", "get", "search", "delete", "list_namespaces"),
}
"""The resources handlers guard and the actions on each, as LangGraph names them."""


def _check_handler(fn: Any) -> None:
    """Refuse what LangGraph's `Auth` refuses: a handler that is not async or takes no `ctx` and `value`."""
    name = getattr(fn, "__name__", repr(fn))
    if not inspect.iscoroutinefunction(fn):
        raise ConfigError(f"auth handler {name!r} must be an async function (async def)")
    parameters = inspect.signature(fn).parameters
    for needed in ("ctx", "value"):
        if needed not in parameters:
            raise ConfigError(f"auth handler {name!r} must take a {needed!r} parameter")


def _names(given: str | Sequence[str] | None, what: str) -> list[str]:
    if given is None:
        return ["*"]
    names = [given] if isinstance(given, str) else list(given)
    if not names or not all(isinstance(n, str) for n in names) or len(set(names)) != len(names):
        raise ConfigError(f"{what} must be a name or a list of distinct names")
    return names


class _Action:
    """`auth.on.threads.create` and its kind: registers a handler for one action on one resource."""

    def __init__(self, auth: Auth, resource: str, action: str) -> None:
        self.auth, self.resource, self.action = auth, resource, action

    def __call__(self, fn: F) -> F:
        self.auth._register(self.resource, self.action, fn)  # noqa: SLF001 - the registry of its Auth
        return fn


class _Resource:
    """`auth.on.threads` (and `.assistants`, `.crons`, `.store`): every action, one, or those named."""

    def __init__(self, auth: Auth, resource: str) -> None:
        self._auth, self._resource = auth, resource
        for action in ACTIONS[resource]:
            setattr(self, action, _Action(auth, resource, action))

    def __call__(
        self, fn: F | None = None, *, actions: str | Sequence[str] | None = None
    ) -> F | Callable[[F], F]:
        """Register `fn` for every action on the resource, or (as `(actions=...)`) for those named."""

        def register(handler: F) -> F:
            for action in _names(actions, "actions"):
                if action != "*" and action not in ACTIONS[self._resource]:
                    raise ConfigError(f"{self._resource} has no action {action!r}: {ACTIONS[self._resource]}")
                self._auth._register(self._resource, action, handler)  # noqa: SLF001 - its Auth's registry
            return handler

        return register(fn) if fn is not None else register


class _On:
    """`auth.on`: a handler for everything, or per resource and action."""

    def __init__(self, auth: Auth) -> None:
        self._auth = auth
        self.threads = _Resource(auth, "threads")
        self.assistants = _Resource(auth, "assistants")
        self.crons = _Resource(auth, "crons")
        self.store = _Resource(auth, "store")

    def __call__(
        self,
        fn: F | None = None,
        *,
        resources: str | Sequence[str] | None = None,
        actions: str | Sequence[str] | None = None,
    ) -> F | Callable[[F], F]:
        """Register `fn` for everything, or (as `(resources=..., actions=...)`) for those named."""

        def register(handler: F) -> F:
            for resource in _names(resources, "resources"):
                for action in _names(actions, "actions"):
                    self._auth._register(resource, action, handler)  # noqa: SLF001 - its Auth's registry
            return handler

        return register(fn) if fn is not None else register


class Auth:
    """LangGraph's custom auth in the same shape: `@auth.authenticate`, `@auth.on...` handlers.

    ```python
    from actorgraph.server import Auth  # or: from langgraph_sdk import Auth

    auth = Auth()
    TOKENS = {"Bearer t0ken": "alice"}


    @auth.authenticate
    async def who(authorization: str | None) -> str:
        if authorization not in TOKENS:
            raise Auth.exceptions.HTTPException(status_code=401, detail="unknown token")
        return TOKENS[authorization]


    @auth.on  # everything; also @auth.on.threads, @auth.on.threads.create, @auth.on.store, ...
    async def mine(ctx: Auth.types.AuthContext, value: dict) -> dict:
        value.setdefault("metadata", {})["owner"] = ctx.user.identity
        return {"owner": ctx.user.identity}  # a filter: what the user sees and touches
    ```

    Give it to `create_app(auth=...)`, or name it in `langgraph.json`
    (`"auth": {"path": "./auth.py:auth"}`). The server reads it as it reads
    `langgraph_sdk.Auth`: its authenticate handler, its handlers by (resource,
    action), and its global handler. `Auth.types.AuthContext` is what handlers
    are given as `ctx`; `Auth.exceptions.HTTPException` is what they raise to
    answer with a status. docs/how-to/serve-many-users.md says what each route
    asks and what each answer does.
    """

    types = _auth_types
    exceptions = _auth_types

    def __init__(self) -> None:
        """An object with no handler yet; register them with its decorators."""
        self._handlers: dict[tuple[str, str], list[Callable[..., Any]]] = {}
        self._global_handlers: list[Callable[..., Any]] = []
        self._authenticate_handler: Callable[..., Any] | None = None
        self.on = _On(self)

    def authenticate(self, fn: F) -> F:
        """Register the handler that reads a request and returns its user (or raises `HTTPException`).

        Raises:
            ConfigError: one is registered already.
        """
        if self._authenticate_handler is not None:
            raise ConfigError(
                f"an authenticate handler is registered already: {self._authenticate_handler!r}"
            )
        self._authenticate_handler = fn
        return fn

    def _register(self, resource: str, action: str, fn: Callable[..., Any]) -> None:
        _check_handler(fn)
        if resource == "*" and action == "*":
            if self._global_handlers:
                raise ConfigError("a handler for everything (@auth.on) is registered already")
            self._global_handlers.append(fn)
            return
        if (resource, action) in self._handlers:
            raise ConfigError(f"a handler for {resource}, {action} is registered already")
        self._handlers[(resource, action)] = [fn]
