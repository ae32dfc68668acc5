"""Joining or starting Ray, with bounded waits and the settings a sandboxed machine needs."""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import subprocess
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from actorgraph._model.errors import BackendError, MissingDependencyError
from actorgraph.ray._code import search_path
from actorgraph.ray._reaper import start as start_reaper

__all__ = ["Connection", "connect", "import_ray", "sandbox_defaults"]

# Set before Ray is imported: bind a local node to loopback only, never write an auth token,
# never report usage. A user's own values win.
_ENVIRONMENT = {
    "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0",
    "RAY_AUTH_MODE": "disabled",
    "RAY_USAGE_STATS_ENABLED": "0",
}


def sandbox_defaults() -> None:
    """Ray's environment for a local node on loopback only, unless set (read when Ray is imported)."""
    for name, value in _ENVIRONMENT.items():
        os.environ.setdefault(name, value)


def import_ray() -> Any:
    """`ray`, imported with the sandbox settings.

    Raises:
        MissingDependencyError: Ray is not installed.
    """
    sandbox_defaults()
    try:
        import ray  # noqa: PLC0415 - only the Ray backend imports Ray
    except ImportError as exc:
        msg = 'the Ray backend needs Ray: pip install "actorgraph[ray]"'
        raise MissingDependencyError(msg) from exc
    return ray


@dataclass(frozen=True, slots=True)
class Connection:
    """What the backend keeps of a Ray it joined or started.

    Attributes:
        release: set after `ray.shutdown()` to let the thread that started Ray end
            (None: Ray was already running in this process).
        reaper: the process that ends every process of a Ray started here once this
            one is gone (`_reaper`); None when Ray was joined, not started.
    """

    release: threading.Event | None = None
    reaper: subprocess.Popen[bytes] | None = None

    def close(self) -> None:
        """After `ray.shutdown()`: let the starting thread end, and the reaper reap what is left."""
        if self.release is not None:
            self.release.set()
        if self.reaper is not None and self.reaper.stdin is not None:
            self.reaper.stdin.close()
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.reaper.wait(10)


def connect(address: str | None, *, num_cpus: int | None, wait: float, init: dict[str, Any]) -> Connection:
    """Join the Ray cluster at `address`, or start a local one that dies with this process.

    Ray's first processes die with the thread that started them (Linux's parent-death
    signal is per thread), so `ray.init` runs on a thread of its own that lives
    until the connection is closed (after `ray.shutdown()`). The rest of a Ray
    started here (workers, agents) is ended by a reaper process when this one
    ends, however it ends (`_reaper`).

    Returns:
        What `close()` needs after `ray.shutdown()`: the starting thread's event and,
        for a Ray started here, its reaper.

    Args:
        address: None (join the local cluster if one runs, else start one), `"auto"`,
            `"host:port"` or `"ray://host:port"`.
        num_cpus: the CPUs of a Ray started here (None: the machine's).
        wait: the most seconds to wait for the cluster to answer.
        init: more keyword arguments for `ray.init`.

    Raises:
        BackendError: nothing answers at the address, or Ray did not start within `wait`.
    """
    ray = import_ray()
    if ray.is_initialized():
        return Connection()
    target = _resolve(address)
    if target is not None:
        _probe(target, wait)
    options: dict[str, Any] = {
        "include_dashboard": False,
        "logging_level": logging.WARNING,
        "log_to_driver": True,
    }
    if target is None:  # "local": never a stale cluster Ray would find by itself
        options |= {"address": "local", "num_cpus": num_cpus}
    else:
        options["address"] = target
    options["job_config"] = ray.job_config.JobConfig(code_search_path=search_path())
    options |= init
    logging.getLogger("ray._private.worker").addFilter(_no_sigterm_notice)
    release = _bounded(lambda: ray.init(**options), wait, address)
    node = getattr(ray._private.worker, "_global_node", None)  # noqa: SLF001 - its session folder
    if target is not None or node is None:
        return Connection(release)
    return Connection(release, start_reaper(node.get_session_dir_path()))


def _no_sigterm_notice(record: logging.LogRecord) -> bool:
    """Drop Ray's notice that `ray.init` ran off the main thread: it does, on purpose (see `connect`)."""
    return not record.getMessage().startswith("SIGTERM handler is not set")


def _resolve(address: str | None) -> str | None:
    """The address to join, or None to start a local Ray."""
    if address == "local":  # always a Ray of our own
        return None
    if address is None:  # join a cluster started here if it answers, else start one
        found = _running_here()
        try:
            return _probe(found, 2.0) if found is not None else None
        except BackendError:  # a stale marker left by a cluster that is gone
            return None
    if address == "auto":
        found = os.environ.get("RAY_ADDRESS") or _running_here()
        if found is None:
            msg = (
                'RayBackend(address="auto") found no running Ray cluster on this machine '
                "(no RAY_ADDRESS, no cluster started with `ray start --head`); start one, "
                "or give its address, or address=None to start a local Ray"
            )
            raise BackendError(msg)
        return found
    return address


def _running_here() -> str | None:
    """The address of a cluster started on this machine with `ray start`, if any."""
    marker = Path("/tmp/ray/ray_current_cluster")  # noqa: S108 - where `ray start` writes it
    try:
        text = marker.read_text().strip()
    except OSError:
        return None
    return text or None


def _probe(address: str, wait: float) -> str:
    """Refuse an address where nothing accepts a connection (Ray itself would retry for minutes)."""
    parts = urlsplit(address if "://" in address else f"tcp://{address}")
    host, port = parts.hostname, parts.port
    if host is None or port is None:
        msg = f"RayBackend(address={address!r}): give host:port, ray://host:port or 'auto'"
        raise BackendError(msg)
    try:
        with socket.create_connection((host, port), timeout=min(wait, 5.0)):
            pass
    except OSError as exc:
        msg = (
            f"RayBackend(address={address!r}): nothing answers at {host}:{port} ({exc}); "
            "start the cluster (`ray start --head`), check the address, or use address=None "
            "for a local Ray"
        )
        raise BackendError(msg) from None
    return address


def _bounded(start: Any, wait: float, address: str | None) -> threading.Event:
    """Run `ray.init` on a thread that then waits for the returned event; wait at most `wait` s for it."""
    failure: list[BaseException] = []
    started, release = threading.Event(), threading.Event()

    def run() -> None:
        try:
            start()
        except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread
            failure.append(exc)
        started.set()
        if not failure:
            release.wait()

    thread = threading.Thread(target=run, name="actorgraph-ray", daemon=True)
    thread.start()
    if not started.wait(wait):
        msg = (
            f"Ray did not start or answer within {wait:.0f} s (address={address!r}); "
            "check the cluster (`ray status`), or raise RayBackend(connect_timeout=...)"
        )
        raise BackendError(msg)
    if failure:
        msg = f"Ray could not start or join the cluster (address={address!r}): {failure[0]}"
        raise BackendError(msg) from failure[0]
    return release
