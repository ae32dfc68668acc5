"""A process killed with SIGKILL in the middle of a superstep loses no finished vertex."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import crash_child
import pytest

from actorgraph.checkpoint import MemoryCheckpointer

pytestmark = pytest.mark.slow  # processes killed with SIGKILL

HERE = Path(__file__).resolve().parents[1]  # tests/, where the helper scripts are


def child(*args: str, block: bool = False) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")])}
    if block:
        env["BLOCK"] = "1"
    else:
        env.pop("BLOCK", None)
    return subprocess.Popen([sys.executable, str(HERE / "crash_child.py"), *args], env=env)


def wait_for(  # noqa: PLR0913 - what to poll for, and until when
    kind: str, target: str, thread: str, want: set[str], *, deadline: float, status: str = "ok"
) -> None:
    """Poll the store from this process until the tasks in `want` are recorded with `status`."""
    store = crash_child.store(kind, target)
    try:
        with crash_child.graph_for(thread, None).compile(store) as reader:
            while time.monotonic() < deadline:
                try:
                    results = reader.get_state(thread).superstep.results
                except Exception:
                    results = {}
                if want <= {k for k, r in results.items() if r.status == status}:
                    return
                time.sleep(0.05)
    finally:
        store.close()
    pytest.fail(f"the child never recorded {sorted(want)} as {status}")


def expected_state() -> Any:
    with crash_child.build(None).compile(MemoryCheckpointer()) as app:
        return app.invoke({"items": []}, thread_id="reference").state


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
def test_sigkill_mid_superstep_then_resume_in_a_new_process(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    target = str(tmp_path / "runs.db") if kind == "sqlite" else request.getfixturevalue("postgres_db")
    ledger = str(tmp_path / "ledger.txt")
    thread = f"crash-{kind}"
    victim = child("run", kind, target, thread, ledger, block=True)
    try:
        wait_for(kind, target, thread, {"w0", "w1", "w2"}, deadline=time.monotonic() + 60)
    finally:
        victim.send_signal(signal.SIGKILL)
        victim.wait(30)
    assert victim.returncode == -signal.SIGKILL
    survivor = child("resume", kind, target, thread, ledger)
    assert survivor.wait(60) == 0

    lines = Counter(Path(ledger).read_text().split())
    for name in ("w0", "w1", "w2"):
        assert lines[f"start:{name}"] == 1, f"{name} finished before the kill and must not run again"
    for name in ("w3", "w4"):
        assert lines[f"start:{name}"] == 2  # unfinished at the kill: run again
        assert lines[f"end:{name}"] == 1
    assert lines["start:total"] == 1
    store = crash_child.store(kind, target)
    try:
        with crash_child.build(None).compile(store) as reader:
            snap = reader.get_state(thread)
    finally:
        store.close()
    assert snap.status == "done"
    assert sorted(snap.state["items"]) == sorted(expected_state()["items"])


def test_a_crash_while_the_error_handler_runs_resumes_the_handler_not_the_vertex(tmp_path: Path) -> None:
    target = str(tmp_path / "handler.db")
    ledger = str(tmp_path / "ledger.txt")
    thread = "handler-crash"
    victim = child("run", "sqlite", target, thread, ledger, block=True)
    try:
        wait_for("sqlite", target, thread, {"pay"}, deadline=time.monotonic() + 60, status="error")
        deadline = time.monotonic() + 30
        while "start:handler" not in Path(ledger).read_text() and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        victim.send_signal(signal.SIGKILL)
        victim.wait(30)
    assert child("resume", "sqlite", target, thread, ledger).wait(60) == 0
    lines = Counter(Path(ledger).read_text().split())
    assert lines["start:pay"] == 1  # the failed vertex is not run again
    assert lines["start:handler"] == 2 and lines["end:handler"] == 1
    store = crash_child.store("sqlite", target)
    try:
        with crash_child.graph_for(thread, None).compile(store) as reader:
            snap = reader.get_state(thread)
    finally:
        store.close()
    assert snap.status == "done"
    assert snap.state == {"items": [], "paid": False, "why": "payment API down"}
