"""The `actorgraph` command line, run as a user runs it: one process per command, a real SQLite file.

The graphs are in `cli_graphs.py` (found through PYTHONPATH, as `cli_graphs:name`);
each test works in its own folder, whose `actorgraph.db` is the default store.
"""

from __future__ import annotations

import json
import os
import pty
import re
import select
import shlex
import signal
import subprocess
import time
from pathlib import Path

import pytest
from cli_shell import ANSI, TESTS, TIMEOUT, Shell
from config_cases import BROKEN

from actorgraph.checkpoint import SqliteCheckpointer
from actorgraph.cli import main

pytestmark = pytest.mark.slow  # every command a new process


@pytest.fixture
def sh(tmp_path: Path) -> Shell:
    return Shell(tmp_path)


# -- run, pause, list, answer ---------------------------------------------------------------------


def test_a_run_waits_for_an_answer_given_by_another_process(sh: Shell) -> None:
    paused = sh.json("run", "cli_graphs:approval", "--thread", "notes-1", "--input", '{"topic": "x"}', code=3)
    assert paused["status"] == "interrupted"
    assert paused["state"] == {"topic": "x", "draft": "x: draft"}
    [pending] = paused["interrupts"]
    assert (pending["vertex"], pending["question"]) == ("review", "Publish this draft?")
    assert paused["commands"] == ["actorgraph answer notes-1 VALUE -g cli_graphs:approval"]

    [waiting] = sh.json("threads", "--status", "interrupted")
    assert (waiting["thread_id"], waiting["status"]) == ("notes-1", "interrupted")
    assert waiting["interrupts"][0]["id"] == pending["id"]
    assert waiting["age_seconds"] >= 0

    done = sh.json("answer", "notes-1", "yes", "-g", "cli_graphs:approval", script=True)
    assert done["status"] == "done"
    assert done["state"] == {"topic": "x", "draft": "x: draft", "approved": "yes", "published": True}
    assert sh.json("threads", "--status", "interrupted") == []
    [listed] = sh.json("threads")
    assert (listed["thread_id"], listed["status"]) == ("notes-1", "done")

    shown = sh.json("show", "notes-1", "-g", "cli_graphs:approval", "--history")
    assert shown["status"] == "done"
    outcomes = [(s["step"], s["vertex"], s["status"], s["attempts"]) for s in shown["supersteps"]]
    assert outcomes == [(1, "write", "ok", 1), (2, "review", "ok", 1), (3, "publish", "ok", 1)]
    assert [h["step"] for h in shown["history"]] == [3, 2, 1, 0]


def test_the_inbox_and_the_answer_for_a_person(sh: Shell) -> None:
    out = sh("run", "cli_graphs:approval", "--thread", "t1", code=3).stdout
    assert "thread t1: interrupted, waiting for 1 answer(s)" in out
    assert "(review): Publish this draft?" in out
    assert "  actorgraph answer t1 VALUE -g cli_graphs:approval\n" in out

    inbox = sh("threads", "--status", "interrupted").stdout
    assert re.search(r"t1 +. interrupted +. [0-9.]+ (s|min) +. review +. Publish this draft\?", inbox)

    answered = sh("answer", "t1", '"no"', "-g", "cli_graphs:approval").stdout
    assert "thread t1: done after superstep 3" in answered
    assert '"approved": "no"' in answered
    assert "no interrupted threads" in sh("threads", "--status", "interrupted").stdout


def test_several_questions_are_answered_by_id(sh: Shell) -> None:
    given = '{"items": ["laptop", "desk"], "log": []}'
    paused = sh.json("run", "cli_graphs:approvals", "--thread", "buy", "--input", given, code=3)
    ids = {p["question"]: p["id"] for p in paused["interrupts"]}
    assert sorted(ids) == ["approve desk?", "approve laptop?"]
    assert all("--id" in c for c in paused["commands"])

    refused = sh("answer", "buy", "yes", "-g", "cli_graphs:approvals", code=2)
    assert "waits for 2 answers: choose one with --id" in refused.stderr
    unknown = sh("answer", "buy", "yes", "--id", "int-0000000000000000", "-g", "cli_graphs:approvals", code=2)
    assert "has no pending interrupt 'int-0000000000000000'" in unknown.stderr

    half = sh.json("answer", "buy", "no", "--id", ids["approve desk?"], "-g", "cli_graphs:approvals", code=3)
    assert [p["question"] for p in half["interrupts"]] == ["approve laptop?"]
    done = sh.json("answer", "buy", "yes", "--id", ids["approve laptop?"], "-g", "cli_graphs:approvals")
    assert sorted(done["state"]["log"]) == ["desk=no", "laptop=yes"]


