"""Who a request is from: an auth object's authenticate handler, called on every request but the public ones.

The handler is called with the parts of the request it names (`authorization`,
`headers`, `path`, `method`, `path_params`, `query_params`, `scope`,
`request`: a Starlette request whose body is not read), sync or async. What it
returns becomes a `User`: a string is the identity; a dict or an object gives
`identity` (a non-empty string) and may give `permissions`, `display_name`,
`is_authenticated` and anything else, which handlers read as `ctx.user[...]`
or `ctx.user.name`.

A request it refuses is answered 401 (or the 4xx its `HTTPException` says,
with its detail and headers); any other exception, or a value that names no
user, is logged with its traceback and answered 401 with a detail that says
the log has why, never the traceback. Starlette's `AuthenticationMiddleware`
calls it; `/ok`, `/info`, `/openapi.json` and `/docs` are public, as on
LangGraph's server.
"""

from __future__ import annotations

import inspect
import logging
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, Final

from starlette.authentication import AuthCredentials, AuthenticationBackend, AuthenticationError, BaseUser
from starlette.concurrency import run_in_threadpool
from starlette.requests import HTTPConnection, Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Match

from actorgraph._model.errors import ActorGraphError, ConfigError
from actorgraph.server._wire import dumps

__all__ = ["PUBLIC", "Authenticating", "RefusedError", "User", "refusal", "refused_answer", "user_of"]

log = logging.getLogger("actorgraph.server")

PUBLIC: Final = frozenset({"/ok", "/info", "/openapi.json", "/docs"})
"""Paths answered without authentication (the server's health, version and route list)."""

_PARAMETERS: Final = frozenset(
    {"authorization", "headers", "path", "method", "path_params", "query_params", "scope", "request"}
)
_IDENTITY: Final = re.compile(r"[^\x00-\x1f\x7f-\x9f]{1,1024}")
_DETAIL: Final = 1000  # characters of a handler's detail sent to the client
_HEADER: Final = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]{1,100}")


class RefusedError(AuthenticationError, ActorGraphError):
    """A request the auth handlers refused: answered `status` with `{"detail": detail}` and `headers`."""

    def __init__(self, status: int, detail: str, headers: Mapping[str, str] | None = None) -> None:
        """Say how to answer."""
        super().__init__(detail)
        self.status = status
        self.detail = detail
        self.headers = dict(headers or {})


def refusal(exc: Any, default: int) -> RefusedError:
    """A handler's `HTTPException` as the refusal it asks: its 4xx (else `default`), detail and headers."""
    status = getattr(exc, "status_code", default)
    if not isinstance(status, int) or isinstance(status, bool) or not 400 <= status < 500:  # noqa: PLR2004
        status = default
    detail = getattr(exc, "detail", None)
    detail = str(detail)[:_DETAIL] if detail is not None else "refused"
    headers: dict[str, str] = {}
    given = getattr(exc, "headers", None)
    if isinstance(given, Mapping):
        for name, value in given.items():
            plain = isinstance(value, str) and "\r" not in value and "\n" not in value
            if plain and isinstance(name, str) and _HEADER.fullmatch(name):
                headers[name] = value[:_DETAIL]
    return RefusedError(status, detail, headers)


def refused_answer(_conn: HTTPConnection, exc: Exception) -> Response:
    """The response to a refused request: its status and `{"detail": ...}` (401s say `WWW-Authenticate`)."""
    refused = exc if isinstance(exc, RefusedError) else RefusedError(401, str(exc))
    headers = dict(refused.headers)
    if refused.status == 401:  # noqa: PLR2004
        headers.setdefault("WWW-Authenticate", "Bearer")
    return Response(dumps({"detail": refused.detail}), refused.status, headers, media_type="application/json")


class User(BaseUser):
    """A request's user as the authenticate handler gave it: `identity`, `permissions`, its other fields."""

    def __init__(self, fields: Mapping[str, Any], source: Any = None) -> None:
        """The user of `fields` (`identity` checked by `user_of`); `source` is the object the handler gave."""
        self._fields = dict(fields)
        self._source = source

    @property
    def identity(self) -> str:
        """Who the user is (the handler's string)."""
        return str(self._fields["identity"])

    @property
    def display_name(self) -> str:
        """The user's name to show (the identity unless the handler gave one)."""
        return str(self._fields.get("display_name", self.identity))

    @property
    def is_authenticated(self) -> bool:
        """True unless the handler said otherwise."""
        return bool(self._fields.get("is_authenticated", True))

    @property
    def permissions(self) -> tuple[str, ...]:
        """The permissions the handler gave (none unless it did)."""
        return tuple(self._fields.get("permissions", ()))

    def dict(self) -> dict[str, Any]:
        """Every field of the user."""
        shown = {"identity": self.identity, "display_name": self.display_name}
        return {**self._fields, **shown, "is_authenticated": self.is_authenticated}

    def __getitem__(self, key: str) -> Any:
        return self.dict()[key]

    def __contains__(self, key: object) -> bool:
        return key in self.dict()

    def __iter__(self) -> Iterator[str]:
        return iter(self.dict())

    def __len__(self) -> int:
        return len(self.dict())

    def get(self, key: str, default: Any = None) -> Any:
        """A field of the user, or `default`."""
        return self.dict().get(key, default)

    def __getattr__(self, name: str) -> Any:
        fields = self.__dict__.get("_fields", {})
        if name in fields:
            return fields[name]
        source = self.__dict__.get("_source")
        if source is not None and not name.startswith("_"):
            return getattr(source, name)
        raise AttributeError(name)

    def __repr__(self) -> str:
        return f"User({self.identity!r})"


