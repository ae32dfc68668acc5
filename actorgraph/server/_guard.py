"""Who may talk to the server: the Host check, the access token, and the last line against a crash.

- Host: only the loopback names, the bound address and the names given
  (`allow_hosts`) are answered, 400 otherwise: a page elsewhere cannot reach a
  server on loopback through DNS rebinding. Starlette's `TrustedHostMiddleware`
  decides; the refusal is the API's JSON.
- Token: with one, every request but `/ok` needs it, as `Authorization: Bearer
  TOKEN` or `X-Api-Key: TOKEN` (what `get_client(api_key=...)` sends), compared
  in constant time; 401 otherwise. A CORS preflight (`OPTIONS`) is let through
  to the CORS middleware, which answers it without reaching a route.
- Anything a route did not expect is logged and answered 500 `{"detail": ...}`,
  never with a traceback. Each request's log line names its user when an auth
  handler named one.
"""

from __future__ import annotations

import hmac
import ipaddress
import logging
import re
import time
from collections.abc import Iterable
from typing import Final

from starlette.datastructures import Headers
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from actorgraph._model.errors import ConfigError
from actorgraph.server._wire import dumps

__all__ = ["Caught", "HostChecked", "TokenChecked", "allowed_hosts", "is_loopback"]

log = logging.getLogger("actorgraph.server")

LOOPBACK: Final = ("localhost", "127.0.0.1", "[::1]")
_NAME: Final = re.compile(r"(\*|(\*\.)?[a-z0-9_-]+(\.[a-z0-9_-]+)*\.?)")
_OPEN: Final = frozenset({"/ok"})


def is_loopback(host: str) -> bool:
    """Whether binding `host` reaches this machine only (`localhost`, 127.0.0.0/8, ::1)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _host_name(given: str) -> str:
    text = given.strip().lower()
    try:
        address = ipaddress.ip_address(text.strip("[]"))
    except ValueError:
        if _NAME.fullmatch(text) is None:
            raise ConfigError(
                f"{given!r:.80} is not a host name: give a name, an address, *.domain or *"
            ) from None
        return text
    return f"[{address}]" if address.version == 6 else str(address)  # noqa: PLR2004 - IPv6


def allowed_hosts(extra: Iterable[str]) -> tuple[str, ...]:
    """The loopback names, then `extra` (checked, lower case), without repeats.

    Raises:
        ConfigError: an entry that is not a host name.
    """
    return tuple(dict.fromkeys([*LOOPBACK, *(_host_name(name) for name in extra)]))


async def _answer(send: Send, status: int, detail: str, headers: Iterable[tuple[bytes, bytes]] = ()) -> None:
    body = dumps({"detail": detail})
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", b"%d" % len(body)),
                *headers,
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


class HostChecked:
    """ASGI middleware: 400 for a request whose Host header is not one of the allowed names."""

    def __init__(self, app: ASGIApp, hosts: tuple[str, ...]) -> None:
        self.app = app
        self.hosts = hosts

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        admitted = False

        async def admit(scope: Scope, receive: Receive, _refusal: Send) -> None:
            nonlocal admitted
            admitted = True
            await self.app(scope, receive, send)

        async def swallow(_message: Message) -> None:
            return

        await TrustedHostMiddleware(admit, allowed_hosts=list(self.hosts), www_redirect=False)(
            scope, receive, swallow
        )
        if not admitted:
            given = Headers(scope=scope).get("host", "(none)")[:100]
            names = ", ".join(h for h in self.hosts if h != "*")
            detail = f"this server answers only to the host names {names}, not to {given!r}; see --allow-host"
            await _answer(send, 400, detail)


class TokenChecked:
    """ASGI middleware: 401 without the access token (`Authorization: Bearer` or `X-Api-Key`)."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self.token = token.encode()

    def _admits(self, headers: Headers) -> bool:
        scheme, _, given = headers.get("authorization", "").partition(" ")
        key = given.strip() if scheme.lower() == "bearer" else headers.get("x-api-key", "")
        return hmac.compare_digest(key.encode("utf-8", "replace"), self.token)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] in _OPEN or scope["method"] == "OPTIONS":
            await self.app(scope, receive, send)
            return
        if self._admits(Headers(scope=scope)):
            await self.app(scope, receive, send)
            return
        detail = "this server needs its access token: Authorization: Bearer TOKEN (or X-Api-Key: TOKEN)"
        await _answer(send, 401, detail, [(b"www-authenticate", b"Bearer")])


class Caught:
    """ASGI middleware: logs each request; an exception no route handled is a 500 without a traceback."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started, status = time.monotonic(), 0

        async def watched(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, watched)
        except Exception:
            log.exception("the server failed on %s %s", scope.get("method"), scope.get("path"))
            if not status:
                status = 500
                await _answer(send, 500, "the server failed to answer this request; its log says why")
        finally:
            seconds = time.monotonic() - started
            user = getattr(scope.get("user"), "identity", None)  # named by an auth handler, if there is one
            log.info(
                "%s %s %s (%.3f s)%s",
                scope.get("method"),
                scope.get("path"),
                status,
                seconds,
                "" if user is None else f" by {user!r}",
                extra={
                    "method": scope.get("method"),
                    "path": scope.get("path"),
                    "status": status,
                    "duration": round(seconds, 6),
                    **({} if user is None else {"user": user}),
                },
            )