def test_a_new_thread_is_named_and_a_flaky_vertex_is_retried(sh: Shell) -> None:
    out = sh("run", "cli_graphs:flaky").stdout
    thread = re.match(r"thread (t-[0-9a-f]+)\n", out)
    assert thread is not None
    assert "  fetch: running (attempt 1)\n" in out
    assert "  fetch: attempt 1 failed (ConnectionError: the service timed out); retrying in" in out
    assert "  fetch: running (attempt 2)\n" in out
    assert re.search(r"  fetch: ok \(attempt 2, [0-9.]+ s\)\n", out)
    assert f"thread {thread[1]}: done after superstep 1\n" in out
    assert '"fetched": 2' in out


def test_json_puts_only_json_on_stdout_and_the_view_on_stderr(sh: Shell) -> None:
    done = sh("run", "cli_graphs:flaky", "--thread", "f", "--json")
    assert json.loads(done.stdout)["state"] == {"fetched": 2}
    assert "fetch: running (attempt 2)" in done.stderr
    quiet = sh("run", "cli_graphs:approval", "--thread", "q", "--quiet", code=3)
    assert "running" not in quiet.stdout + quiet.stderr
    assert "interrupted" in quiet.stdout


def test_the_input_comes_from_a_file_or_stdin(sh: Shell) -> None:
    (sh.home / "input.json").write_text('{"topic": "file"}')
    by_file = sh.json("run", "cli_graphs:approval", "--input-file", "input.json", code=3)
    assert by_file["state"]["topic"] == "file"
    given = '{"topic": "in"}'
    by_stdin = sh("run", "cli_graphs:approval", "--input-file", "-", "--json", stdin=given, code=3)
    assert json.loads(by_stdin.stdout)["state"]["topic"] == "in"


# -- failure and resume -----------------------------------------------------------------------------


def test_a_failed_run_is_resumed_after_fixing_the_code(sh: Shell) -> None:
    failed = sh("run", "cli_graphs:fragile", "--thread", "calc", code=1)
    first_error = failed.stderr.splitlines()[0]
    assert first_error == (
        "error: vertex 'compute' failed in superstep 2 after 1 attempt: "
        "ValueError: division by zero in compute"
    )
    assert "resume the thread: actorgraph resume calc -g cli_graphs:fragile" in failed.stderr
    assert "Traceback" not in failed.stderr
    assert "  compute: error (attempt 1," in failed.stdout

    [listed] = sh.json("threads", "--status", "error")
    assert listed["thread_id"] == "calc"
    shown = sh.json("show", "calc", "-g", "cli_graphs:fragile")
    assert (shown["status"], shown["next"]) == ("error", ["compute"])
    assert shown["supersteps"][-1]["error"] == "ValueError: division by zero in compute"
    told = sh("show", "calc", "-g", "cli_graphs:fragile").stdout
    assert "thread calc: error · superstep 1 · next: compute\n" in told
    assert "resume with: actorgraph resume calc -g cli_graphs:fragile\n" in told
    assert re.search(r"│ 2 +│ compute +│ error +│ 1 +│ [0-9.]+ s +│ ValueError: division by zero", told)
    again = sh("run", "cli_graphs:fragile", "--thread", "calc", code=2)
    assert "did not finish (error); resume it: actorgraph resume calc -g cli_graphs:fragile" in again.stderr
    sh("resume", "calc", "-g", "cli_graphs:fragile", code=1)  # not fixed yet

    (sh.home / "fixed").write_text("")
    resumed = sh.json("resume", "calc", "-g", "cli_graphs:fragile")
    assert (resumed["status"], resumed["state"]) == ("done", {"prepared": True, "result": 42})
    steps = sh.json("show", "calc", "-g", "cli_graphs:fragile")["supersteps"]
    assert [(s["vertex"], s["status"]) for s in steps] == [("prepare", "ok"), ("compute", "ok")]


