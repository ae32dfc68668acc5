"""The agent across processes: killed among three tool calls, and approved from another process."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
from agent_child import model
from children import report_of

from actorgraph.checkpoint import SqliteCheckpointer
from actorgraph.prebuilt import create_react_agent

pytestmark = pytest.mark.slow  # child processes, one killed with SIGKILL

HERE = Path(__file__).resolve().parents[1]


def _finished_calls(db: str, thread: str) -> set[str]:
    """The tool calls the store holds as finished (the tools subgraph's tasks)."""
    checkpointer = SqliteCheckpointer(db)
    try:
        with create_react_agent(model, [], checkpointer=checkpointer) as reader:
            try:
                snap = reader.get_state(thread, subgraphs=True)
            except Exception:
                return set()
            done: set[str] = set()
            for inner in snap.subgraphs.values():
                if inner.superstep is not None:
                    done |= {k for k, r in inner.superstep.results.items() if r.status == "ok"}
            return done
    finally:
        checkpointer.close()


def test_sigkill_among_three_tool_calls_reruns_only_the_unfinished_one(tmp_path: Path) -> None:
    db, ledger, thread = str(tmp_path / "agent.db"), str(tmp_path / "ledger.txt"), "killed"
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")]),
        "BLOCK": "1",
    }
    victim = subprocess.Popen(
        [sys.executable, str(HERE / "agent_child.py"), "run", db, thread, ledger], env=env
    )
    try:
        deadline = time.monotonic() + 60
        while _finished_calls(db, thread) != {"call:0", "call:1"}:
            assert time.monotonic() < deadline, "the child never recorded the two quick tool calls"
            assert victim.poll() is None, "the child ended before it was killed"
            time.sleep(0.05)
    finally:
        victim.send_signal(signal.SIGKILL)
        victim.wait(30)
    assert victim.returncode == -signal.SIGKILL
    report = report_of("agent_child.py", "resume", db, thread, ledger)
    assert report == {"status": "done", "tools": ["a0", "b1", "c2"]}
    lines = Counter(Path(ledger).read_text().split())
    assert (lines["start:a"], lines["start:b"]) == (1, 1), "finished calls must not run again"
    assert (lines["start:c"], lines["end:c"]) == (2, 1)


def test_a_person_approves_the_tool_calls_from_another_process(tmp_path: Path) -> None:
    db, ledger, thread = str(tmp_path / "agent.db"), str(tmp_path / "ledger.txt"), "approval"
    assert report_of("agent_child.py", "ask", db, thread, ledger) == {"status": "interrupted", "tools": []}
    assert not Path(ledger).exists(), "no tool may run before the approval"
    assert report_of("agent_child.py", "approve", db, thread, ledger) == {
        "status": "done",
        "tools": ["a0", "b1", "c2"],
    }
    assert sorted(Path(ledger).read_text().split()) == sorted(
        f"{e}:{n}" for n in "abc" for e in ("start", "end")
    )
