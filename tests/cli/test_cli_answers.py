"""`actorgraph answer` from several terminals at once: one answer runs the vertex, the others are told.

Real `actorgraph answer` processes race on a real store (SQLite, PostgreSQL); the
graph's vertex writes a line to a ledger each time it goes on past its question
(`cli_graphs:ledger`), so the test counts side effects across processes.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from cli_shell import Shell

pytestmark = pytest.mark.slow  # racing processes

# Imports the command line first, then waits for the start file: the racers are released together.
WAIT_THEN_RUN = """
import sys, time, pathlib
from actorgraph.cli import main
go = pathlib.Path(sys.argv[1])
while not go.exists():
    time.sleep(0.002)
sys.exit(main(sys.argv[2:]))
"""
RACERS = 4
ALREADY_ANSWERED = 4


@pytest.fixture
def sh(tmp_path: Path) -> Shell:
    return Shell(tmp_path)


def _race(sh: Shell, store: list[str], *extra: str) -> list[tuple[int, str, str]]:
    """RACERS `actorgraph answer race a<i> --as p<i>` processes, released at once: (code, stdout, stderr)."""
    go = sh.home / "go"
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                "-c",
                WAIT_THEN_RUN,
                str(go),
                "answer",
                "race",
                f"a{i}",
                "--as",
                f"p{i}",
                *extra,
                *store,
            ],
            cwd=sh.home,
            env=sh.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(RACERS)
    ]
    time.sleep(1.5)  # every racer has imported the command line and waits for the start
    go.touch()
    try:
        outs = [p.communicate(timeout=120) for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
    return [(p.returncode, out, err) for p, (out, err) in zip(procs, outs, strict=True)]


@pytest.mark.timeout(240)
@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
def test_racing_answer_processes_run_the_vertex_once(
    sh: Shell, kind: str, request: pytest.FixtureRequest
) -> None:
    store = ["--dsn", request.getfixturevalue("postgres_db")] if kind == "postgres" else ["--db", "race.db"]
    paused = sh.json("run", "cli_graphs:ledger", "--thread", "race", *store, code=3)
    [question] = paused["interrupts"]

    results = _race(sh, store, "--json", "-q")

    winners = [i for i, (code, _, _) in enumerate(results) if code == 0]
    assert len(winners) == 1, [(code, err) for code, _, err in results]
    [winner] = winners
    assert (sh.home / "ledger").read_text().splitlines() == [f"ran:a{winner}"]  # the losers ran nothing
    assert json.loads(results[winner][1])["state"] == {"answer": f"a{winner}"}
    for i, (code, out, err) in enumerate(results):
        if i == winner:
            continue
        assert code == ALREADY_ANSWERED, err
        assert err.startswith(f"error: already answered by p{winner}, at ")
        assert len(err.splitlines()) == 1 and "resume" not in err
        told = json.loads(out)
        assert told["status"] == "already_answered" and told["exit_code"] == ALREADY_ANSWERED
        assert (told["answered_by"], told["interrupt_id"], told["vertex"]) == (
            f"p{winner}",
            question["id"],
            "ship",
        )
        assert told["answered_at"] <= time.time()
    assert sh.json("show", "race", *store)["state"] == {"answer": f"a{winner}"}


@pytest.mark.timeout(120)
def test_a_late_answer_is_told_who_answered_and_nothing_runs(sh: Shell) -> None:
    paused = sh.json("run", "cli_graphs:ledger", "--thread", "late", code=3)
    question = paused["interrupts"][0]["id"]
    sh("answer", "late", "first", "--as", "ann", "-q")

    by_id = sh("answer", "late", "second", "--id", question, "--as", "bob", code=ALREADY_ANSWERED)
    assert by_id.stderr.startswith("error: already answered by ann, at ")
    assert f"question {question} of vertex 'ship' in thread 'late'" in by_id.stderr
    assert "nothing ran with it" in by_id.stderr and "resume" not in by_id.stderr
    assert by_id.stdout == ""
    bare = sh.json("answer", "late", "third", code=ALREADY_ANSWERED)  # no --id: the thread's last question
    assert (bare["answered_by"], bare["interrupt_id"]) == ("ann", question)
    assert (sh.home / "ledger").read_text().splitlines() == ["ran:first"]

    unknown = sh("answer", "late", "x", "--id", "int-0000000000000000", code=2)
    assert (
        unknown.stderr
        == "error: thread 'late' has no pending interrupt 'int-0000000000000000'; pending: none\n"
    )


@pytest.mark.timeout(120)
def test_the_name_of_who_answers_is_checked(sh: Shell) -> None:
    sh("run", "cli_graphs:ledger", "--thread", "n", code=3)
    for bad in ["", "   ", "a\x1b[31mb", "x" * 201]:
        refused = sh("answer", "n", "yes", "--as", bad, code=2)
        assert refused.stderr.startswith("error: --as ") and "\x1b" not in refused.stderr
    assert not (sh.home / "ledger").exists()


@pytest.mark.timeout(120)
def test_an_answer_whose_process_died_is_kept_and_resume_finishes_it(sh: Shell) -> None:
    sh("run", "cli_graphs:ledger", "--thread", "dead", code=3)
    (sh.home / "hold").touch()
    answering = subprocess.Popen(
        sh.argv("answer", "dead", "ship", "--as", "ann", "-q"), cwd=sh.home, env=sh.env
    )
    ledger = sh.home / "ledger"
    deadline = time.monotonic() + 60
    while not (ledger.exists() and ledger.read_text()) and time.monotonic() < deadline:
        time.sleep(0.05)
    answering.kill()  # the answer was taken and ran its side effect; its run never finished
    answering.wait(30)
    (sh.home / "hold").unlink()

    shown = sh.json("show", "dead")
    assert (shown["status"], shown["interrupts"]) == ("running", [])
    assert [c["answered_by"] for c in shown["claimed"]] == ["ann"]
    told = sh("show", "dead").stdout
    assert "taken by ann, at " in told and "resume with: actorgraph resume dead\n" in told
    assert sh.json("answer", "dead", "hold", code=ALREADY_ANSWERED)["answered_by"] == "ann"
    assert sh.json("resume", "dead")["state"] == {"answer": "ship"}
    assert ledger.read_text().splitlines() == ["ran:ship", "ran:ship"]  # re-run with the answer taken
