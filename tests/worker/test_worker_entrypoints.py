"""The functional API on workers, as a user runs it: an `@entrypoint` submitted from a service's Python,
run by `actorgraph worker module:entrypoint`, answered from the command line or the web inbox in other
processes, finished by the worker; and a worker SIGKILLed inside an entrypoint of five tasks, whose run
another worker finishes without running a finished task again.

Issue 37, item 8. Every process is real: the service (a Python child that imports the user's module,
`worker_entrypoints`), the workers, `actorgraph answer`, `show`, `threads` and `serve`. This process only
reads the store and the ledger.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from cli_shell import Shell
from pg_server import POSTGRES
from web_http import field_of

from actorgraph.checkpoint import Checkpointer, PostgresCheckpointer, SqliteCheckpointer
from actorgraph.checkpoint._queue import QueuedRow, run_queue

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]

TESTS = Path(__file__).resolve().parents[1]
WAIT = 60.0
DRAFT = "a draft about actors"
APPROVED = {"text": DRAFT, "verdict": "ok"}


class Processes:
    """The user's processes on one store: the service, the workers, the command line."""

    def __init__(self, home: Path, *, dsn: str | None = None) -> None:
        self.home = home
        self.db = str(home / "runs.db")
        self.dsn = dsn
        self.ledger = home / "ledger"
        self.ledger.touch()
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("ACTORGRAPH_")}
        self.env |= {
            "PYTHONPATH": os.pathsep.join(p for p in (str(TESTS), os.environ.get("PYTHONPATH")) if p),
            "WORKER_LEDGER": str(self.ledger),
            "WORKER_HOLD": str(home / "hold"),
            "NO_COLOR": "1",
        }
        self.env |= {"WORKER_DSN": dsn} if dsn else {"WORKER_DB": self.db}
        self.store_words = ["--dsn", dsn] if dsn else ["--db", self.db]
        self.shell = Shell(home)
        self.shell.env = self.env
        self.workers: list[subprocess.Popen[bytes]] = []
        if dsn is None:
            SqliteCheckpointer(self.db).close()  # the schema, before processes race to make it

    def store(self) -> Checkpointer:
        return PostgresCheckpointer(self.dsn) if self.dsn else SqliteCheckpointer(self.db)

    def service(self, code: str) -> Any:
        """Run `code` as the service's Python (importing the user's module); the JSON it prints last."""
        done = subprocess.run(
            [sys.executable, "-c", code],
            cwd=self.home,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=WAIT,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout.strip().splitlines()[-1])

    def worker(self, target: str, name: str, *args: str) -> subprocess.Popen[bytes]:
        """`actorgraph worker TARGET ARGS --name NAME`, started and registered."""
        argv = [sys.executable, "-m", "actorgraph.cli", "worker", target, "--name", name, *args]
        log = (self.home / f"{name}.log").open("wb")
        process = subprocess.Popen(argv, env=self.env, cwd=self.home, stdout=log, stderr=log)
        log.close()
        self.workers.append(process)
        with self.store() as store:
            deadline = time.monotonic() + WAIT
            while name not in {w.worker for w in run_queue(store).live_workers()}:
                assert time.monotonic() < deadline, f"the worker {name} did not register"
                assert process.poll() is None, (self.home / f"{name}.log").read_text()
                time.sleep(0.05)
        return process

    def stop(self) -> None:
        for process in self.workers:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
        for process in self.workers:
            try:
                process.wait(WAIT)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(5)

    def run_row(self, run_id: str) -> QueuedRow:
        with self.store() as store:
            row = run_queue(store).run(run_id)
        assert row is not None, f"no run {run_id}"
        return row

    def ended(self, run_id: str) -> QueuedRow:
        """The run's queue row once a worker stopped it."""
        deadline = time.monotonic() + WAIT
        while (row := self.run_row(run_id)).state in ("queued", "running"):
            assert time.monotonic() < deadline, f"run {run_id} is still {row.state}"
            time.sleep(0.05)
        return row

    def lines(self) -> Counter[str]:
        return Counter(self.ledger.read_text().split())

    def wait_for_line(self, line: str) -> None:
        deadline = time.monotonic() + WAIT
        while line not in self.lines():
            assert time.monotonic() < deadline, f"no {line!r} in the ledger: {self.lines()}"
            time.sleep(0.02)


@pytest.fixture
def users(tmp_path: Path) -> Iterator[Processes]:
    processes = Processes(tmp_path)
    try:
        yield processes
    finally:
        processes.stop()


SUBMIT_REVIEW = """
import json
from worker_entrypoints import review

handle = review.submit("actors", thread_id="essay-1")
stopped = handle.wait(timeout=60)  # "done": the worker ran it until it stopped (here: paused)
snapshot = review.get_state("essay-1")
print(json.dumps({
    "waited": stopped,
    "run_id": handle.run_id,
    "status": snapshot.status,
    "state": snapshot.state,
    "questions": [q.value for q in snapshot.interrupts],
}))
"""


