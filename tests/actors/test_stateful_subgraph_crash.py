"""A parent whose stateful subgraph is killed with SIGKILL mid-run resumes in another process.

The subgraph (`compile(checkpointer=True)`) keeps its log between the parent's
turns. The second turn is killed inside the subgraph, after its first inner
vertex finished; `invoke(None)` in a new process continues the subgraph's run
(the finished vertex does not run again, the turn's input is applied once) and
ends equal to the same two turns uninterrupted.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
import stateful_child
from children import report_of

from actorgraph.checkpoint import MemoryCheckpointer

pytestmark = pytest.mark.slow  # processes killed with SIGKILL

HERE = Path(__file__).resolve().parents[1]  # tests/, where the helper scripts are


def started(ledger: Path, line: str, deadline: float) -> None:
    """Wait until the child wrote `line` to its ledger."""
    while time.monotonic() < deadline:
        if ledger.exists() and line in ledger.read_text().split():
            return
        time.sleep(0.05)
    pytest.fail(f"the child never wrote {line!r}")


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
def test_sigkill_inside_a_stateful_subgraph_then_resume_in_a_new_process(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    target = str(tmp_path / "runs.db") if kind == "sqlite" else request.getfixturevalue("postgres_db")
    ledger = tmp_path / "ledger.txt"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")])}
    args = ["run", kind, target, "chat", str(ledger)]
    victim = subprocess.Popen(
        [sys.executable, str(HERE / "stateful_child.py"), *args], env={**env, "BLOCK": "1"}
    )
    try:
        started(ledger, "start:slow:2", time.monotonic() + 60)
    finally:
        victim.send_signal(signal.SIGKILL)
        victim.wait(30)
    assert victim.returncode == -signal.SIGKILL

    final = report_of("stateful_child.py", "resume", kind, target, "chat", str(ledger))

    with stateful_child.build(None).compile(MemoryCheckpointer()) as app:
        app.invoke({"turn": 1}, thread_id="reference")
        assert final == app.invoke({"turn": 2}, thread_id="reference").state
    assert final["log"] == ["asked:1", "note:1", "slow:1", "asked:2", "note:2", "slow:2"]
    lines = Counter(ledger.read_text().split())
    assert lines["start:note:2"] == 1, "finished before the kill: never run again"
    assert (lines["start:slow:2"], lines["end:slow:2"]) == (2, 1)  # killed once, then finished
    assert (lines["start:note:1"], lines["start:slow:1"]) == (1, 1)
