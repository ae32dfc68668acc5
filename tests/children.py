"""Running a test's child script in a fresh interpreter, and reading the JSON line it prints last."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent


def report_of(script: str, *args: str, timeout: float = 60) -> Any:
    """Run `tests/<script> args...` to its end and return the JSON value of its last line.

    Raises:
        AssertionError: the child failed (its stderr is the message).
    """
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run(
        [sys.executable, str(HERE / script), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])
