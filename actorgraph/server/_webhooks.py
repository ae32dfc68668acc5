"""Webhooks: the server's settings for them, and where a webhook may be sent.

A run created with `webhook=URL` (or queued by a cron that has one) is POSTed
to URL when it ends (`_webhook_body.py` owes it, `_webhook_delivery.py` sends it).
A URL is hostile input, and the server sends it a request from inside the
network: so it must be `http` or `https`, without credentials, at most
`URL_LONGEST` characters, its host in ASCII (IDNA names in their `xn--` form),
and every address its host resolves to must be a public one. Private,
loopback, link-local, shared (100.64/10), reserved, multicast and unspecified
addresses are refused unless `allow` names the host, or a network that holds
the address. The URL is checked when the run is created (a 422 naming
`webhook`) and again at each delivery, where the host is resolved once, each
address checked, and the request sent to that address (so a name that resolves
elsewhere a moment later, DNS rebinding, changes nothing). Redirects are never
followed.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import ipaddress
import math
import re
import socket
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final
from urllib.parse import SplitResult, urlsplit

from actorgraph._model.errors import ConfigError

__all__ = [
    "SECRET_VARIABLE",
    "URL_LONGEST",
    "Address",
    "Allowed",
    "RefusedWebhookError",
    "Target",
    "Webhooks",
    "check_webhook",
    "resolve",
    "target_of",
    "webhooks_of",
]

SECRET_VARIABLE: Final = "ACTORGRAPH_WEBHOOK_SECRET"  # noqa: S105 - the variable's name, not a secret
"""The environment variable the command line reads the signing secret from (after `env` is applied)."""

URL_LONGEST: Final = 2048
_RESOLVING: Final = 5.0  # seconds a webhook's host may take to resolve when a run is created
_SHORTEST_KEY: Final = 24  # bytes of a signing key (Standard Webhooks asks for 24 to 64)
_HOST: Final = re.compile(r"(\*\.)?[a-z0-9_-]+(\.[a-z0-9_-]+)*")
_FILE_KEYS: Final = frozenset({"allow", "timeout", "retry_for"})
_LANGGRAPH_KEYS: Final = frozenset({"url", "headers", "env_prefix", "allowed_fields"})
Address = ipaddress.IPv4Address | ipaddress.IPv6Address


class RefusedWebhookError(ConfigError):
    """A webhook URL the server will not send to: the message says why (a 422 when a run is created)."""


@dataclass(frozen=True, slots=True)
class Allowed:
    """Hosts and networks a webhook may reach although they are not public (`webhooks.allow`)."""

    names: frozenset[str] = frozenset()
    suffixes: tuple[str, ...] = ()  # from `*.example.internal`: its subdomains
    networks: tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...] = ()

    @classmethod
    def of(cls, entries: Iterable[str]) -> Allowed:
        """The entries checked: a host name, `*.domain`, an address or a network (`10.0.0.0/8`).

        Raises:
            ConfigError: an entry that is none of these.
        """
        names, suffixes, networks = set(), [], []
        for given in entries:
            text = given.strip().lower().rstrip(".") if isinstance(given, str) else ""
            try:
                networks.append(ipaddress.ip_network(text.strip("[]"), strict=False))
                continue
            except ValueError:
                pass
            if _HOST.fullmatch(text) is None:
                msg = (
                    f"webhooks.allow: {given!r:.80} is not a host name, *.domain, an address or a "
                    "network (such as 10.0.0.0/8)"
                )
                raise ConfigError(msg)
            if text.startswith("*."):
                suffixes.append(text[1:])
            else:
                names.add(text)
        return cls(frozenset(names), tuple(suffixes), tuple(networks))

    def host(self, host: str) -> bool:
        """Whether `host` (lower case) is named, so it may resolve to any address."""
        return host in self.names or any(host.endswith(suffix) for suffix in self.suffixes)

    def address(self, address: Address) -> bool:
        """Whether a network of the list holds `address`."""
        return any(address in network for network in self.networks)


@dataclass(frozen=True, slots=True)
class Webhooks:
    """How the server signs and sends webhooks, and where they may go.

    Attributes:
        secret: the signing secret (at least 24 bytes of key: a `whsec_` secret of Standard
            Webhooks, base64 after the prefix, or any other text of 24 characters or more).
            Without one, runs with a webhook are refused and this process sends none.
        allow: host names (`hooks.internal`, `*.corp.example`), addresses and networks
            (`127.0.0.1`, `10.0.0.0/8`) a webhook may reach although they are not public.
        timeout: seconds one delivery may take (resolving, connecting, sending, the answer's head).
        retry_for: seconds after a run's end during which a failed delivery is tried again.
        first_retry: seconds before the first retry; each next waits twice as long (at most 5 minutes).
        allowed: `allow`, read (made from it).
        key: the HMAC key of `secret` (made from it; None without one).
    """

    secret: str | None = field(default=None, repr=False)
    allow: Sequence[str] = ()
    timeout: float = 10.0
    retry_for: float = 3600.0
    first_retry: float = 1.0
    allowed: Allowed = field(init=False, repr=False, compare=False)
    key: bytes | None = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        """Check every setting (see `ConfigError`).

        Raises:
            ConfigError: a secret too short or not text, a bad `allow` entry, a time out of bounds.
        """
        if isinstance(self.allow, str):
            raise ConfigError("webhooks.allow: give a list of hosts and networks, not one string")
        object.__setattr__(self, "allow", tuple(self.allow))
        object.__setattr__(self, "allowed", Allowed.of(self.allow))
        object.__setattr__(self, "key", None if self.secret is None else signing_key(self.secret))
        _seconds("timeout", self.timeout, 0.01, 300.0)
        _seconds("retry_for", self.retry_for, 0.0, 7 * 86400.0)
        _seconds("first_retry", self.first_retry, 0.001, 3600.0)


def _seconds(name: str, value: object, low: float, high: float) -> None:
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not math.isfinite(value)
        or not low <= value <= high
    ):
        raise ConfigError(f"webhooks.{name}={value!r:.40}: give seconds from {low:g} to {high:g}")


def signing_key(secret: object) -> bytes:
    """The HMAC key of a secret: a `whsec_` one's base64 bytes (as Standard Webhooks reads them), else UTF-8.

    Raises:
        ConfigError: not text, bad base64 after `whsec_`, or fewer than 24 bytes of key.
    """
    if not isinstance(secret, str):
        raise ConfigError("the webhook secret must be text")
    if secret.startswith("whsec_"):
        try:
            key = base64.b64decode(secret.removeprefix("whsec_"), validate=True)
        except (binascii.Error, ValueError):
            raise ConfigError("the webhook secret starts with whsec_ but is not base64 after it") from None
    else:
        try:
            key = secret.encode()
        except UnicodeEncodeError:
            raise ConfigError("the webhook secret is not UTF-8 text") from None
    if len(key) < _SHORTEST_KEY:
        msg = (
            f"the webhook secret is too short to sign with ({len(key)} bytes): give at least "
            f"{_SHORTEST_KEY}, such as python -c 'import secrets; print(secrets.token_urlsafe(32))'"
        )
        raise ConfigError(msg)
    return key


def webhooks_of(
    settings: Mapping[str, Any] | None, *, secret: str | None, allow: Sequence[str] = ()
) -> Webhooks:
    """The webhook settings of a `langgraph.json`'s `webhooks` object, the secret and `--webhook-allow`.

    LangGraph's own keys there (`url`, `headers`, ...) are named in a warning: actorgraph
    does not use them (its `allow` replaces `url.disable_loopback` and `url.disable_private_ips`).

    Raises:
        ConfigError: a bad value (named).
    """
    given = dict(settings or {})
    unknown = sorted(str(k) for k in given if k not in _FILE_KEYS)
    if unknown:
        known = [k for k in unknown if k in _LANGGRAPH_KEYS]
        warnings.warn(
            f"webhooks: {', '.join(unknown)} not used by actorgraph server (only allow, timeout and "
            f"retry_for are){'; see webhooks.allow for what url settings did' if known else ''}",
            stacklevel=2,
        )
    listed = given.get("allow", [])
    if not isinstance(listed, list) or not all(isinstance(item, str) for item in listed):
        raise ConfigError('webhooks.allow: give a list of hosts and networks, such as ["10.0.0.0/8"]')
    times = {k: given[k] for k in ("timeout", "retry_for") if k in given}
    return Webhooks(secret=secret, allow=(*listed, *allow), **times)


@dataclass(frozen=True, slots=True)
class Target:
    """A webhook URL, parsed and checked: its scheme, host (lower case), port and the text to POST to."""

    url: str
    scheme: str
    host: str
    port: int

    @property
    def host_header(self) -> str:
        """The `Host` header of a request to it (the port only when not the scheme's own)."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        default = 443 if self.scheme == "https" else 80
        return host if self.port == default else f"{host}:{self.port}"


def target_of(url: object) -> Target:
    """A webhook URL's parts, checked (without resolving its host).

    Raises:
        RefusedWebhookError: not text, too long, not http(s), with credentials, no host, a bad port.
    """
    if not isinstance(url, str):
        raise RefusedWebhookError("a webhook URL must be text")
    if len(url) > URL_LONGEST:
        raise RefusedWebhookError(f"the URL is longer than {URL_LONGEST} characters")
    if not url.isascii() or any(c.isspace() or ord(c) < 0x20 or ord(c) == 0x7F for c in url):  # noqa: PLR2004
        raise RefusedWebhookError("the URL holds spaces, control or non-ASCII characters (IDNA names: xn--)")
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise RefusedWebhookError(f"the URL cannot be read: {exc}") from None
    return _checked(url, parts, port)


def _checked(url: str, parts: SplitResult, port: int | None) -> Target:
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https"):
        raise RefusedWebhookError(
            f"a webhook URL must be http or https, not {parts.scheme or 'relative'!r:.20}"
        )
    if "@" in parts.netloc:
        raise RefusedWebhookError(
            "a webhook URL must not hold credentials (user:password@): sign with the secret"
        )
    host = (parts.hostname or "").rstrip(".")
    if not host:
        raise RefusedWebhookError("the URL names no host")
    if port == 0:
        raise RefusedWebhookError("the URL's port 0 is no port")
    return Target(url, scheme, host, port if port is not None else (443 if scheme == "https" else 80))


_NAT64: Final = ipaddress.ip_network("64:ff9b::/96")


def _reached(address: Address) -> Address:
    """The IPv4 address an IPv6 one carries to (mapped, 6to4, NAT64), else the address itself."""
    if isinstance(address, ipaddress.IPv4Address):
        return address
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    if address in _NAT64:
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return address


def _refusal(target: Target, address: Address, allowed: Allowed) -> str | None:
    """Why `address` may not be reached for `target`, or None when it may."""
    address = _reached(address)
    if allowed.host(target.host) or allowed.address(address):
        return None
    if address.is_global and not address.is_multicast:
        return None
    kind = next(
        (
            name
            for name, flag in (
                ("unspecified", address.is_unspecified),
                ("loopback", address.is_loopback),
                ("link-local", address.is_link_local),
                ("multicast", address.is_multicast),
                ("private", address.is_private),
            )
            if flag
        ),
        "non-public",
    )
    where = target.host if target.host == str(address) else f"{target.host} resolves to {address}, which"
    return (
        f"{where} is a {kind} address: webhooks go only to public addresses unless webhooks.allow "
        "names the host or its network"
    )


async def resolve(target: Target, allowed: Allowed) -> list[Address]:
    """The addresses of `target`'s host, resolved once, each one checked: where to connect.

    The caller bounds its time (`asyncio.timeout`).

    Raises:
        RefusedWebhookError: the host does not resolve, or one of its addresses may not be reached.
    """
    try:
        literal: Address | None = ipaddress.ip_address(target.host)
    except ValueError:
        literal = None
    if literal is not None:
        found = [literal]
    else:
        loop = asyncio.get_running_loop()
        try:
            infos = await loop.getaddrinfo(target.host, target.port, type=socket.SOCK_STREAM)
        except (OSError, UnicodeError) as exc:
            raise RefusedWebhookError(f"the host {target.host} does not resolve: {exc}") from None
        found = list(dict.fromkeys(ipaddress.ip_address(str(info[4][0]).split("%", 1)[0]) for info in infos))
    for address in found:
        why = _refusal(target, address, allowed)
        if why is not None:
            raise RefusedWebhookError(why)
    if not found:
        raise RefusedWebhookError(f"the host {target.host} resolves to no address")
    return found


async def check_webhook(url: object, webhooks: Webhooks | None) -> str:
    """A run's `webhook`, checked when the run (or the cron) is created; the URL.

    Raises:
        RefusedWebhookError: the server has no secret to sign with, or the URL may not be sent to (why).
    """
    if webhooks is None or webhooks.key is None:
        msg = (
            "webhook: this server signs webhooks and has no secret: start it with --webhook-secret "
            f"(or ${SECRET_VARIABLE}), or create_app(webhooks=Webhooks(secret=...))"
        )
        raise RefusedWebhookError(msg)
    try:
        target = target_of(url)
        async with asyncio.timeout(_RESOLVING):
            await resolve(target, webhooks.allowed)
    except RefusedWebhookError as exc:
        raise RefusedWebhookError(f"webhook: {exc}") from None
    except TimeoutError:
        raise RefusedWebhookError(
            f"webhook: the host {target.host} did not resolve within {_RESOLVING:g} s"
        ) from None
    return target.url