def test_debug_shows_the_traceback_and_json_the_error(sh: Shell) -> None:
    failed = sh("run", "cli_graphs:fragile", "--thread", "d", "--debug", "--json", code=1)
    assert "Traceback" in failed.stderr
    assert 'raise ValueError("division by zero in compute")' in failed.stderr
    record = json.loads(failed.stdout)
    error = record["error"]
    assert (record["status"], error["vertex"], error["attempts"]) == ("error", "compute", 1)
    assert record["commands"] == ["actorgraph resume d -g cli_graphs:fragile"]


def test_the_env_var_names_the_graph_and_the_db_option_the_store(sh: Shell) -> None:
    sh("run", "cli_graphs:fragile", "--thread", "e", "--db", "other.db", code=1)
    assert not (sh.home / "actorgraph.db").exists()
    (sh.home / "fixed").write_text("")
    sh.env["ACTORGRAPH_GRAPH"] = "cli_graphs:fragile"
    assert sh.json("resume", "e", "--db", "other.db")["status"] == "done"
    missing = sh("threads", code=2)
    assert "no store 'actorgraph.db' here" in missing.stderr


# -- Ctrl-C ---------------------------------------------------------------------------------------------


def test_ctrl_c_stops_the_run_and_resume_finishes_it(sh: Shell) -> None:
    process = subprocess.Popen(
        sh.argv("run", "cli_graphs:gate", "--thread", "g"),
        cwd=sh.home,
        env=sh.env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # a terminal's Ctrl-C: the default handler, even when these tests run in a background job
        # (whose shell ignores SIGINT, which the command would inherit and rightly respect)
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # noqa: PLW1509 - no threads yet
    )
    try:
        deadline = time.monotonic() + TIMEOUT
        while not (sh.home / "entered").exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        assert (sh.home / "entered").exists(), "the run never reached the gate"
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=TIMEOUT)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(TIMEOUT)
    assert process.returncode == 130, err
    assert "stopped: the run was cancelled; resume it with: actorgraph resume g -g cli_graphs:gate" in err
    assert "Traceback" not in err
    assert "wait: running (attempt 1)" in out

    assert sh.json("threads")[0]["status"] != "done"
    (sh.home / "open").write_text("")
    done = sh.json("resume", "g", "-g", "cli_graphs:gate")
    assert done["state"] == {"prepared": True, "waited": True, "finished": True}


# -- the live view in a terminal ---------------------------------------------------------------------


def _in_terminal(sh: Shell, *args: str) -> tuple[int, str]:
    """Run a command with a pseudo-terminal as its stdin, stdout and stderr; its exit code and screen text."""
    leader, follower = pty.openpty()
    env = {k: v for k, v in sh.env.items() if k != "NO_COLOR"} | {"COLUMNS": "100", "TERM": "xterm"}
    process = subprocess.Popen(
        sh.argv(*args), cwd=sh.home, env=env, stdin=follower, stdout=follower, stderr=follower
    )
    os.close(follower)
    screen = b""
    try:
        deadline = time.monotonic() + TIMEOUT
        while time.monotonic() < deadline:
            ready, _, _ = select.select([leader], [], [], 0.1)
            chunk = b""
            if ready:
                try:
                    chunk = os.read(leader, 65536)
                except OSError:  # the terminal closed: the process has exited
                    break
                screen += chunk
            if not chunk and process.poll() is not None:
                break
        code = process.wait(TIMEOUT)
    finally:
        os.close(leader)
        if process.poll() is None:
            process.kill()
            process.wait(TIMEOUT)
    return code, ANSI.sub("", screen.decode(errors="replace"))


def test_the_live_view_draws_a_table_in_a_terminal(sh: Shell) -> None:
    code, screen = _in_terminal(sh, "run", "cli_graphs:approval", "--thread", "live")
    assert code == 3, screen
    assert "thread live · superstep 2" in screen
    assert re.search(r"┃ step ┃ vertex +┃ status +┃ attempt ┃ elapsed ┃ note", screen), screen
    assert re.search(r"│ 1 +│ write +│ ok +│ 1 +│ [0-9.]+ s", screen), screen
    assert re.search(r"│ 2 +│ review +│ interrupted +│ 1 +│ [0-9.]+ s +│ Publish this draft", screen), screen
    assert "running (attempt" not in screen  # no plain lines on a terminal
    assert "actorgraph answer live VALUE -g cli_graphs:approval" in screen


