"""A throwaway PostgreSQL server for the tests: initdb in a temp dir, pg_ctl on a free port.

Usage::

    with PostgresServer() as server:
        dsn = server.dsn()
        server.stop()   # the server goes down (connections break)
        server.start()  # and comes back on the same port and DSN

The cluster trusts connections from loopback only, listens on 127.0.0.1 and
keeps its unix socket inside the temp dir. When the tests run as root (CI),
initdb refuses to run, so the server commands run as the `postgres` user (or
`nobody`) through `runuser`, and the temp dir is owned by that user.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import pwd
import re
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from types import TracebackType
from typing import Self

__all__ = ["PostgresNotInstalledError", "PostgresServer", "find_bindir"]

_COMMAND_TIMEOUT = 60.0  # seconds for any one server command
_READY_TIMEOUT = 30.0  # seconds for a started server to accept connections


class PostgresNotInstalledError(RuntimeError):
    """The PostgreSQL server binaries (initdb, pg_ctl) were not found."""


def _version_key(path: str) -> tuple[int, ...]:
    return tuple(int(n) for n in re.findall(r"\d+", path))


def find_bindir(search: Path = Path("/usr/lib/postgresql")) -> Path:
    """The directory holding initdb and pg_ctl: `pg_config --bindir`, else the newest `search/*/bin`."""
    candidates: list[Path] = []
    pg_config = shutil.which("pg_config")
    if pg_config:
        with contextlib.suppress(OSError, subprocess.SubprocessError):
            out = subprocess.run(
                [pg_config, "--bindir"], capture_output=True, text=True, timeout=10, check=True
            )
            candidates.append(Path(out.stdout.strip()))
    candidates.extend(sorted(search.glob("*/bin"), key=lambda p: _version_key(p.parent.name), reverse=True))
    for bindir in candidates:
        if (bindir / "initdb").is_file() and (bindir / "pg_ctl").is_file():
            return bindir
    raise PostgresNotInstalledError(
        "the PostgreSQL server binaries (initdb, pg_ctl) were not found via `pg_config --bindir` "
        f"or in {search}/*/bin. Install the postgresql package (Debian/Ubuntu: "
        "`apt-get install -y postgresql`) to run the PostgreSQL checkpointer tests."
    )


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _server_user() -> str | None:
    """The unprivileged user to run the server as, or None when not root."""
    if os.geteuid() != 0:
        return None
    for name in ("postgres", "nobody"):
        with contextlib.suppress(KeyError):
            pwd.getpwnam(name)
            return name
    raise PostgresNotInstalledError(
        "running as root, and neither a 'postgres' nor a 'nobody' user exists to run the "
        "PostgreSQL server as (initdb refuses to run as root); create one."
    )


class PostgresServer:
    """A PostgreSQL cluster in a temp dir, started on a free loopback port.

    Args:
        bindir: where initdb and pg_ctl are; found by `find_bindir()` when None.
    """

    def __init__(self, bindir: Path | None = None) -> None:
        self.bindir = bindir or find_bindir()
        self.user = _server_user()
        self.port = _free_port()
        self.root = Path(tempfile.mkdtemp(prefix="actorgraph-pg-"))
        self.data = self.root / "data"
        self.log = self.root / "server.log"
        self.running = False
        self._removed = False
        atexit.register(self.cleanup)
        try:
            if self.user is not None:
                info = pwd.getpwnam(self.user)
                os.chown(self.root, info.pw_uid, info.pw_gid)
            self.root.chmod(0o700)
            self._initdb()
        except BaseException:
            self.cleanup()
            raise

    def _run(self, *args: str, timeout: float = _COMMAND_TIMEOUT) -> subprocess.CompletedProcess[str]:
        command = [str(self.bindir / args[0]), *args[1:]]
        if self.user is not None:
            command = ["runuser", "-u", self.user, "--", *command]
        # Output goes to a file, never a pipe: the server that pg_ctl starts must not hold our pipe open.
        out_path = self.root / "command.out"
        with out_path.open("w+") as out:
            result = subprocess.run(
                command,
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                cwd=self.root,
                timeout=timeout,
                check=False,
                text=True,
            )
            out.seek(0)
            return subprocess.CompletedProcess(command, result.returncode, out.read(), "")

    def _check(self, result: subprocess.CompletedProcess[str], what: str) -> None:
        if result.returncode != 0:
            log = self.log.read_text(errors="replace")[-3000:] if self.log.exists() else ""
            raise RuntimeError(
                f"PostgreSQL test server: {what} failed (exit {result.returncode}):\n"
                f"{result.stdout[-3000:]}\n--- server log ---\n{log}"
            )

    def _initdb(self) -> None:
        result = self._run(
            "initdb", "-D", str(self.data), "-U", "postgres", "--auth=trust",
            "--encoding=UTF8", "--locale=C", "--no-sync", "--no-instructions",
        )  # fmt: skip
        self._check(result, "initdb")
        (self.data / "pg_hba.conf").write_text(
            "local all all trust\nhost all all 127.0.0.1/32 trust\n", encoding="utf-8"
        )
        with (self.data / "postgresql.conf").open("a", encoding="utf-8") as conf:
            conf.write(
                f"\nport = {self.port}\nlisten_addresses = '127.0.0.1'\n"
                f"unix_socket_directories = '{self.root}'\n"
                "fsync = off\nsynchronous_commit = off\nfull_page_writes = off\n"
                "shared_buffers = 16MB\nmax_connections = 60\n"
            )

    def dsn(self, dbname: str = "postgres") -> str:
        """A libpq connection string for a database of this server."""
        return f"host=127.0.0.1 port={self.port} user=postgres dbname={dbname} connect_timeout=5"

    def start(self) -> None:
        """Start the server and wait (bounded) until it accepts connections."""
        if self.running:
            return
        result = self._run(
            "pg_ctl", "-D", str(self.data), "-l", str(self.log), "-w", "-t", str(int(_READY_TIMEOUT)), "start"
        )
        self.running = True  # even on failure: stop() then cleans up a half-started server
        self._check(result, "pg_ctl start")
        self._wait_ready()

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + _READY_TIMEOUT
        while True:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                    pass
                ready = self._run("pg_isready", "-h", "127.0.0.1", "-p", str(self.port), timeout=10)
                if ready.returncode == 0:
                    return
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"PostgreSQL test server did not accept connections in {_READY_TIMEOUT} s")
            time.sleep(0.05)

    def stop(self) -> None:
        """Stop the server (fast shutdown: open connections are cut); harmless when it is stopped."""
        if not self.running:
            return
        result = self._run("pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "-t", "30", "stop")
        if result.returncode != 0 and (self.data / "postmaster.pid").exists():
            self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "-t", "30", "stop")
            self._kill_leftover()
        self.running = False

    def _kill_leftover(self) -> None:
        pid_file = self.data / "postmaster.pid"
        with contextlib.suppress(OSError, ValueError, IndexError):
            pid = int(pid_file.read_text().splitlines()[0])
            os.kill(pid, 9)

    def cleanup(self) -> None:
        """Stop the server and remove the cluster's directory; calling it again does nothing."""
        if self._removed:
            return
        try:
            self.stop()
        finally:
            self._removed = True
            shutil.rmtree(self.root, ignore_errors=True)
            atexit.unregister(self.cleanup)

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.cleanup()
