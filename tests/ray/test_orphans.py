"""A driver killed with SIGKILL takes its Ray with it: no process left, no task of its run goes on.

The driver is a real child process (`ray_orphan_child.py`) with 200 tasks in
flight, each appending "start:<i>", sleeping, then appending "end:<i>" (its side
effect) to a ledger. The test finds the processes of the child's Ray two ways
that do not rely on the backend's own reaper: every descendant of the child
before the kill, and every process that names the Ray session's folder or holds
a file open in it. After the kill, within a bounded time, none may be left, and
no line may land in the ledger; a new process then resumes the run, and every
task's side effect happens exactly once.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # starts two Rays in child processes

pytest.importorskip("ray", reason='the Ray backend needs Ray: pip install -e ".[ray]"')

HERE = Path(__file__).resolve().parents[1]  # tests/, where the child script is
TASKS = 200
GONE_WITHIN = 10.0  # seconds: the bound on the last process of the killed driver's Ray


def test_a_driver_killed_mid_run_leaves_no_ray_process_and_no_task_running(tmp_path: Path) -> None:
    target, ledger = str(tmp_path / "runs.db"), tmp_path / "ledger.txt"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")])}
    env |= {"TASKS": str(TASKS), "SLEEP": "5"}
    command = [sys.executable, str(HERE / "ray_orphan_child.py")]
    run = [*command, "run", target, str(ledger)]
    child = subprocess.Popen(run, env=env, stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None
        session = json.loads(child.stdout.readline())["session_dir"]
        _wait_for_starts(ledger, TASKS, deadline=time.monotonic() + 120)
        family = _descendants(child.pid)
        assert len(family) >= 4, family  # the GCS, the raylet, the partitions at least
        before = ledger.read_text()
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait(30)
    left = _wait_until_gone(family, session, GONE_WITHIN)
    assert left == [], f"processes of the killed driver's Ray still alive after {GONE_WITHIN} s: {left}"
    time.sleep(1.0)  # what a surviving task would have written by now
    assert ledger.read_text() == before  # no task started or ended after the kill
    assert Counter(before.split()) == Counter(f"start:{i}" for i in range(TASKS))

    resume = [*command, "resume", target, str(ledger)]
    resumed = subprocess.run(resume, env=env, capture_output=True, text=True, timeout=300, check=False)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert json.loads(resumed.stdout.strip().splitlines()[-1]) == {"status": "done", "done": TASKS}
    lines = Counter(ledger.read_text().split())
    assert all(lines[f"end:{i}"] == 1 for i in range(TASKS))  # each side effect exactly once
    assert all(lines[f"start:{i}"] == 2 for i in range(TASKS))  # killed mid-task, started again


def _wait_for_starts(ledger: Path, count: int, *, deadline: float) -> None:
    while time.monotonic() < deadline:
        if ledger.exists() and ledger.read_text().count("start:") >= count:
            return
        time.sleep(0.05)
    pytest.fail(f"the child never had {count} tasks in flight")


def _descendants(root: int) -> set[int]:
    """Every process below `root` now (by parent pid)."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        try:
            stat = (entry / "stat").read_text() if entry.name.isdigit() else ""
        except OSError:
            continue
        if stat:
            parents[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
    found, frontier = set(), {root}
    while frontier:
        frontier = {pid for pid, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


def _alive(pid: int) -> bool:
    """Running, not a zombie waiting for its parent."""
    try:
        return (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _in_session(pid: int, name: str) -> bool:
    """Whether `pid` names the session folder on its command line or holds a file open in it."""
    proc = Path("/proc") / str(pid)
    try:
        if name in proc.joinpath("cmdline").read_bytes().decode(errors="replace"):
            return True
        return any(name in str(fd.readlink()) for fd in proc.joinpath("fd").iterdir())
    except OSError:
        return False


def _wait_until_gone(family: set[int], session: str, within: float) -> list[str]:
    """The processes still alive after `within` seconds: the family, and any process of the session."""
    name = Path(session).name
    deadline = time.monotonic() + within
    while True:
        everyone = {int(e.name) for e in Path("/proc").iterdir() if e.name.isdigit()} - {os.getpid()}
        left = sorted(p for p in (family | {p for p in everyone if _in_session(p, name)}) if _alive(p))
        if not left or time.monotonic() > deadline:
            return [_title(p) for p in left]
        time.sleep(0.1)


def _title(pid: int) -> str:
    try:
        command = (Path("/proc") / str(pid) / "cmdline").read_bytes().replace(b"\0", b" ").strip()
    except OSError:
        return str(pid)
    return f"{pid} {command[:60].decode(errors='replace')}"
