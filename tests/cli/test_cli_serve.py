"""`actorgraph serve` as a real process: what it refuses at start, what it says when it cannot listen, and
its log (each request, each error with its traceback: in the log on stderr, never in the page)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
import web_graphs
from cli_shell import TESTS, Shell

from actorgraph.checkpoint import SqliteCheckpointer

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]

WAIT = 30.0
BUGGY = '''
import web_graphs
from actorgraph.checkpoint import SqliteCheckpointer


class BuggyStore(SqliteCheckpointer):
    """A user's store with a bug: listing threads raises what no page expects."""

    def threads(self, **options):
        raise RuntimeError("a bug in the store, secret-7f3a")


graph = web_graphs.approval.compile(BuggyStore("runs.db"))
'''


@pytest.fixture
def store(tmp_path: Path) -> Path:
    """A SQLite file with one paused thread of the approval graph."""
    db = tmp_path / "runs.db"
    with SqliteCheckpointer(db) as checkpointer, web_graphs.approval.compile(checkpointer) as graph:
        graph.invoke({"topic": "served"}, thread_id="s1")
    return db


def _one_line_error(stderr: str) -> str:
    assert "Traceback" not in stderr
    lines = stderr.splitlines()
    assert len(lines) == 1, stderr
    assert lines[0].startswith("error: ")
    return lines[0]


@pytest.mark.parametrize(
    ("args", "env"),
    [
        (["--token", ""], {}),  # --token "$INBOX_TOKEN" with the variable unset
        (["--token", "   "], {}),
        (["--host", "0.0.0.0", "--token", ""], {}),  # noqa: S104 - the docs' own command
        ([], {"ACTORGRAPH_TOKEN": ""}),
        (["--host", "0.0.0.0"], {"ACTORGRAPH_TOKEN": " \t"}),  # noqa: S104
    ],
)
def test_an_empty_or_blank_token_is_a_usage_error_at_start(
    tmp_path: Path, store: Path, args: list[str], env: dict[str, str]
) -> None:
    sh = Shell(tmp_path)
    sh.env |= env
    done = sh("serve", "web_graphs:approval", "--db", str(store), "--port", "0", *args, code=2)
    line = _one_line_error(done.stderr)
    assert "empty" in line or "blank" in line
    assert "serving" not in done.stdout


def test_a_port_in_use_is_one_line_and_exit_5(tmp_path: Path, store: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = Shell(tmp_path)(
            "serve", "web_graphs:approval", "--db", str(store), "--port", str(port), code=5
        )
    line = _one_line_error(done.stderr)
    assert f"127.0.0.1:{port}" in line
    assert "in use" in line
    assert "--port" in line  # what to do
    assert "serving" not in done.stdout


@pytest.mark.parametrize(
    ("host", "says"),
    [
        ("192.0.2.1", "not an address of this machine"),  # TEST-NET-1: no machine has it
        ("no-such-host.invalid", "give an address of this machine"),
        ("a" * 300, "give an address of this machine"),
    ],
)
def test_a_host_that_cannot_be_bound_is_one_line_and_exit_5(
    tmp_path: Path, store: Path, host: str, says: str
) -> None:
    done = Shell(tmp_path)(
        "serve", "web_graphs:approval", "--db", str(store), "--host", host, "--token", "t0k3n", code=5
    )
    assert says in _one_line_error(done.stderr)
    assert "t0k3n" not in done.stdout


@contextmanager
def _serving(folder: Path, *args: str) -> Iterator[tuple[str, list[str]]]:
    """`actorgraph serve ARGS --port 0` in `folder`: its URL, then (once stopped) its stderr lines."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ACTORGRAPH_")}
    env |= {"PYTHONPATH": os.pathsep.join(p for p in (str(TESTS), env.get("PYTHONPATH")) if p)}
    argv = [sys.executable, "-m", "actorgraph.cli", "serve", *args, "--port", "0"]
    server = subprocess.Popen(
        argv,
        cwd=folder,
        env=env | {"NO_COLOR": "1"},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    logged: list[str] = []
    try:
        assert server.stdout is not None
        shown = server.stdout.readline()
        assert "serving" in shown, shown + (server.stderr.read() if server.stderr else "")
        url = shown.split(" on ", 1)[1].split()[0].rstrip("/")
        _wait_for(url)
        yield url, logged
    finally:
        server.terminate()
        try:
            _, err = server.communicate(timeout=WAIT)
        except subprocess.TimeoutExpired:
            server.kill()
            _, err = server.communicate()
        logged += err.splitlines()


def _wait_for(url: str) -> None:
    deadline = time.monotonic() + WAIT
    while True:
        try:
            httpx.get(f"{url}/static/style.css", timeout=5)
        except httpx.TransportError:
            assert time.monotonic() < deadline, f"{url} does not answer"
            time.sleep(0.1)
        else:
            return


def test_serve_logs_each_request(tmp_path: Path, store: Path) -> None:
    with _serving(tmp_path, "web_graphs:approval", "--db", str(store)) as (url, logged):
        assert httpx.get(f"{url}/threads/s1").status_code == 200
        assert httpx.get(f"{url}/threads/nobody").status_code == 404
    requests = [line for line in logged if '"GET /threads/' in line]
    assert any("/threads/s1 HTTP/1.1" in line and line.endswith(" 200") for line in requests), logged
    assert any("/threads/nobody HTTP/1.1" in line and line.endswith(" 404") for line in requests), logged


@pytest.mark.parametrize("log_format", ["text", "json"])
def test_an_error_no_page_expected_is_logged_with_its_traceback_never_shown(
    tmp_path: Path, log_format: str
) -> None:
    (tmp_path / "buggy.py").write_text(BUGGY)
    with _serving(tmp_path, "buggy.py:graph", "--log-format", log_format) as (url, logged):
        page = httpx.get(f"{url}/")
        assert page.status_code == 500
        assert "the server's log says why" in page.text
        assert "secret-7f3a" not in page.text
        assert "Traceback" not in page.text
    text = "\n".join(logged)
    assert "Traceback (most recent call last)" in text
    assert "RuntimeError: a bug in the store, secret-7f3a" in text
    if log_format == "json":
        records = [json.loads(line) for line in logged]  # one JSON object a line, the traceback inside
        failed = next(r for r in records if r["event"] == "request failed")
        assert (failed["level"], failed["method"], failed["path"]) == ("error", "GET", "/")
        assert "RuntimeError: a bug in the store" in failed["exception"]
        assert any('"GET / HTTP/1.1" 500' in r["event"] for r in records)
    else:
        failed = next(line for line in logged if "request failed" in line)
        assert "method=GET" in failed
        assert "path=/" in failed
