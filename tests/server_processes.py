"""`actorgraph server` and `actorgraph worker --config` as child processes of a test, on one store.

`Processes` starts them (each logging to a file of the test's folder), waits
until a server answers `/ok`, kills one with SIGKILL when a test asks, and stops
every one it started when the test ends (SIGTERM, then SIGKILL), each wait bounded.
The graphs are `-g NAME=tests/server_queue_graphs.py:...` and `tests/server_graphs.py`'s.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

TESTS = Path(__file__).resolve().parent
WAIT = 60.0
GRAPHS = (
    f"steps={TESTS / 'server_queue_graphs.py'}:steps",
    f"ledger={TESTS / 'server_queue_graphs.py'}:ledger",
    f"asking={TESTS / 'server_queue_graphs.py'}:asking",
    f"slow={TESTS / 'server_graphs.py'}:slow_graph",
)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@dataclass
class Processes:
    """Servers and workers of one test on one store (`--db PATH` or `--dsn DSN`)."""

    folder: Path
    store: Sequence[str]
    env: dict[str, str] = field(default_factory=dict)
    children: list[subprocess.Popen[bytes]] = field(default_factory=list)

    def _start(self, argv: Sequence[str], log: str) -> subprocess.Popen[bytes]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("ACTORGRAPH_")}
        env |= {"PYTHONPATH": os.pathsep.join(p for p in (str(TESTS), os.environ.get("PYTHONPATH")) if p)}
        with (self.folder / log).open("a") as out:  # the child keeps its own copy of the file
            child = subprocess.Popen(
                [sys.executable, "-m", "actorgraph.cli", *argv], env=env | self.env, cwd=self.folder,
                stdout=out, stderr=subprocess.STDOUT,
            )  # fmt: skip
        self.children.append(child)
        return child

    def server(
        self, *, lease: float = 2.0, concurrency: int = 16, log: str = "server.log", extra: Sequence[str] = ()
    ) -> str:
        """Start `actorgraph server` on the store (with `extra` options); its URL once it answers."""
        port = free_port()
        argv = ["server", *(a for g in GRAPHS for a in ("-g", g)), *self.store, "--port", str(port), *extra]
        child = self._start([*argv, "--lease", str(lease), "--concurrency", str(concurrency)], log)
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + WAIT
        while True:
            try:
                if httpx.get(f"{url}/ok", timeout=1.0).status_code == 200:
                    return url
            except httpx.HTTPError:
                pass
            if child.poll() is not None or time.monotonic() > deadline:
                msg = f"the server did not start: {(self.folder / log).read_text()[-2000:]}"
                raise RuntimeError(msg)
            time.sleep(0.1)

    def worker(
        self, *, name: str, lease: float = 2.0, log: str = "worker.log", extra: Sequence[str] = ()
    ) -> subprocess.Popen[bytes]:
        """Start `actorgraph worker -g ...` (the server's graphs) on the store (with `extra` options)."""
        argv = ["worker", *(a for g in GRAPHS for a in ("-g", g)), *self.store, "--name", name, *extra]
        return self._start([*argv, "--lease", str(lease)], log)

    def kill(self, child: subprocess.Popen[bytes] | None = None) -> None:
        """SIGKILL a child (the last started by default) and reap it."""
        child = child or self.children[-1]
        child.send_signal(signal.SIGKILL)
        child.wait(WAIT)

    def stop(self) -> None:
        """Stop every child still running: SIGTERM, then SIGKILL after a bound."""
        for child in self.children:
            if child.poll() is None:
                child.send_signal(signal.SIGTERM)
        for child in self.children:
            try:
                child.wait(20)
            except subprocess.TimeoutExpired:
                child.kill()
                child.wait(5)

    def logs(self) -> str:
        return "\n".join(p.read_text() for p in sorted(self.folder.glob("*.log")))


@contextmanager
def processes(folder: Path, store: Sequence[str], **env: Any) -> Iterator[Processes]:
    """Children on one store, stopped when the block ends; `env` is added to theirs."""
    running = Processes(folder, store, {k: str(v) for k, v in env.items()})
    try:
        yield running
    finally:
        running.stop()
