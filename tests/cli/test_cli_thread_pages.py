"""`actorgraph threads` reads only the newest `--limit` threads, saying when there are more."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from cli_shell import Shell
from store_rows import row

from actorgraph.checkpoint import SqliteCheckpointer

pytestmark = pytest.mark.slow  # every command a new process


@pytest.fixture
def sh(tmp_path: Path) -> Shell:
    """A shell whose folder's default store holds threads t0..t4 (t4 the newest; t1 and t3 done)."""
    with SqliteCheckpointer(tmp_path / "actorgraph.db") as store:
        for n in range(5):
            store.put(row(f"t{n}", 1, status="done" if n % 2 else "running"), expect_head=None)
            time.sleep(0.002)
    return Shell(tmp_path)


def test_threads_lists_the_newest_up_to_the_limit_and_says_there_are_more(sh: Shell) -> None:
    listed = sh("threads", "--limit", "2", "--json")
    assert [t["thread_id"] for t in json.loads(listed.stdout)] == ["t4", "t3"]
    assert "listed the 2 most recently updated threads; there are more" in listed.stderr
    done = sh("threads", "--status", "done", "--limit", "1")
    assert "t3" in done.stdout
    assert "t1" not in done.stdout
    assert "listed the 1 most recently updated done threads; there are more" in done.stderr


def test_threads_says_nothing_more_when_every_thread_is_listed(sh: Shell) -> None:
    for args in (("--limit", "5"), ("--limit", "0"), ()):
        listed = sh.json("threads", *args)
        assert [t["thread_id"] for t in listed] == ["t4", "t3", "t2", "t1", "t0"], args
        assert "there are more" not in sh("threads", *args).stderr
    assert "Invalid value for '--limit'" in sh("threads", "--limit", "-1", code=2).stderr
