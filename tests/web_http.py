"""Real HTTP for the web inbox tests: the app served by uvicorn on a loopback port (in a thread of the
test), and requests sent as written (`http.client`, or bytes on a socket): no client normalises a path,
fills in a Host header or encodes a body on our behalf."""

from __future__ import annotations

import html
import http.client
import re
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import uvicorn

WAIT = 30.0


@dataclass
class Reply:
    """An HTTP answer: status, headers (lower-case names), body."""

    status: int
    headers: dict[str, str]
    body: bytes

    @property
    def text(self) -> str:
        return self.body.decode("utf-8", "replace")


@dataclass
class Http:
    """Requests to one server on 127.0.0.1, with its cookies."""

    port: int
    cookies: dict[str, str] = field(default_factory=dict)

    @property
    def host(self) -> str:
        return f"127.0.0.1:{self.port}"

    def request(  # noqa: PLR0913 - the parts of a request a test sets
        self,
        method: str,
        target: str,
        body: bytes = b"",
        *,
        host: str | None = None,
        content_type: str | None = "application/x-www-form-urlencoded",
        headers: dict[str, str] | None = None,
    ) -> Reply:
        """`method target` as written (the path sent byte for byte), Host `host` (default: the server's)."""
        sent = {"Host": host if host is not None else self.host, **(headers or {})}
        if self.cookies:
            sent["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        if body or method == "POST":
            sent["Content-Length"] = str(len(body))
            if content_type is not None:
                sent["Content-Type"] = content_type
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=WAIT)
        try:
            connection.putrequest(method, target, skip_host=True, skip_accept_encoding=True)
            for name, value in sent.items():
                connection.putheader(name, value)
            connection.endheaders(body or None)
            answer = connection.getresponse()
            reply = Reply(answer.status, {k.lower(): v for k, v in answer.getheaders()}, answer.read())
        finally:
            connection.close()
        cookie = reply.headers.get("set-cookie")
        if cookie:
            name, _, rest = cookie.partition("=")
            self.cookies[name] = rest.split(";", 1)[0]
        return reply

    def get(self, target: str, **options: Any) -> Reply:
        return self.request("GET", target, **options)

    def post(self, target: str, body: bytes | str, **options: Any) -> Reply:
        return self.request("POST", target, body.encode() if isinstance(body, str) else body, **options)

    def raw(self, data: bytes) -> bytes:
        """Bytes on a socket, and all the server says back (for requests http.client will not send)."""
        with socket.create_connection(("127.0.0.1", self.port), timeout=WAIT) as sock:
            sock.sendall(data)
            chunks = []
            while chunk := sock.recv(65536):
                chunks.append(chunk)
        return b"".join(chunks)


@contextmanager
def served(web: Any) -> Iterator[Http]:
    """`web` served by uvicorn on a free loopback port until the block ends (bounded start and stop)."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(web, log_level="warning", lifespan="off"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + WAIT
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            msg = "the test server did not start"
            raise RuntimeError(msg)
        time.sleep(0.02)
    try:
        yield Http(port)
    finally:
        server.should_exit = True
        thread.join(WAIT)
        sock.close()


def field_of(page: str, name: str) -> str:
    """The value of the first form field `name` in a page."""
    found = re.search(rf'name="{name}" value="([^"]*)"', page)
    assert found, f"no field {name} in the page"
    return html.unescape(found.group(1))


def hrefs(page: str) -> list[str]:
    """Every link and form target of a page, as the browser would request it."""
    return [html.unescape(h) for h in re.findall(r'(?:href|action)="([^"]*)"', page)]


def settled(http: Http, thread_url: str) -> dict[str, Any]:
    """Poll a thread's status.json until no run goes on (bounded)."""
    import json

    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        reply = http.get(f"{thread_url}/status.json")
        assert reply.status == 200, reply.text
        status: dict[str, Any] = json.loads(reply.body)
        if not status["running"] and status["status"] != "running":
            return status
        time.sleep(0.05)
    msg = f"{thread_url} still running after {WAIT} s"
    raise AssertionError(msg)