def user_of(result: Any) -> User:
    """The user an authenticate handler returned.

    Raises:
        ConfigError: a value that names no user (no identity, not a string, control characters).
    """
    source = None
    if isinstance(result, str):
        fields: dict[str, Any] = {"identity": result}
    elif isinstance(result, Mapping):
        fields = dict(result)
    elif hasattr(result, "identity"):
        source = result
        fields = {
            name: getattr(result, name)
            for name in ("identity", "display_name", "is_authenticated", "permissions")
            if hasattr(result, name)
        }
    else:
        raise ConfigError(
            f"authenticate returned a {type(result).__name__}, not a user: give a str or a dict"
        )
    identity = fields.get("identity")
    if not isinstance(identity, str) or _IDENTITY.fullmatch(identity) is None:
        raise ConfigError(
            f"authenticate gave the identity {identity!r:.80}: give 1 to 1024 printable characters"
        )
    permissions = fields.get("permissions", ())
    if isinstance(permissions, str) or not isinstance(permissions, Sequence):
        raise ConfigError(f"authenticate gave the permissions {permissions!r:.80}: give a list of strings")
    if not all(isinstance(p, str) for p in permissions):
        raise ConfigError("authenticate gave permissions that are not all strings")
    return User({**fields, "permissions": tuple(permissions)}, source)


def parameters_of(fn: Callable[..., Any]) -> frozenset[str]:
    """The request parts an authenticate handler takes.

    Raises:
        ConfigError: it is not callable, or needs a parameter the server does not give.
    """
    if not callable(fn):
        raise ConfigError(f"the authenticate handler {fn!r:.80} is not callable")
    taken = inspect.signature(fn).parameters
    needed = [
        name
        for name, p in taken.items()
        if name not in _PARAMETERS
        and p.default is p.empty
        and p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)
    ]
    if needed:
        msg = (
            f"the authenticate handler {getattr(fn, '__name__', fn)!r} needs {', '.join(needed)}: it may "
            "take "
            f"{', '.join(sorted(_PARAMETERS))} (by name)"
        )
        raise ConfigError(msg)
    return frozenset(taken) & _PARAMETERS


class Authenticating(AuthenticationBackend):
    """Starlette's authentication backend over an authenticate handler (public paths pass unauthenticated)."""

    def __init__(
        self, fn: Callable[..., Any], routes: Sequence[BaseRoute], refusals: tuple[type[BaseException], ...]
    ) -> None:
        """Call `fn` on each request (`routes` give it `path_params`; `refusals` ask for a status).

        Raises:
            ConfigError: `fn` needs a parameter the server does not give.
        """
        self._fn = fn
        self._wanted = parameters_of(fn)
        self._routes = routes
        self._refusals = refusals

    async def authenticate(self, conn: HTTPConnection) -> tuple[AuthCredentials, BaseUser] | None:
        """The request's user; None for a public path.

        Raises:
            RefusedError: the handler refused the request, failed, or named no user.
        """
        if conn.scope["path"] in PUBLIC:
            return None
        try:
            arguments = self._arguments(conn.scope)
            if inspect.iscoroutinefunction(self._fn):
                result = await self._fn(**arguments)
            else:  # a sync handler may block (a database, a key server): not on the event loop
                result = await run_in_threadpool(self._fn, **arguments)
                if inspect.isawaitable(result):
                    result = await result
            user = user_of(result)
        except Exception as exc:
            if isinstance(exc, self._refusals):
                raise refusal(exc, 401) from None
            log.exception(
                "the auth handler failed to authenticate %s %s", conn.scope["method"], conn.scope["path"]
            )
            raise RefusedError(
                401, "authentication failed: the server's auth handler failed (its log says why)"
            ) from None
        return AuthCredentials(list(user.permissions)), user

    def _arguments(self, scope: Any) -> dict[str, Any]:
        wanted, found = self._wanted, {}
        raw = scope.get("headers", [])
        if "authorization" in wanted:
            value = next((v for k, v in raw if k == b"authorization"), None)
            found["authorization"] = None if value is None else value.decode("latin-1")
        if "headers" in wanted:
            found["headers"] = dict(raw)
        if "path" in wanted:
            found["path"] = scope["path"]
        if "method" in wanted:
            found["method"] = scope["method"]
        if "scope" in wanted:
            found["scope"] = scope
        if "request" in wanted:
            found["request"] = Request(scope)
        if "query_params" in wanted:
            found["query_params"] = Request(scope).query_params
        if "path_params" in wanted:
            found["path_params"] = self._path_params(scope)
        return found

    def _path_params(self, scope: Any) -> dict[str, Any]:
        for route in self._routes:
            match, child = route.matches(scope)
            if match != Match.NONE:
                return dict(child.get("path_params", {}))
        return {}
