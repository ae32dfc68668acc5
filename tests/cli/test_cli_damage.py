"""A damaged or forged store does not take the command line down.

Bytes are written straight into the SQLite file, as a failing disk, a bad copy or
an attacker with write access would leave them: `threads` lists every thread and
marks the ones it cannot read, `show` of a damaged one is one line naming the
thread, the checkpoint and what is wrong (exit 1), and no traceback is shown.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from cli_shell import Shell

from actorgraph.checkpoint import AnswerRow
from actorgraph.checkpoint.serde import MsgpackSerializer

pytestmark = pytest.mark.slow  # every command a new process

PLAIN = MsgpackSerializer()
Damage = Callable[[bytes], Any]


def _forged_class(data: bytes) -> bytes:
    """The record, with a value of a class the default serializer does not allow."""
    record = PLAIN.loads(data)
    record["position"]["values"]["x"] = AnswerRow("i", "c", "v", "a", 1.0, b"")
    return MsgpackSerializer(allowed=[AnswerRow]).dumps(record)


DAMAGE: dict[str, tuple[str, Damage, str]] = {
    "truncated": ("actorgraph_checkpoints", lambda data: data[: len(data) // 2], "damaged or truncated"),
    "not msgpack": (
        "actorgraph_checkpoints",
        lambda _: b"\xc1\xc1 not msgpack",
        "not written by MsgpackSerializer",
    ),
    "class not allowed": (
        "actorgraph_checkpoints",
        _forged_class,
        "actorgraph.checkpoint._protocol:AnswerRow",
    ),
    "text, not bytes": ("actorgraph_checkpoints", lambda _: "text", "is damaged: TypeError"),
    "damaged write": ("actorgraph_writes", lambda data: data[:-7], "the result of task 'review'"),
    "forged write": (
        "actorgraph_writes",
        lambda _: PLAIN.dumps({"format": 2, "result": 7}),
        "should be a mapping",
    ),
}


@pytest.fixture
def sh(tmp_path: Path) -> Shell:
    shell = Shell(tmp_path)
    for thread in ("good", "bad"):
        shell("run", "cli_graphs:approval", "--thread", thread, "-q", code=3)
    shell("run", "cli_graphs:flaky", "--thread", "done", "-q")
    return shell


def _damage(db: Path, thread: str, table: str, damage: Damage) -> str:
    """Damage the newest row of `table` for `thread`; the checkpoint it belongs to."""
    with sqlite3.connect(db) as raw:
        rowid, checkpoint, data = raw.execute(
            f"SELECT rowid, checkpoint_id, data FROM {table} WHERE thread_id = ? ORDER BY checkpoint_id DESC",  # noqa: S608
            (thread,),
        ).fetchone()
        raw.execute(f"UPDATE {table} SET data = ? WHERE rowid = ?", (damage(data), rowid))  # noqa: S608
    return str(checkpoint)


@pytest.mark.timeout(120)
@pytest.mark.parametrize("case", sorted(DAMAGE))
def test_a_damaged_thread_is_marked_and_shown_as_one_clear_error(sh: Shell, case: str) -> None:
    table, damage, problem = DAMAGE[case]
    checkpoint = _damage(sh.home / "actorgraph.db", "bad", table, damage)
    if case == "text, not bytes":  # the row itself cannot be read: which checkpoint it is, is unknown
        checkpoint = "the head checkpoint"

    listed = {t["thread_id"]: t for t in sh.json("threads")}
    assert set(listed) == {"good", "bad", "done"}
    assert listed["good"]["problem"] is None and listed["good"]["interrupts"][0]["vertex"] == "review"
    assert problem in listed["bad"]["problem"] and checkpoint in listed["bad"]["problem"]
    assert listed["bad"]["interrupts"] == []
    inbox = sh("threads", "--status", "interrupted").stdout
    assert "Publish this draft?" in inbox and "unreadable: " in inbox

    for command in (["show", "bad"], ["show", "bad", "--history"], ["answer", "bad", "yes"]):
        failed = sh(*command, code=1)
        assert len(failed.stderr.splitlines()) == 1 and "Traceback" not in failed.stderr, failed.stderr
        assert "'bad'" in failed.stderr and checkpoint in failed.stderr and problem in failed.stderr
        assert failed.stdout == ""
    as_json = sh.json("show", "bad", code=1)
    assert as_json["exit_code"] == 1 and checkpoint in as_json["error"]
    assert sh.json("show", "good")["interrupts"][0]["question"] == "Publish this draft?"
    assert sh.json("answer", "good", "yes")["status"] == "done"


@pytest.mark.timeout(120)
def test_forged_rows_of_the_thread_list_are_listed_escaped(sh: Shell) -> None:
    with sqlite3.connect(sh.home / "actorgraph.db") as raw:
        raw.execute(
            "UPDATE actorgraph_threads SET updated_at = 'soon', status = ? WHERE thread_id = 'done'",
            ("\x1b[2J",),
        )
        for table in ("threads", "checkpoints", "writes", "blobs", "metadata"):
            forged = f"UPDATE actorgraph_{table} SET thread_id = ? WHERE thread_id = 'good'"  # noqa: S608
            raw.execute(forged, ("g\x1b]0;x\x07",))
    listed = sh("threads")
    assert "\x1b" not in listed.stdout + listed.stderr
    assert "g\\x1b]0;x\\x07" in listed.stdout and "\\x1b[2J" in listed.stdout
    assert "│ ?  " in listed.stdout or "│ ? " in listed.stdout  # a time that is not a number
    records = {t["thread_id"]: t for t in json.loads(sh("threads", "--json").stdout)}
    assert records["done"]["age_seconds"] is None
    assert records["g\x1b]0;x\x07"]["interrupts"][0]["question"] == "Publish this draft?"
    refused = sh("show", "g\x1b]0;x\x07", code=2)  # an id the API refuses: a usage error, escaped
    assert refused.stderr.startswith("error: THREAD: thread_id ") and "\x1b" not in refused.stderr
