"""Fixtures of the web inbox tests: a folder for the graphs' side effects, and a paused approval thread."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import web_graphs

import actorgraph as ag
from actorgraph.checkpoint import SqliteCheckpointer


@pytest.fixture(autouse=True)
def _folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WEB_TEST_DIR", str(tmp_path))


@pytest.fixture
def graph(tmp_path: Path) -> Iterator[ag.CompiledGraph[Any]]:
    """The approval graph on a SQLite file, its thread `t1` paused at its question (modules may override)."""
    with (
        SqliteCheckpointer(tmp_path / "runs.db") as store,
        web_graphs.approval.compile(store, context={"dir": os.environ["WEB_TEST_DIR"]}) as compiled,
    ):
        compiled.invoke({"topic": "x"}, thread_id="t1")
        yield compiled