# -- draw ------------------------------------------------------------------------------------------------


def test_draw_writes_mermaid_and_dot_and_colours_a_thread(sh: Shell) -> None:
    text = sh("draw", "cli_graphs:approval").stdout
    assert text.startswith("flowchart TD\n")
    assert '    v1["review"]\n' in text
    assert "classDef" not in text

    sh("draw", "cli_graphs:approval", "-o", "graph.mmd")
    assert (sh.home / "graph.mmd").read_text() == text
    sh("draw", "cli_graphs:approval", "-o", "graph.dot")
    assert (sh.home / "graph.dot").read_text().startswith("digraph")

    sh("run", "cli_graphs:approval", "--thread", "p", code=3)
    coloured = sh.json("draw", "cli_graphs:approval", "--thread", "p")
    assert coloured["format"] == "mermaid"
    assert "    class v0 ok\n" in coloured["text"]
    assert "    class v1 interrupt\n" in coloured["text"]

    wrong = sh("draw", "cli_graphs:approval", "-o", "graph.jpg", code=2)
    assert "-o graph.jpg: give a file ending in .mmd, .mermaid, .dot, .gv, .svg, .png" in wrong.stderr
    unknown = sh("draw", "cli_graphs:approval", "--thread", "nobody", code=2)
    assert "thread 'nobody' has no stored checkpoint" in unknown.stderr


@pytest.mark.needs_dot
def test_draw_renders_svg_and_png_with_graphviz(sh: Shell) -> None:
    assert "wrote graph.svg" in sh("draw", "cli_graphs:approval", "-o", "graph.svg").stdout
    assert "<svg" in (sh.home / "graph.svg").read_text()
    sh("run", "cli_graphs:approval", "--thread", "p", code=3)
    record = sh.json("draw", "cli_graphs:approval", "--thread", "p", "-o", "graph.png")
    assert record == {"format": "png", "path": "graph.png"}
    assert (sh.home / "graph.png").read_bytes().startswith(b"\x89PNG\r\n\x1a\n")


# -- validate and targets ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("target", "code", "message"),
    [
        ("no_such_module:graph", 2, "error: no module 'no_such_module' (no module named 'no_such_module')"),
        ("cli_graphs:nope", 2, "error: 'cli_graphs' has no attribute 'nope'; the graphs in it: approval,"),
        ("cli_graphs:not_a_graph", 2, "is not a Graph, a CompiledGraph or an @entrypoint (nor a function"),
        ("cli_graphs:no_start", 1, "error: invalid graph: no edge leaves START; add_edge(START, "),
        ("missing.py:graph", 2, "error: no Python file 'missing.py': it does not exist or is not a file"),
        ("cli_graphs", 2, "error: TARGET 'cli_graphs' names no graph; give a YAML file (flow.yaml)"),
    ],
)
def test_validate_reports_a_broken_target(sh: Shell, target: str, code: int, message: str) -> None:
    done = sh("validate", target, code=code)
    assert message in done.stderr
    assert "Traceback" not in done.stderr
    assert len(done.stderr.splitlines()) == 1


def test_validate_accepts_graphs_by_module_file_and_factory(sh: Shell) -> None:
    by_module = sh("validate", "cli_graphs:approval").stdout
    assert by_module == "ok: cli_graphs:approval: graph 'approval', 3 vertices (write, review, publish)\n"
    by_file = sh.json("validate", f"{TESTS / 'cli_graphs.py'}:fragile")
    assert (by_file["valid"], by_file["vertices"]) == (True, ["prepare", "compute"])
    assert sh.json("validate", "cli_graphs:compiled_with_store")["graph"] == "own"
    broken = sh.json("validate", "cli_graphs:no_start", code=1)
    assert broken["valid"] is False
    assert broken["problems"][0].startswith("invalid graph: no edge leaves START")


def test_a_compiled_graph_brings_its_store_or_is_refused(sh: Shell) -> None:
    assert sh.json("run", "cli_graphs:compiled_with_store")["state"] == {"prepared": True}
    assert (sh.home / "own.db").exists()
    assert not (sh.home / "actorgraph.db").exists()
    refused = sh("run", "cli_graphs:compiled_with_store", "--db", "x.db", code=2)
    assert "is a CompiledGraph with its own checkpointer: --db/--dsn cannot change it" in refused.stderr
    plain = sh("run", "cli_graphs:compiled_plain", code=2)
    assert "is a CompiledGraph without a checkpointer" in plain.stderr
    assert sh("draw", "cli_graphs:compiled_plain").stdout.startswith("flowchart TD")


