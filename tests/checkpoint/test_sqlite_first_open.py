"""Several connections opening one new SQLite file at once all succeed.

Workers started together on a new `--db` (or a program and its workers, as in
examples/workers.py) open the file at the same moment. Turning a new file to
WAL mode takes its exclusive lock, and SQLite refuses that at once, without
its busy timeout, while another connection opens it: about one round in thirty
of six openers failed with "database is locked" before the switch was retried.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from actorgraph import SqliteCache
from actorgraph.checkpoint import SqliteCheckpointer
from actorgraph.store import SqliteStore

pytestmark = pytest.mark.slow  # 40 rounds of 8 threads per kind of file

OPENERS: dict[str, Callable[[Path], Any]] = {
    "checkpointer": SqliteCheckpointer,
    "memory store": SqliteStore,
    "node cache": SqliteCache,
}


@pytest.mark.parametrize("kind", sorted(OPENERS))
def test_eight_threads_open_one_new_file_at_once_and_none_is_refused(kind: str, tmp_path: Path) -> None:
    opener = OPENERS[kind]
    failures: list[str] = []
    for round_ in range(40):
        path = tmp_path / f"new-{round_}.db"
        start = threading.Barrier(8)

        def open_it(path: Path = path, start: threading.Barrier = start) -> None:
            start.wait()
            try:
                opener(path).close()
            except Exception as exc:  # every failure is the finding
                failures.append(f"{type(exc).__name__}: {exc}")

        threads = [threading.Thread(target=open_it) for _ in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=60)
        assert not any(thread.is_alive() for thread in threads)
    assert failures == []
