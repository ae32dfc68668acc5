"""`actorgraph crons list/add/delete` as a user runs them: each a new process, on SQLite and PostgreSQL."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_shell import Shell
from pg_server import POSTGRES

from actorgraph.server import Crons
from actorgraph.server._tables import Tables

pytestmark = pytest.mark.slow  # every command a new process


@pytest.fixture(params=["sqlite", POSTGRES])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> list[str]:
    if request.param == "postgres":
        return ["--dsn", request.getfixturevalue("postgres_db")]
    (tmp_path / "server.db").touch()
    return ["--db", str(tmp_path / "server.db")]


def _crons(store: list[str]) -> Crons:
    return Crons(dsn=store[1]) if store[0] == "--dsn" else Crons(db=store[1])


def test_add_list_and_delete(tmp_path: Path, store: list[str]) -> None:
    sh = Shell(tmp_path)
    added = sh.json(
        "crons", "add", "agent", "0 9 * * 1-5", "--input", '{"topic": "news"}', "--timezone", "Europe/Paris",
        "--metadata", '{"owner": "ada"}', "--end-time", "2099-01-01T00:00:00", *store,
    )  # fmt: skip
    assert (added["graph"], added["schedule"], added["timezone"]) == ("agent", "0 9 * * 1-5", "Europe/Paris")
    assert (added["payload"]["input"], added["metadata"]) == ({"topic": "news"}, {"owner": "ada"})
    assert added["end_time"] == "2099-01-01T00:00:00+00:00"  # no offset: UTC
    assert added["on_run_completed"] == "delete"
    kept = sh.json("crons", "add", "agent", "@hourly", "--keep-threads", "--disabled", *store)
    assert (kept["on_run_completed"], kept["enabled"]) == ("keep", False)
    plain = sh("crons", "add", "other", "*/5 * * * *", *store).stdout
    assert plain.startswith("added cron ") and "other at '*/5 * * * *', next tick" in plain

    listed = sh.json("crons", "list", *store)
    assert len(listed) == 3
    assert [c["cron_id"] for c in sh.json("crons", "list", "--graph", "agent", *store)] == [
        kept["cron_id"],
        added["cron_id"],
    ]
    table = sh("crons", "list", *store).stdout
    for shown in (added["cron_id"], "0 9 * * 1-5", "(Europe/Paris)", "new (delete)", "new (keep)", "false"):
        assert shown in table

    with _crons(store) as crons:  # the rows the routes and Crons read
        assert {c.cron_id for c in crons.list()} == {c["cron_id"] for c in listed}

    assert (
        sh("crons", "delete", added["cron_id"], *store).stdout.strip() == f"deleted cron {added['cron_id']}"
    )
    gone = sh("crons", "delete", added["cron_id"], *store, code=2)
    assert "no cron" in gone.stderr
    assert len(sh.json("crons", "list", *store)) == 2


def test_a_cron_on_a_thread(tmp_path: Path) -> None:
    sh, db = Shell(tmp_path), tmp_path / "server.db"
    missing = sh("crons", "add", "agent", "@daily", "--thread", "notes-1", "--db", str(db), code=2)
    assert "error:" in missing.stderr
    with _crons(["--db", str(db)]) as crons:
        Tables(crons._store).put_thread("notes-1", {}, if_exists="raise")
    cron = sh.json(
        "crons",
        "add",
        "agent",
        "@daily",
        "--thread",
        "notes-1",
        "--multitask-strategy",
        "reject",
        "--db",
        str(db),
    )
    assert (cron["thread_id"], cron["payload"]["multitask_strategy"]) == ("notes-1", "reject")
    assert [c["cron_id"] for c in sh.json("crons", "list", "--thread", "notes-1", "--db", str(db))] == [
        cron["cron_id"]
    ]
    both = sh(
        "crons", "add", "agent", "@daily", "--thread", "notes-1", "--keep-threads", "--db", str(db), code=2
    )
    assert "--keep-threads" in both.stderr


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["add", "agent", "not a schedule"], "schedule:"),
        (["add", "agent", "* * * * *", "--timezone", "Mars/Base"], "timezone:"),
        (["add", "agent", "* * * * *", "--end-time", "2001-01-01"], "end_time:"),
        (["add", "agent", "* * * * *", "--end-time", "soon"], "--end-time"),
        (["add", "agent", "* * * * *", "--input", "{oops"], "--input is not JSON"),
        (["add", "agent", "* * * * *", "--metadata", "[1]"], "metadata"),
        (["add", "agent", "0 0 30 2 *"], "never fires"),
        (["delete", "no-such-cron"], "no cron"),
    ],
)
def test_bad_arguments_are_one_line_and_exit_2(tmp_path: Path, args: list[str], words: str) -> None:
    sh, db = Shell(tmp_path), tmp_path / "server.db"
    db.touch()
    done = sh("crons", *args, "--db", str(db), code=2)
    assert words in done.stderr
    assert "Traceback" not in done.stderr
    assert sh.json("crons", "list", "--db", str(db)) == []


def test_no_store_here(tmp_path: Path) -> None:
    done = Shell(tmp_path)("crons", "list", "--db", str(tmp_path / "none.db"), code=2)
    assert "no store" in done.stderr
    assert not (tmp_path / "none.db").exists()
