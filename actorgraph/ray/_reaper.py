"""The reaper of a local Ray: ends every process of its session once the driver that started it is gone.

Ray fate-shares only its first processes with the driver (the GCS and the
raylet get a parent-death signal); its workers notice the raylet's death seconds
later, running tasks meanwhile, and its agents never do. So `RayBackend` starts
this script beside a Ray it started (`python -I _reaper.py SESSION_DIR DRIVER_PID`,
stdlib only, in a session of its own so a signal to the driver's process group
spares it). It waits for its standard input to close: the driver closes it after
`ray.shutdown()`, and the kernel closes it when the driver dies, however it dies.
Then it kills, with SIGKILL, every process of the session (`session_processes`),
the driver excepted, until none is left.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

__all__ = ["main", "session_processes", "start"]

_QUIET_ROUNDS = 2  # scans that find nothing before it ends (a raylet may be starting a worker)
_MOST_SECONDS = 30.0


def start(session_dir: str) -> subprocess.Popen[bytes]:
    """Start the reaper of the Ray whose session folder is `session_dir`; close its stdin to let it reap."""
    return subprocess.Popen(  # noqa: S603 - this interpreter and this file
        [sys.executable, "-I", __file__, session_dir, str(os.getpid())],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )


def session_processes(session_dir: str, *, spare: frozenset[int] = frozenset()) -> list[int]:
    """The pids of the processes of the Ray session in `session_dir`.

    Those that name the folder on their command line (the GCS, the raylet, the agents),
    and Ray workers (titled `ray::...`) that hold a file open in it (their logs); a
    reader's `tail -f` of a log is not one of them.
    """
    name = os.path.basename(session_dir.rstrip("/"))  # noqa: PTH119 - a string, not a path, is matched
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) in spare:
            continue
        try:
            command = (entry / "cmdline").read_bytes().decode(errors="replace")
            if name in command or (command.startswith("ray::") and _holds(entry, name)):
                found.append(int(entry.name))
        except OSError:  # it ended meanwhile, or is not ours to read
            continue
    return found


def _holds(process: Path, name: str) -> bool:
    for fd in (process / "fd").iterdir():
        try:
            if name in str(fd.readlink()):
                return True
        except OSError:
            continue
    return False


def reap(session_dir: str, spare: frozenset[int]) -> int:
    """Kill the session's processes until `_QUIET_ROUNDS` scans find none (or `_MOST_SECONDS` pass)."""
    killed, quiet = 0, 0
    deadline = time.monotonic() + _MOST_SECONDS
    while quiet < _QUIET_ROUNDS and time.monotonic() < deadline:
        pids = session_processes(session_dir, spare=spare)
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
                killed += 1
            except OSError:
                continue
        quiet = 0 if pids else quiet + 1
        time.sleep(0.05)
    return killed


def main(argv: list[str]) -> int:
    """`_reaper.py SESSION_DIR DRIVER_PID`: wait for stdin to close, then reap the session."""
    session_dir, driver = argv
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a Ctrl-C meant for the driver: reap after it ends
    sys.stdin.buffer.read()  # returns when the driver closed the pipe or died
    reap(session_dir, frozenset({os.getpid(), int(driver)}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