@pytest.mark.threads_only("an entrypoint whose function calls a task is refused on Ray")
def test_an_entrypoint_s_thread_shows_its_return_value_never_its_record(sh: Shell) -> None:
    """Issue 37, item 7: run, show (the store alone, or with -g) and answer an `@entrypoint`'s thread."""
    paused = sh.json("run", "cli_graphs:reviewed", "--thread", "r1", "--input", '"actors"', code=3)
    assert paused["state"] is None  # nothing returned yet
    assert [i["value"] for i in paused["interrupts"]] == [{"review": "a draft about actors"}]
    assert sh.json("show", "r1")["state"] is None
    value = {"text": "a draft about actors", "verdict": "ok"}
    assert sh.json("answer", "r1", '"ok"')["state"] == value  # the graph recorded by run
    for shown in (
        sh.json("show", "r1", "--history"),
        sh.json("show", "r1", "--history", "-g", "cli_graphs:reviewed"),
    ):
        assert shown["state"] == value
        assert [past["state"] for past in shown["history"]] == [value, None]
    told = sh("show", "r1").stdout
    assert '"verdict": "ok"' in told
    assert '"output"' not in told and '"save"' not in told


@pytest.mark.threads_only("an entrypoint whose function calls a task is refused on Ray")
def test_an_entrypoint_with_its_own_store_is_answered_with_its_name(sh: Shell) -> None:
    paused = sh.json("run", "cli_graphs:reviewed_with_store", "--thread", "r2", "--input", '"x"', code=3)
    assert paused["commands"] == ["actorgraph answer r2 VALUE -g cli_graphs:reviewed_with_store"]
    assert not (sh.home / "actorgraph.db").exists()
    done = sh.json("answer", "r2", '"no"', "-g", "cli_graphs:reviewed_with_store")
    assert done["state"] == {"text": "a draft about x", "verdict": "no"}
    assert sh.json("show", "r2", "--db", "own_review.db")["state"] == done["state"]


@pytest.mark.threads_only("an entrypoint whose function calls a task is refused on Ray")
def test_an_entrypoint_with_its_own_store_runs_on_the_store_db_names(sh: Shell) -> None:
    """Issue 37, item 8: --db/--dsn choose an entrypoint's store, as a graph's (and a worker's)."""
    sh.json(
        "run", "cli_graphs:reviewed_with_store", "--thread", "r3", "--input", '"x"', "--db", "x.db", code=3
    )
    with SqliteCheckpointer(sh.home / "own_review.db") as own:  # made (empty) when the entrypoint was
        assert own.get("r3") is None
    done = sh.json("answer", "r3", '"ok"', "--db", "x.db")  # the graph recorded by run
    assert done["state"] == {"text": "a draft about x", "verdict": "ok"}
    assert sh.json("show", "r3", "--db", "x.db")["state"] == done["state"]


# -- usage errors ------------------------------------------------------------------------------------


def test_usage_errors_exit_with_2_and_one_line(sh: Shell) -> None:
    bad_json = sh("run", "cli_graphs:approval", "--input", "{topic", code=2)
    assert bad_json.stderr.startswith("error: --input is not JSON: Expecting property name")
    assert "No such option '--bogus'" in sh("run", "cli_graphs:approval", "--bogus", code=2).stderr
    both = sh("run", "cli_graphs:approval", "--input", "{}", "--input-file", "x.json", code=2)
    assert "give the input once" in both.stderr
    assert "no store 'actorgraph.db' here" in sh("resume", "t", code=2).stderr  # the graph is recorded there
    sh("run", "cli_graphs:flaky", "--thread", "over")
    nobody = sh("answer", "nobody", "1", "-g", "cli_graphs:flaky", code=2)
    assert nobody.stderr == "error: thread 'nobody' has no stored checkpoint\n"
    as_json = sh.json("answer", "nobody", "1", "-g", "cli_graphs:flaky", code=2)
    assert as_json == {"error": "thread 'nobody' has no stored checkpoint", "exit_code": 2}
    finished = sh("answer", "over", "1", "-g", "cli_graphs:flaky", code=2)
    assert finished.stderr == "error: thread 'over' waits for no answer (status done)\n"
    assert "Invalid value for '--status'" in sh("threads", "--status", "lost", code=2).stderr


