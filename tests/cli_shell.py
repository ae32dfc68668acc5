"""Runs `actorgraph` commands as a user does, each a new process in one folder (the CLI tests' shell)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

TESTS = Path(__file__).resolve().parent
SCRIPT = Path(sys.executable).parent / "actorgraph"
TIMEOUT = 60
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07")


class Shell:
    """Runs `actorgraph` commands in one folder, as separate processes."""

    def __init__(self, home: Path) -> None:
        self.home = home
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("ACTORGRAPH_")}
        path = os.pathsep.join(p for p in (str(TESTS), os.environ.get("PYTHONPATH")) if p)
        self.env |= {"PYTHONPATH": path, "CLI_TEST_DIR": str(home), "NO_COLOR": "1"}

    def argv(self, *args: str, script: bool = False) -> list[str]:
        return [str(SCRIPT), *args] if script else [sys.executable, "-m", "actorgraph.cli", *args]

    def __call__(
        self, *args: str, code: int | None = 0, stdin: str | None = None, script: bool = False
    ) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            self.argv(*args, script=script),
            cwd=self.home,
            env=self.env,
            input=stdin,
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
            check=False,
        )
        if code is not None:
            assert done.returncode == code, f"exit {done.returncode}\n{done.stdout}\n{done.stderr}"
        return done

    def json(self, *args: str, code: int = 0, script: bool = False) -> Any:
        done = self(*args, "--json", code=code, script=script)
        return json.loads(done.stdout)