def test_a_submitted_entrypoint_paused_in_a_task_is_answered_at_the_command_line(users: Processes) -> None:
    users.worker("worker_entrypoints:review", "the-worker", "--db", users.db, "--lease", "5")
    paused = users.service(SUBMIT_REVIEW)
    assert (paused["waited"], paused["status"], paused["state"]) == ("done", "interrupted", None)
    assert paused["questions"] == [{"approve": DRAFT}]

    shown = users.shell.json("show", "essay-1", "--db", users.db)  # the store alone
    assert (shown["status"], shown["state"]) == ("interrupted", None)
    listed = {t["thread_id"]: t for t in users.shell.json("threads", "--db", users.db)}
    assert listed["essay-1"]["status"] == "interrupted"

    answered = users.shell.json("answer", "essay-1", '"ok"', "--db", users.db, "--wait")  # no -g
    assert (answered["status"], answered["state"]) == ("done", APPROVED)
    assert users.shell.json("show", "essay-1", "--db", users.db)["state"] == APPROVED
    told = users.shell("show", "essay-1", "--db", users.db).stdout
    assert '"output"' not in told and '"save"' not in told  # never the entrypoint's record

    with users.store() as store:
        assert store.get_metadata("essay-1")["graph"] == "worker_entrypoints:review"
        answer_run = run_queue(store).get("essay-1")  # the thread's last run: the answer's
    assert answer_run is not None
    assert answer_run.run_id != paused["run_id"]
    for run in (users.run_row(paused["run_id"]), answer_run):
        assert (run.state, run.worker) == ("done", "the-worker")
    # the draft was written once: the answer's run got it from the record
    assert users.lines() == Counter({"start:draft": 1, "end:draft": 1, "start:approve": 2, "end:approve": 1})


@contextmanager
def _serving(users: Processes, target: str) -> Iterator[str]:
    """`actorgraph serve TARGET --port 0` on the users' store: its URL."""
    argv = [sys.executable, "-m", "actorgraph.cli", "serve", target, *users.store_words, "--port", "0"]
    server = subprocess.Popen(
        argv, cwd=users.home, env=users.env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
    )
    try:
        assert server.stdout is not None
        shown = server.stdout.readline()
        assert "serving" in shown, shown
        yield shown.split(" on ", 1)[1].split()[0].rstrip("/")
    finally:
        server.terminate()
        try:
            server.wait(WAIT)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait(5)


def _page(client: httpx.Client, path: str) -> str:
    deadline = time.monotonic() + WAIT
    while True:
        try:
            return client.get(path).raise_for_status().text
        except httpx.TransportError:
            assert time.monotonic() < deadline, "the inbox does not answer"
            time.sleep(0.1)


def test_the_web_inbox_shows_and_answers_a_submitted_entrypoint(users: Processes) -> None:
    in_a_file = f"{TESTS / 'worker_entrypoints.py'}:review"  # file.py:entrypoint, as module:entrypoint
    users.worker(in_a_file, "the-worker", "--db", users.db, "--lease", "5")
    paused = users.service(SUBMIT_REVIEW)
    with _serving(users, "worker_entrypoints:review") as url, httpx.Client(base_url=url) as client:
        page = _page(client, "/threads/essay-1")
        assert DRAFT in page  # the question
        assert '"output"' not in page and '"save"' not in page
        form = {"csrf": field_of(page, "csrf"), "interrupt_id": field_of(page, "interrupt_id")}
        answered = client.post("/threads/essay-1/answer", data={**form, "json": '"ok"', "name": "Ada"})
        assert answered.status_code in (200, 303), answered.text
        deadline = time.monotonic() + WAIT
        while (state := client.get("/threads/essay-1/status.json").json())["status"] != "done":
            assert time.monotonic() < deadline, f"essay-1 is still {state['status']}"
            time.sleep(0.05)
        assert state["state"] == APPROVED
    with users.store() as store:
        answer_run = run_queue(store).get("essay-1")  # the thread's last run: the answer's
        (claim,) = store.get_answers("essay-1", [form["interrupt_id"]]).values()
    assert answer_run is not None
    assert answer_run.run_id != paused["run_id"]
    assert (answer_run.state, answer_run.worker) == ("done", "the-worker")  # the worker ran the answer
    assert claim.answered_by.startswith("Ada (web inbox")
    assert users.lines()["end:draft"] == 1


FIVE_OF_1 = 58  # 1 -> 2 -> 5 -> 12 -> 27 -> 58: total * 2 + i for i in 0..4
SUBMIT_FIVE = """
import json
from worker_entrypoints import five

print(json.dumps({"run_id": five.submit(1, thread_id="five-1").run_id}))
"""


@pytest.mark.parametrize("store", ["sqlite", POSTGRES])
def test_a_worker_killed_inside_an_entrypoint_is_replaced_and_no_finished_task_runs_again(
    store: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    users = Processes(tmp_path, dsn=request.getfixturevalue("postgres_db") if store == "postgres" else None)
    # SQLite: the entrypoint's own checkpointer (no option); PostgreSQL: compiled on --dsn
    words = ["--dsn", users.dsn] if users.dsn else []
    try:
        (tmp_path / "hold").touch()  # the third task waits until the first worker is dead
        run_id = users.service(SUBMIT_FIVE)["run_id"]
        first = users.worker("worker_entrypoints:five", "first", *words, "--lease", "2")
        users.wait_for_line("start:t2")  # so t0 and t1 are recorded (each is, before the next starts)
        first.send_signal(signal.SIGKILL)
        first.wait(WAIT)
        (tmp_path / "hold").unlink()
        users.worker("worker_entrypoints:five", "second", *words)
        row = users.ended(run_id)
    finally:
        users.stop()
    assert (row.state, row.worker, row.attempts) == ("done", "second", 2)
    shown = users.shell.json("show", "five-1", *users.store_words)
    assert (shown["status"], shown["state"]) == ("done", FIVE_OF_1)
    finished_before = {f"{e}:t{i}": 1 for i in (0, 1) for e in ("start", "end")}
    after = {f"{e}:t{i}": 1 for i in (3, 4) for e in ("start", "end")}
    # t2 was cut by the kill: it starts again, and ends once
    assert users.lines() == Counter({**finished_before, "start:t2": 2, "end:t2": 1, **after})