def test_every_command_has_examples_and_exit_codes_in_its_help(capsys: pytest.CaptureFixture[str]) -> None:
    for name in ("run", "answer", "resume", "threads", "show", "draw", "validate", "schema"):
        assert main([name, "--help"]) == 0
        text = capsys.readouterr().out
        assert f"Usage: actorgraph {name}" in text
        assert "  Examples:\n    actorgraph " in text
        assert "3 interrupted" in " ".join(text.split()), name
    assert main(["--help"]) == 0
    assert "-g TARGET" in " ".join(capsys.readouterr().out.split())


def test_a_postgres_store_is_chosen_with_dsn(sh: Shell, postgres_db: str) -> None:
    paused = sh.json("run", "cli_graphs:approval", "--thread", "pg", "--dsn", postgres_db, code=3)
    answer = ["actorgraph", "answer", "pg", "VALUE", "-g", "cli_graphs:approval", "--dsn", postgres_db]
    assert paused["commands"] == [shlex.join(answer)]
    sh.env["ACTORGRAPH_DSN"] = postgres_db
    assert [t["thread_id"] for t in sh.json("threads", "--status", "interrupted")] == ["pg"]
    assert sh.json("answer", "pg", "yes", "-g", "cli_graphs:approval")["status"] == "done"
    assert not (sh.home / "actorgraph.db").exists()
    # --db typed on the command line wins over $ACTORGRAPH_DSN
    sh.json("run", "cli_graphs:approval", "--thread", "file", "--db", "local.db", code=3)
    assert [t["thread_id"] for t in sh.json("threads", "--db", "local.db")] == ["file"]
    assert "file" not in [t["thread_id"] for t in sh.json("threads")]


def test_a_graph_file_is_a_target_too(sh: Shell) -> None:
    flow = str(TESTS.parent / "examples" / "approval.yaml")
    assert sh.json("validate", flow)["vertices"] == ["write", "check", "review", "publish"]
    paused = sh.json("run", flow, "--thread", "y", "--input", '{"topic": "notes"}', code=3)
    assert paused["commands"] == [f"actorgraph answer y VALUE -g {flow}"]
    done = sh.json("answer", "y", '{"approved": true}', "-g", flow)
    assert (done["status"], done["state"]["status"]) == ("done", "published")
    broken = sh.home / "broken.yaml"
    broken.write_text("name: broken\nvertices: []\n")
    assert sh("validate", str(broken), code=1).stderr.startswith(f"error: invalid graph: {broken}:")


def test_the_yaml_how_to_as_written(sh: Shell) -> None:
    """docs/how-to/approval-yaml.md, step by step, from the repository's root."""
    sh.home = TESTS.parent
    sh.env["ACTORGRAPH_DB"] = str(sh.env["CLI_TEST_DIR"]) + "/how-to.db"
    sh("validate", "examples/approval.yaml")
    first = '{"topic": "release notes"}'
    sh("run", "examples/approval.yaml", "--input", first, "--thread", "notes-1", code=3)
    inbox = sh.json("threads", "--status", "interrupted")
    assert [t["thread_id"] for t in inbox] == ["notes-1"]
    revise = '{"approved": false, "feedback": "mention the fix"}'
    sh("answer", "notes-1", revise, "-g", "examples/approval.yaml", code=3)
    done = sh.json("answer", "notes-1", '{"approved": true}', "-g", "examples/approval.yaml")
    assert done["state"]["draft"] == "Release notes: draft 2. Revised to mention the fix."
    assert "notes-1" in sh("show", "notes-1", "--history", "-g", "examples/approval.yaml").stdout


def test_schema_prints_the_json_schema_of_graph_files(sh: Shell) -> None:
    schema = json.loads(sh("schema").stdout)
    assert schema["title"] == "actorgraph graph file"
    assert {"vertices", "edges", "global"} <= set(schema["properties"])


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_validate_reports_a_broken_file_with_its_line_and_column(sh: Shell, case: str) -> None:
    text, expected = BROKEN[case]
    (sh.home / "flow.yaml").write_text(text)
    done = sh("validate", "flow.yaml", code=None)
    assert done.returncode != 0
    assert re.search(expected, done.stderr), done.stderr
