"""Large values are shown cut, with their size and the command that shows them whole.

`cli_graphs:large` asks a question holding 50 MB of text, then keeps it in its state.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_shell import Shell

pytestmark = pytest.mark.slow  # a 50 MB state through new processes

SIZE = 50_000_000
BOUND = 20_000  # characters a person's screen gets of a thread, whatever its size


@pytest.fixture
def sh(tmp_path: Path) -> Shell:
    return Shell(tmp_path)


@pytest.mark.timeout(180)
def test_a_50_mb_state_and_question_are_shown_cut_and_whole_on_request(sh: Shell) -> None:
    paused = sh("run", "cli_graphs:large", "--thread", "big", "--input", json.dumps({"size": SIZE}), code=3)
    assert len(paused.stdout) < BOUND
    asked = sh("show", "big").stdout
    assert len(asked) < BOUND
    assert '"question": "keep it?"' in asked
    assert (
        "    ... cut: showing 4,000 of 50,000,036 characters, 47.7 MiB; all of it: actorgraph show big --full"
        in asked
    )

    done = sh("answer", "big", "yes")
    assert len(done.stdout) < BOUND and "all of it: actorgraph show big --full" in done.stdout
    shown = sh("show", "big").stdout
    assert len(shown) < BOUND
    assert shown.startswith('thread big: done · superstep 1\n{\n  "size": 50000000,\n  "blob": "xxxx')
    assert (
        "... cut: showing 4,000 of 50,000,055 characters, 47.7 MiB; all of it: actorgraph show big --full"
        in shown
    )

    whole = sh("show", "big", "--full").stdout
    assert len(whole) > SIZE and "cut:" not in whole
    record = json.loads(sh("show", "big", "--json").stdout)  # --json keeps values whole
    assert len(record["state"]["blob"]) == SIZE
