"""A webhook receiver for tests: a real HTTP server on a loopback address, answering as the test scripts it.

`receiving(...)` serves on `host` (127.0.0.1, or another loopback address such
as 127.0.0.2, which Linux serves too) and a free port, records each delivery
(path, headers in lower case, body), and answers the Nth request (of any method) with the Nth
of `answers` (a status, or a status and headers), then `then`. With `hold`, a
request waits until the test releases it (a receiver that does not answer), and
`arrived` is set when the first request came. Every wait is bounded; the server
stops when the block ends.
"""

from __future__ import annotations

import http.server
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

WAIT = 30.0


@dataclass(frozen=True)
class Delivery:
    """One request the receiver got."""

    path: str
    headers: dict[str, str]
    body: bytes


@dataclass
class Receiver:
    """What a receiver got, and how it answers."""

    host: str
    answers: list[int | tuple[int, dict[str, str]]]
    then: int = 200
    hold: threading.Event | None = None
    port: int = 0
    deliveries: list[Delivery] = field(default_factory=list)
    arrived: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}/hooks/runs?team=a"

    def received(self) -> list[Delivery]:
        with self.lock:
            return list(self.deliveries)

    def by_run(self) -> dict[str, list[Delivery]]:
        runs: dict[str, list[Delivery]] = {}
        for delivery in self.received():
            runs.setdefault(delivery.headers["webhook-id"], []).append(delivery)
        return runs

    def answer(self, body: bytes, path: str, headers: dict[str, str]) -> tuple[int, dict[str, str]]:
        with self.lock:
            self.deliveries.append(Delivery(path, headers, body))
            given = self.answers.pop(0) if self.answers else self.then
        self.arrived.set()
        if self.hold is not None:
            self.hold.wait(WAIT)
        return given if isinstance(given, tuple) else (given, {})


def _handler(receiver: Receiver) -> type[http.server.BaseHTTPRequestHandler]:
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("content-length") or 0))
            headers = {k.lower(): v for k, v in self.headers.items()}
            status, extra = receiver.answer(body, self.path, headers)
            try:
                self.send_response(status)
                for name, value in extra.items():
                    self.send_header(name, value)
                self.send_header("content-length", "2")
                self.end_headers()
                self.wfile.write(b"ok")
            except OSError:  # the sender is gone (killed while the answer was held)
                self.close_connection = True

        do_GET = do_PUT = do_POST  # noqa: N815 - http.server's names; a redirect followed may change the method

        def log_message(self, *_args: Any) -> None:
            pass

    return Handler


@contextmanager
def receiving(
    answers: Sequence[int | tuple[int, dict[str, str]]] = (),
    *,
    then: int = 200,
    host: str = "127.0.0.1",
    hold: threading.Event | None = None,
) -> Iterator[Receiver]:
    """A receiver on `host` and a free port until the block ends."""
    receiver = Receiver(host, list(answers), then, hold)
    server = http.server.ThreadingHTTPServer((host, 0), _handler(receiver))
    server.daemon_threads = True
    receiver.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield receiver
    finally:
        if hold is not None:
            hold.set()
        server.shutdown()
        server.server_close()
        thread.join(WAIT)


def until(found: Callable[[], Any], what: str, wait: float = WAIT) -> Any:
    """Wait (bounded) until `found()` is true; its value."""
    deadline = time.monotonic() + wait
    while not (value := found()):
        assert time.monotonic() < deadline, what
        time.sleep(0.02)
    return value
