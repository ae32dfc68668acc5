"""The Host header check: the inbox answers only under the names it was told (DNS rebinding).

A page on `evil.example` whose name the attacker re-points at 127.0.0.1 can make
the victim's browser talk to a token-less inbox on loopback as if it were
`evil.example`'s own server (same origin, so it reads the answers). The browser
still sends `Host: evil.example`, so a server that answers only to the names it
is reached by (the loopback names, the address it is bound to, and the names
given with `--allow-host`) gives that page nothing. Starlette's
`TrustedHostMiddleware` decides; this module words its refusal for people.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable

from starlette.datastructures import Headers
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.responses import PlainTextResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from actorgraph._api.text import printable
from actorgraph._model.errors import ConfigError

__all__ = ["LOOPBACK", "HostChecked", "allowed_hosts", "host_name"]

LOOPBACK = ("localhost", "127.0.0.1", "[::1]")
_NAME = re.compile(r"(\*|(\*\.)?[a-z0-9_-]+(\.[a-z0-9_-]+)*\.?)")
_SHOWN = 100  # characters of a refused Host header echoed back


def host_name(given: str) -> str:
    """A host name or address as a Host header carries it: lower case, IPv6 in brackets.

    Raises:
        ConfigError: not a host name, an IP address, `*` or `*.domain` (a port or a
            path are not part of it).
    """
    text = given.strip().lower()
    bare = text.removeprefix("[").removesuffix("]")
    try:
        address = ipaddress.ip_address(bare)
    except ValueError:
        if _NAME.fullmatch(text) is None:
            msg = (
                f"{given!r:.80} is not a host name the inbox can allow: give a name (inbox.example), "
                f"an address (192.0.2.7, ::1), *.domain, or * (any: only behind a proxy that checks Host); "
                f"no port, no path"
            )
            raise ConfigError(msg) from None
        return text
    return f"[{address}]" if address.version == 6 else str(address)  # noqa: PLR2004 - IPv6


def allowed_hosts(extra: Iterable[str]) -> tuple[str, ...]:
    """The loopback names, then `extra` (checked and normalised), without repeats.

    Raises:
        ConfigError: an entry of `extra` is not a host name (see `host_name`).
    """
    names = [*LOOPBACK, *(host_name(name) for name in extra)]
    return tuple(dict.fromkeys(names))


class HostChecked:
    """ASGI middleware: 400 for a request whose Host header is not one of the allowed names."""

    def __init__(self, app: ASGIApp, hosts: tuple[str, ...], headers: dict[str, str]) -> None:
        self.app = app
        self.hosts = hosts
        self.headers = headers  # the safe headers every answer carries

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        admitted = False

        async def admit(scope: Scope, receive: Receive, _refusal: Send) -> None:
            nonlocal admitted
            admitted = True
            await self.app(scope, receive, send)

        async def swallow(_message: object) -> None:  # TrustedHostMiddleware's own terse refusal
            return

        checker = TrustedHostMiddleware(admit, allowed_hosts=list(self.hosts), www_redirect=False)
        await checker(scope, receive, swallow)
        if not admitted:
            await self._refusal(scope)(scope, receive, send)

    def _refusal(self, scope: Scope) -> PlainTextResponse:
        given = printable(Headers(scope=scope).get("host", "(none)"), lines=False)[:_SHOWN]
        shown = ", ".join(h for h in self.hosts if h != "*")
        text = (
            f"400 bad request: this inbox answers only to the host names {shown}, not to {given!r}.\n"
            f"A page elsewhere may be trying to reach it through DNS rebinding. If you reach it under "
            f"this name, start it with --allow-host NAME (or app(..., allow_hosts=[NAME])).\n"
        )
        return PlainTextResponse(text, 400, headers=self.headers)
