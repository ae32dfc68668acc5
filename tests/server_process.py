"""`actorgraph server` as a child process on a free loopback port: its URL, its memory, its end.

For the tests that need the server apart from the test's own process: a client
in another language (`tests/server/test_server_js.py`), or the server's own
memory read from /proc (`tests/server/test_server_load.py`). The graphs are
those of `tests/server_graphs.py`, named with `-g NAME=server_graphs.py:FUNCTION`.
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
from dataclasses import dataclass
from pathlib import Path

import httpx

HERE = Path(__file__).resolve().parent
START_WAIT = 60.0
STOP_WAIT = 30.0


@dataclass
class ServerProcess:
    """A running `actorgraph server` child."""

    process: subprocess.Popen[bytes]
    port: int
    log: Path

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def rss(self) -> int:
        """The child's resident memory in bytes (VmRSS of /proc/PID/status)."""
        for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
        msg = f"no VmRSS in /proc/{self.process.pid}/status"
        raise AssertionError(msg)

    def output(self) -> str:
        """What the child wrote so far (its log), for a failing test's message."""
        return self.log.read_text(errors="replace")[-4000:]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def server_process(graphs: Sequence[str], folder: Path) -> Iterator[ServerProcess]:
    """`actorgraph server -g ...` on a SQLite file in `folder`, until the block ends (SIGTERM, then SIGKILL).

    Args:
        graphs: `NAME=FUNCTION` pairs of `tests/server_graphs.py`, e.g. `chat=chat_graph`.
        folder: where its database and its log go.
    """
    port = _free_port()
    log = folder / f"server-{port}.log"
    command = [sys.executable, "-m", "actorgraph.cli", "server", "--port", str(port)]
    command += ["--db", str(folder / "server.db")]
    for pair in graphs:
        name, function = pair.split("=", 1)
        command += ["-g", f"{name}={HERE / 'server_graphs.py'}:{function}"]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")])}
    with log.open("wb") as sink:
        process = subprocess.Popen(command, cwd=folder, env=env, stdout=sink, stderr=subprocess.STDOUT)
    running = ServerProcess(process, port, log)
    try:
        _wait_until_up(running)
        yield running
    finally:
        _stop(process)


def _wait_until_up(running: ServerProcess) -> None:
    deadline = time.monotonic() + START_WAIT
    while True:
        try:
            if httpx.get(f"{running.url}/ok", timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            pass
        if running.process.poll() is not None:
            msg = f"the server exited ({running.process.returncode}):\n{running.output()}"
            raise AssertionError(msg)
        if time.monotonic() > deadline:
            msg = f"the server did not answer /ok in {START_WAIT:.0f} s:\n{running.output()}"
            raise AssertionError(msg)
        time.sleep(0.1)


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(STOP_WAIT)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(STOP_WAIT)
