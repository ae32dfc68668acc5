"""Access: the token (a bearer header or a login session's cookie), CSRF bound to the session, safe headers.

Every request has a *visitor*: `anonymous` (no token given, or a server
without a token), `bearer` (the token in an `Authorization` header), or the
session a `/login` made (`session:<random id>`). The session cookie holds
`<id>.<mac>`, a random id and its keyed hash (never the token), so it proves a
login without being one. The CSRF token a page shows is a keyed hash of its
visitor: a form shown to an anonymous visitor (the login page) does not
authorize a logged-in person's POST, nor one session's form another's.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Mapping

from starlette.datastructures import Headers
from starlette.requests import HTTPConnection
from starlette.responses import PlainTextResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from actorgraph._model.errors import ConfigError

__all__ = ["ANONYMOUS", "COOKIE", "SAFE_HEADERS", "Guard", "Guarded", "check_token"]

COOKIE = "actorgraph_session"
ANONYMOUS = "anonymous"
_OPEN = ("/login", "/static/")  # what a person without the token may see: the login form, its CSS
SAFE_HEADERS = {
    "content-security-policy": (
        "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'"
    ),
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "x-frame-options": "DENY",
}


def _same(given: str, expected: str) -> bool:
    """Compared in constant time (as bytes: a cookie or a field may hold anything); empty never matches."""
    if not given or not expected:
        return False
    return hmac.compare_digest(given.encode("utf-8", "replace"), expected.encode("utf-8", "replace"))


def check_token(token: object) -> str | None:
    """An access token, checked: None (no token: everyone on loopback is admitted) or a non-blank string.

    An empty token would admit whoever sends `Authorization: Bearer` with nothing
    after it (what `--token "$UNSET_VARIABLE"` gives), so it is refused.

    Raises:
        ConfigError: the token is not a string, or is empty or blank.
    """
    if token is None:
        return None
    if not isinstance(token, str):
        msg = f"token={type(token).__name__}: give the access token as text, or None for no token"
        raise ConfigError(msg)
    if not token.strip():
        msg = (
            f"token={token!r} is blank, which anyone could send: give a real access token "
            "(python -c 'import secrets; print(secrets.token_urlsafe(24))' makes one), or none at all "
            "to admit everyone (then serve on loopback only)"
        )
        raise ConfigError(msg)
    return token


class Guard:
    """The secrets of one app: the access token (optional) and the key of its sessions and CSRF tokens."""

    def __init__(self, token: str | None) -> None:
        """Keep `token` (checked: `check_token`) and make the key of this process's sessions."""
        self.token = check_token(token)
        self._key = secrets.token_bytes(32)  # per process: a restart logs everyone out

    def _mac(self, *parts: str) -> str:
        return hmac.new(self._key, "\x00".join(parts).encode(), hashlib.sha256).hexdigest()

    def new_session(self) -> str:
        """A new session cookie's value: a random id and its keyed hash (proof of a login, not the token)."""
        assert self.token is not None  # noqa: S101 - sessions exist only with a token
        sid = secrets.token_urlsafe(18)
        return f"{sid}.{self._mac('session', self.token, sid)}"

    def token_matches(self, given: str) -> bool:
        """The token, compared in constant time (an empty one never matches)."""
        return self.token is not None and _same(given, self.token)

    def visitor(self, headers: Headers, cookies: Mapping[str, str]) -> str:
        """Who the request comes from: a login session, the bearer token, or `anonymous`."""
        if self.token is None:
            return ANONYMOUS
        sid, dot, mac = cookies.get(COOKIE, "").partition(".")
        if dot and _same(mac, self._mac("session", self.token, sid)):
            return f"session:{sid}"
        scheme, _, given = headers.get("authorization", "").partition(" ")
        if scheme.lower() == "bearer" and self.token_matches(given.strip()):
            return "bearer"
        return ANONYMOUS

    def admits(self, headers: Headers, cookies: Mapping[str, str]) -> bool:
        """Without a token everyone (on loopback) is admitted; with one, its header or a session."""
        return self.token is None or self.visitor(headers, cookies) != ANONYMOUS

    def csrf_for(self, connection: HTTPConnection) -> str:
        """The CSRF token of the request's visitor (what its pages' forms carry)."""
        return self._mac("csrf", self.visitor(connection.headers, connection.cookies))

    def csrf_matches(self, connection: HTTPConnection, form: Mapping[str, str]) -> bool:
        """The form carries the CSRF token of the visitor posting it (compared in constant time)."""
        return _same(form.get("csrf", ""), self.csrf_for(connection))


class Guarded:
    """ASGI middleware: 401 without the token (but for the login form), safe headers on every answer."""

    def __init__(self, app: ASGIApp, guard: Guard) -> None:
        self.app = app
        self.guard = guard

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_safely(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = [(k, v) for k, v in message.get("headers", []) if k.decode() not in SAFE_HEADERS]
                headers.extend((k.encode(), v.encode()) for k, v in SAFE_HEADERS.items())
                message = {**message, "headers": headers}
            await send(message)

        path = scope["path"][len(scope.get("root_path", "")) :] if _mounted(scope) else scope["path"]
        if path.startswith(_OPEN) or self._admitted(scope):
            await self.app(scope, receive, send_safely)
            return
        refused = _unauthorized(scope)
        await refused(scope, receive, send_safely)

    def _admitted(self, scope: Scope) -> bool:
        connection = HTTPConnection(scope)
        return self.guard.admits(connection.headers, connection.cookies)


def _mounted(scope: Scope) -> bool:
    root = scope.get("root_path", "")
    return bool(root) and str(scope["path"]).startswith(root)


def _unauthorized(scope: Scope) -> Response:
    root = scope.get("root_path", "")
    accepts_html = "text/html" in Headers(scope=scope).get("accept", "")
    if accepts_html:
        body = f'<!doctype html><p>This inbox needs its access token: <a href="{root}/login">log in</a>.</p>'
        return Response(body, status_code=401, media_type="text/html", headers={"WWW-Authenticate": "Bearer"})
    return PlainTextResponse(
        "401 unauthorized: give the access token (Authorization: Bearer TOKEN)",
        status_code=401,
        headers={"WWW-Authenticate": "Bearer"},
    )
