"""Access: the token (a bearer header or the session cookie of `/login`), CSRF, and safe headers."""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Mapping
from urllib.parse import parse_qsl

from starlette.datastructures import Headers
from starlette.requests import HTTPConnection, Request
from starlette.responses import PlainTextResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["COOKIE", "LIMIT", "Guard", "Guarded", "TooLarge", "read_form"]

COOKIE = "actorgraph_session"
LIMIT = 64 * 1024  # bytes of a form: an answer larger than this is refused (413)
_OPEN = ("/login", "/static/")  # what a person without the token may see: the login form, its CSS
_HEADERS = {
    "content-security-policy": (
        "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'"
    ),
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "x-frame-options": "DENY",
}


class TooLarge(Exception):  # noqa: N818 - named for the HTTP status it becomes
    """A request body over `LIMIT`."""


class Guard:
    """The secrets of one app: the access token (optional) and the CSRF token forms carry."""

    def __init__(self, token: str | None) -> None:
        self.token = token
        self.csrf = secrets.token_urlsafe(32)
        self._session_key = secrets.token_bytes(32)

    def session(self) -> str:
        """The session cookie's value: proof the token was given, without being the token."""
        assert self.token is not None  # noqa: S101 - sessions exist only with a token
        return hmac.new(self._session_key, self.token.encode(), hashlib.sha256).hexdigest()

    def token_matches(self, given: str) -> bool:
        """The token, compared in constant time."""
        return self.token is not None and hmac.compare_digest(given.encode(), self.token.encode())

    def csrf_matches(self, form: Mapping[str, str]) -> bool:
        """The form carries this app's CSRF token (compared in constant time)."""
        return hmac.compare_digest(form.get("csrf", "").encode(), self.csrf.encode())

    def admits(self, headers: Headers, cookies: Mapping[str, str]) -> bool:
        """Without a token everyone (on loopback) is admitted; with one, its header or the cookie."""
        if self.token is None:
            return True
        scheme, _, given = headers.get("authorization", "").partition(" ")
        if scheme.lower() == "bearer" and self.token_matches(given.strip()):
            return True
        return hmac.compare_digest(cookies.get(COOKIE, "").encode(), self.session().encode())


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
                headers = list(message.get("headers", []))
                headers.extend((k.encode(), v.encode()) for k, v in _HEADERS.items())
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


async def read_form(request: Request) -> dict[str, str]:
    """The fields of a URL-encoded form, read up to `LIMIT` bytes.

    Raises:
        TooLarge: the body is larger than `LIMIT`.
    """
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > LIMIT:
        raise TooLarge
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > LIMIT:
            raise TooLarge
    return dict(parse_qsl(body.decode("utf-8", "replace"), keep_blank_values=True))
