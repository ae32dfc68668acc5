"""An entrypoint killed with SIGKILL after each of its five tasks in turn resumes without re-running one."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from children import report_of

pytestmark = pytest.mark.slow  # child processes killed with SIGKILL

HERE = Path(__file__).resolve().parents[1]
EXPECTED = 1
for _i in range(5):
    EXPECTED = EXPECTED * 2 + _i


@pytest.mark.parametrize("kill_after", range(5))
def test_killed_after_a_task_resumes_in_a_new_process_without_running_finished_tasks(
    kill_after: int, tmp_path: Path
) -> None:
    db, ledger, thread = str(tmp_path / "func.db"), str(tmp_path / "ledger.txt"), f"killed-{kill_after}"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")])}
    script = [sys.executable, str(HERE / "func_child.py")]
    victim = subprocess.run(
        [*script, "run", db, thread, ledger, str(kill_after)], env=env, timeout=60, check=False
    )
    assert victim.returncode == -signal.SIGKILL
    assert report_of("func_child.py", "resume", db, thread, ledger) == {"status": "done", "state": EXPECTED}
    lines = Counter(Path(ledger).read_text().split())
    assert lines == Counter({f"{e}:t{i}": 1 for i in range(5) for e in ("start", "end")})
