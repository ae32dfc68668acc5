"""The sockets `serve` listens on, bound before the server starts: a bind failure is one line, exit 5."""

from __future__ import annotations

import errno
import socket
from contextlib import suppress

from actorgraph.cli._codes import UNBOUND
from actorgraph.cli._exits import CommandError

__all__ = ["close", "listen", "url"]

_WHAT_TO_DO = {
    errno.EADDRINUSE: "something else listens there: stop it, or give another --port",
    errno.EADDRNOTAVAIL: "it is not an address of this machine: give one of its addresses "
    "(127.0.0.1, or 0.0.0.0 for all)",
    errno.EACCES: "ports below 1024 need privileges: give --port 1024 or above",
}


def url(host: str, port: int) -> str:
    """`http://HOST:PORT/`, an IPv6 address in brackets."""
    return f"http://[{host}]:{port}/" if ":" in host else f"http://{host}:{port}/"


def _addresses(host: str, port: int) -> list[tuple[int, tuple[object, ...]]]:
    """The (family, address) pairs HOST names, each once (a name may resolve to IPv4 and IPv6 both)."""
    try:
        found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except (OSError, UnicodeError, ValueError) as exc:  # a name that does not resolve, or is not a name
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        msg = (
            f"cannot serve on --host {host!r}: {reason}; give an address of this machine "
            "(127.0.0.1, 0.0.0.0 for all, ::1) or a name that resolves to one"
        )
        raise CommandError(msg, code=UNBOUND) from None
    return list(dict.fromkeys((family, address) for family, _, _, _, address in found))


def _bound(family: int, address: tuple[object, ...]) -> socket.socket:
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as asyncio does: TIME_WAIT is no bar
        if family == socket.AF_INET6:  # its IPv4 twin gets its own socket
            sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
        sock.bind(address)
    except OSError:
        sock.close()
        raise
    return sock


def listen(host: str, port: int) -> list[socket.socket]:
    """Sockets bound to every address HOST names, on PORT (0: one free port, the same for all).

    Raises:
        CommandError: HOST does not resolve, or an address cannot be bound (in use,
            not this machine's, a privileged port): exit 5, saying what to do.
    """
    sockets: list[socket.socket] = []
    try:
        for family, address in _addresses(host, port):
            if sockets and port == 0:  # the port the first one got
                address = (address[0], sockets[0].getsockname()[1], *address[2:])  # noqa: PLW2901
            sockets.append(_bound(family, address))
    except OSError as exc:
        close(sockets)
        hint = _WHAT_TO_DO.get(exc.errno or 0, "give another --host or --port")
        msg = f"cannot serve on {url(host, port)}: {exc.strerror or exc}; {hint}"
        raise CommandError(msg, code=UNBOUND) from None
    return sockets


def close(sockets: list[socket.socket]) -> None:
    """Close the sockets (a server stopped, or never started)."""
    for sock in sockets:
        with suppress(OSError):
            sock.close()
