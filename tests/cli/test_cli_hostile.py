"""Hostile names, values and arguments, as an attacker would give them to the command line.

A graph (`cli_graphs:hostile`) whose name, vertex names, state, question and
error hold terminal escape sequences, C1 controls, a bidi override and Rich
markup: nothing of it may reach the terminal raw, nor be read as markup. Typed
arguments (JSON nested 100,000 deep, thread ids the API refuses) are usage
errors in one line, and the commands printed to type next quote every id.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import time
from pathlib import Path

import pytest
from cli_graphs import C1_AND_BIDI, ESC
from cli_shell import TIMEOUT, Shell

pytestmark = pytest.mark.slow  # every command a new process

RAW = ("\x1b", "\x07", "\x9b", "\u202e")


@pytest.fixture
def sh(tmp_path: Path) -> Shell:
    return Shell(tmp_path)


def _clean(done: subprocess.CompletedProcess[str]) -> str:
    """Everything a command printed, after checking that no control character is in it raw."""
    printed = done.stdout + done.stderr
    for raw in RAW:
        assert raw not in printed, f"{raw!r} printed raw:\n{printed}"
    return printed


@pytest.mark.timeout(180)
def test_control_characters_and_markup_in_stored_data_are_shown_as_text(sh: Shell) -> None:
    checked = _clean(sh("validate", "cli_graphs:hostile"))
    assert "graph '[bold]evil[/] \\x1b[2J" in checked and "[link=https]ask\\x9b31m\\u202e" in checked
    paused = _clean(sh("run", "cli_graphs:hostile", "--thread", "h", code=3))
    assert "[bold]loud\\x1b[2J\\x1b[31m\\x1b]0;owned\\x07: ok" in paused
    assert "ok? \\x1b[2J" in paused and "[/]" in paused
    for command in (
        ["threads"],
        ["threads", "--status", "interrupted"],
        ["show", "h"],
        ["show", "h", "--history"],
    ):
        _clean(sh(*command))
    assert "[red]x[/red] :warning:" in _clean(sh("show", "h", "--full"))
    assert "flowchart TD" in _clean(sh("draw", "cli_graphs:hostile"))

    as_json = sh("show", "h", "--json")
    _clean(as_json)
    record = json.loads(as_json.stdout)  # escaped, and still the same strings
    assert record["state"]["note"] == f"[red]x[/red] :warning: {ESC}{C1_AND_BIDI}"
    assert record["interrupts"][0]["vertex"] == f"[link=https]ask{C1_AND_BIDI}"

    done = _clean(sh("answer", "h", json.dumps(f"yes {ESC}")))
    assert "done after superstep 2" in done
    failed = sh("run", "cli_graphs:hostile", "--thread", "f", "--input", '{"fail": true}', code=1)
    said = _clean(failed)
    assert "ValueError: boom \\x1b[2J" in said and "[bold]not markup[/]" in said
    assert _clean(sh("resume", "f", code=1)).count("error: vertex '[bold]loud") == 1


@pytest.mark.timeout(60)
def test_serve_names_a_hostile_graph_as_text(sh: Shell) -> None:
    pytest.importorskip("uvicorn", reason="serve needs the web extra")
    server = subprocess.Popen(
        sh.argv("serve", "cli_graphs:hostile", "--port", "0"),
        cwd=sh.home,
        env=sh.env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = server.stdout.readline() if server.stdout else ""
    finally:
        server.kill()
        _, err = server.communicate(timeout=TIMEOUT)
    assert line.startswith("serving '[bold]evil[/] \\x1b[2J"), (line, err)
    assert not any(raw in line + err for raw in RAW)


DEEP = "[" * 100_000


@pytest.mark.timeout(120)
def test_deep_or_broken_json_is_a_usage_error_in_one_line(sh: Shell) -> None:
    for given in (DEEP, "[" * 300 + "]" * 300, '{"a": '):
        refused = sh("run", "cli_graphs:approval", "--input", given, code=2)
        assert refused.stderr.startswith("error: --input ") and len(refused.stderr.splitlines()) == 1
    (sh.home / "deep.json").write_text(DEEP)
    assert (
        "nests lists or objects more than 200 levels"
        in sh("run", "cli_graphs:approval", "--input-file", "deep.json", code=2).stderr
    )
    sh("run", "cli_graphs:approval", "--thread", "t", code=3)
    for value in (DEEP, "[" * 300 + "]" * 300):
        refused = sh("answer", "t", value, code=2)
        assert refused.stderr == "error: VALUE nests lists or objects more than 200 levels deep; flatten it\n"
    assert sh.json("answer", "t", "[" * 50 + "]" * 50)["status"] == "done"  # deep enough for real data


BAD_IDS = ["", " t", "a|b", "x" * 300, "a\x1b[31mb", "a\u202eb"]


@pytest.mark.timeout(180)
@pytest.mark.parametrize("bad", BAD_IDS, ids=repr)
def test_a_thread_id_the_api_refuses_is_a_usage_error(sh: Shell, bad: str) -> None:
    sh("run", "cli_graphs:approval", "--thread", "ok", code=3)
    for command in (
        ["run", "cli_graphs:approval", "--thread", bad],
        ["answer", bad, "yes"],
        ["resume", bad],
        ["show", bad],
        ["draw", "cli_graphs:approval", "--thread", bad],
    ):
        refused = sh(*command, code=2)
        assert len(refused.stderr.splitlines()) == 1 and "thread_id" in refused.stderr, refused.stderr
        _clean(refused)
    assert [t["thread_id"] for t in sh.json("threads")] == ["ok"]


@pytest.mark.timeout(120)
def test_the_commands_printed_to_type_next_quote_every_id(sh: Shell) -> None:
    thread = 'it\'s a $(touch pwned); `touch pwned` "x"'
    paused = sh.json("run", "cli_graphs:approval", "--thread", thread, "--db", "my runs.db", code=3)
    [command] = paused["commands"]
    words = shlex.split(command)
    assert words == [
        "actorgraph",
        "answer",
        thread,
        "VALUE",
        "-g",
        "cli_graphs:approval",
        "--db",
        "my runs.db",
    ]
    told = sh("show", thread, "--db", "my runs.db").stdout
    assert f"  actorgraph answer {shlex.quote(thread)} VALUE --db 'my runs.db'\n" in told

    typed = [word if word != "VALUE" else "yes" for word in words[1:]]
    subprocess.run(
        ["/bin/sh", "-c", shlex.join([*sh.argv(*typed)])],
        cwd=sh.home,
        env=sh.env,
        check=True,
        timeout=TIMEOUT,
    )
    time.sleep(0.1)
    assert not (sh.home / "pwned").exists()
    assert sh.json("show", thread, "--db", "my runs.db")["status"] == "done"


@pytest.mark.timeout(60)
def test_click_usage_errors_are_one_escaped_line(sh: Shell) -> None:
    both = ["--db", "a.db", "--dsn", "postgresql://x@localhost/y"]
    for args in (
        ["run", "x", "--bogus"],
        ["threads", "--status", "\x1b[31mlost"],
        ["answer", "t"],
        ["nope"],
        ["threads", *both],
        ["worker", "flow.yaml", *both],
    ):
        refused = sh(*args, code=2)
        assert len(refused.stderr.splitlines()) == 1 and refused.stderr.startswith("error: "), refused.stderr
        assert "--help shows how to use it" in refused.stderr and "\x1b" not in refused.stderr
        assert ("not both" in refused.stderr) == ("--dsn" in args), refused.stderr
