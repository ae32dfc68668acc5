"""The examples run as a user runs them: as scripts, in a fresh interpreter."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def run_example(name: str, *args: str) -> str:
    done = subprocess.run(
        [sys.executable, str(ROOT / "examples" / name), *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_quickstart_fans_out_and_joins() -> None:
    out = run_example("quickstart.py")
    for source in ("web", "papers", "news"):
        assert f"[{source}] 1 question(s) on actor models" in out
    assert "status: done, supersteps: 3" in out


def test_refine_loop_stops_when_good_enough() -> None:
    out = run_example("refine_loop.py")
    assert "after 2 revision(s), score 0.86" in out


def test_readme_commands_are_what_ci_runs() -> None:
    readme = (ROOT / "README.md").read_text()
    ci = (ROOT / ".ci" / "run").read_text()
    test_command = next(line for line in readme.splitlines() if "pytest" in line and "pip install" in line)
    assert test_command.strip() in ci.splitlines()
    first_lines = readme.split("```")[1]
    assert "examples/quickstart.py" in first_lines


def test_stream_progress_shows_progress_while_the_run_goes() -> None:
    out = run_example("stream_progress.py")
    lines = out.splitlines()
    assert "[####] 4/4 pages summarized" in lines
    first_progress = next(i for i, line in enumerate(lines) if "pages summarized" in line)
    assert first_progress < lines.index("page 1: 3 words")  # progress came before the result
    assert sum("doing" not in line and ": reading" in line for line in lines) == 4


def test_mermaid_example_prints_the_graph() -> None:
    out = run_example("mermaid.py")
    assert out.startswith("flowchart TD\n")
    assert '    v2 -.->|"write"| v0\n' in out
