"""LangGraph's JavaScript client, `@langchain/langgraph-sdk`, driving a real server from node.

The client is installed with npm at the versions `tests/server/js/package.json`
pins, outside the tracked files: into `$ACTORGRAPH_TEST_JS_CLIENT` (which
`.ci/run` sets after installing it there: the test then fails, never skips,
when it is missing), or else into `build/js-client` by the test itself when
npm is on the machine (skipped, saying why, when it is not). `js/client_flow.cjs`
streams a run with `values` + `messages-tuple`, meets the pause, resumes it
with `command: {resume}`, reads the state and history, joins a background
run's stream, and does the same as React's `useStream` through its
framework-free core (`StreamOrchestrator`); it prints what it saw as JSON. The
server is the `actorgraph server` command, a child process on a free loopback port.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from server_process import server_process

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]  # npm, node, and a server

HERE = Path(__file__).parent / "js"
PINNED: dict[str, str] = json.loads((HERE / "package.json").read_text())["dependencies"]
NPM_TIMEOUT = 180.0
NODE_TIMEOUT = 120.0
WHY_CI = ".ci/run installs it there (see its npm step)"


def _installed(folder: Path) -> dict[str, str | None]:
    """The version of each pinned package found in `folder`'s node_modules (None: missing)."""
    found: dict[str, str | None] = {}
    for name in PINNED:
        manifest = folder / "node_modules" / name / "package.json"
        found[name] = json.loads(manifest.read_text())["version"] if manifest.is_file() else None
    return found


def _install(folder: Path) -> str | None:
    """npm-install the pinned client into `folder`; None when done, else why it could not be."""
    npm = shutil.which("npm")
    if npm is None:
        return "npm is not on PATH (install Node.js 20 and npm to run this test; CI does)"
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(HERE / "package.json", folder / "package.json")
    command = [npm, "install", "--no-audit", "--no-fund", "--ignore-scripts", "--no-package-lock"]
    try:
        done = subprocess.run(
            command, cwd=folder, capture_output=True, text=True, timeout=NPM_TIMEOUT, check=False
        )
    except subprocess.TimeoutExpired:
        return f"npm install did not finish in {NPM_TIMEOUT:.0f} s"
    if done.returncode != 0:
        return f"npm install failed ({done.returncode}): {(done.stderr or done.stdout)[-600:]}"
    return None


@contextlib.contextmanager
def _locked(folder: Path) -> Iterator[None]:
    """One installer at a time in `folder` (two pytest runs may share it)."""
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / ".install-lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


@pytest.fixture(scope="module")
def node_modules() -> Path:
    """The node_modules folder holding the pinned client; in CI (its variable set) it must be there."""
    given = os.environ.get("ACTORGRAPH_TEST_JS_CLIENT")
    folder = Path(given) if given else Path(__file__).parents[2] / "build" / "js-client"
    if shutil.which("node") is None:
        why = "node is not on PATH (Node.js 20 runs LangGraph's JavaScript client)"
        if given:
            pytest.fail(f"{why}; ACTORGRAPH_TEST_JS_CLIENT is set, so this run must test it")
        pytest.skip(why)
    with _locked(folder):
        if _installed(folder) != PINNED:
            if given:
                pytest.fail(
                    f"ACTORGRAPH_TEST_JS_CLIENT={given} holds {_installed(folder)}, not {PINNED}: {WHY_CI}"
                )
            why = _install(folder)
            if why is not None:
                pytest.skip(f"LangGraph's JavaScript client could not be installed into {folder}: {why}")
    assert _installed(folder) == PINNED
    return folder / "node_modules"


def _drive(url: str, node_modules: Path) -> dict[str, Any]:
    """Run the node script against `url`; what it saw."""
    node = shutil.which("node")
    assert node is not None
    env = {**os.environ, "NODE_PATH": str(node_modules)}
    done = subprocess.run(
        [node, str(HERE / "client_flow.cjs"), url],
        capture_output=True,
        text=True,
        timeout=NODE_TIMEOUT,
        env=env,
        check=False,
    )
    assert done.returncode == 0, f"the node script failed:\n{done.stderr[-3000:]}"
    return json.loads(done.stdout)


def _named(parts: list[dict[str, Any]], event: str) -> list[Any]:
    return [p["data"] for p in parts if p["event"] == event]


@pytest.fixture(scope="module")
def seen(node_modules: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """What the JavaScript client saw of an `actorgraph server` of the test graphs on a SQLite file."""
    with server_process(["chat=chat_graph", "slow=slow_graph"], tmp_path_factory.mktemp("js")) as server:
        return _drive(server.url, node_modules)


def test_a_stream_of_values_and_message_tuples_meets_the_question(seen):
    first = seen["streamed"]["first"]
    assert first[0]["event"] == "metadata"
    assert set(first[0]["data"]) == {"run_id", "attempt"}
    assert {p["event"] for p in first} == {"metadata", "values", "messages"}
    pieces = _named(first, "messages")
    assert [chunk["content"] for chunk, _ in pieces] == ["hel", "lo", "hello"]
    assert {meta["langgraph_node"] for _, meta in pieces} == {"greet"}
    values = _named(first, "values")
    assert values[0]["messages"][0]["type"] == "human"
    question = values[-1]["__interrupt__"]
    assert [q["value"] for q in question] == [{"question": "go on?"}]
    assert seen["streamed"]["paused"] == {
        "status": "interrupted",
        "interrupts": {"ask": [{"id": question[0]["id"], "value": {"question": "go on?"}}]},
    }


def test_a_command_resume_finishes_the_thread_and_its_history_reads_newest_first(seen):
    streamed = seen["streamed"]
    final = _named(streamed["resumed"], "values")[-1]
    assert final["log"] == ["greet", "ask:yes", "finish"]
    assert final["n"] == 20
    assert "__interrupt__" not in final
    assert streamed["state"]["values"] == final
    assert streamed["state"]["next"] == []
    assert streamed["ended"] == {"status": "idle"}
    assert streamed["runs"] == ["success", "success"]
    history = streamed["history"]
    assert [h["next"] for h in history] == [[], ["finish"], ["ask"], ["greet"]]
    assert history[0]["checkpoint"] == streamed["state"]["checkpoint"]


def test_join_stream_follows_a_background_run_and_join_gives_its_result(seen):
    joined = seen["joined"]
    assert joined["parts"][0]["event"] == "metadata"
    assert _named(joined["parts"], "values")[-1] == {"sleep": 0.3, "n": 1, "slept": True}
    assert joined["result"] == {"sleep": 0.3, "n": 1, "slept": True}
    assert joined["status"] == "success"


def test_use_streams_core_shows_the_tokens_the_question_and_the_answered_thread(seen):
    orchestrated = seen["orchestrated"]
    asked, done = orchestrated["asked"], orchestrated["done"]
    assert asked["error"] is None
    assert asked["interrupt"]["value"] == {"question": "go on?"}
    assert asked["messages"] == [{"type": "human", "content": "hi"}, {"type": "ai", "content": "hello"}]
    shown = orchestrated["shown"]
    assert "human:hi | ai:hel" in shown  # a piece of the message, shown before the whole arrived
    assert shown.index("human:hi | ai:hel") < shown.index("human:hi | ai:hello")
    assert done["error"] is None
    assert done["interrupt"] is None
    assert done["values"]["log"] == ["greet", "ask:yes", "finish"]
    assert done["messages"] == asked["messages"]
    assert done["history"] == 4  # the orchestrator fetched the thread's history after the run
