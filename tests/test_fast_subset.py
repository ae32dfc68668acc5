"""`--fast-limit` (tests/fast_subset.py): CI lists the slowest fast tests and fails on one over the bound."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from children import HERE

pytestmark = pytest.mark.slow  # runs pytest twice in child processes

CONFTEST = """
from fast_subset import FastSubset, add_option


def pytest_addoption(parser):
    add_option(parser)


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: a slow test")
    limit = config.getoption("--fast-limit")
    if limit is not None:
        config.pluginmanager.register(FastSubset(limit), "fast_subset")
"""

TESTS = """
import time

import pytest


def test_quick():
    pass


def test_sluggish():
    time.sleep(0.5)


@pytest.mark.slow
def test_marked_slow():
    time.sleep(0.5)
"""


def _pytest(folder: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    path = os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")])
    env = {**os.environ, "ACTORGRAPH_FAST_LIMIT": "", "PYTHONPATH": path, **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", *args],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    (tmp_path / "conftest.py").write_text(CONFTEST)
    (tmp_path / "test_some.py").write_text(TESTS)
    return tmp_path


def test_a_fast_test_over_the_limit_fails_the_session_and_is_named(suite: Path) -> None:
    done = _pytest(suite, "--fast-limit", "0.3")
    assert done.returncode == 1, done.stdout
    assert "slowest tests of the fast subset" in done.stdout
    assert "test_some.py::test_sluggish took" in done.stdout  # over the limit, with what to do
    assert "mark it @pytest.mark.slow" in done.stdout
    assert "test_marked_slow" not in done.stdout  # marked slow: not of the fast subset


def test_within_the_limit_the_slowest_are_listed_and_the_session_passes(suite: Path) -> None:
    done = _pytest(suite, "--fast-limit", "30")
    assert done.returncode == 0, done.stdout
    listed = done.stdout.split("slowest tests of the fast subset")[1]
    assert listed.index("test_sluggish") < listed.index("test_quick")  # slowest first
    assert "over --fast-limit" not in done.stdout


def test_the_limit_may_come_from_the_environment_as_ci_sets_it(suite: Path) -> None:
    done = _pytest(suite, env={"ACTORGRAPH_FAST_LIMIT": "0.3"})
    assert done.returncode == 1, done.stdout
    assert "test_some.py::test_sluggish took" in done.stdout


def test_without_the_option_nothing_is_listed(suite: Path) -> None:
    done = _pytest(suite)
    assert done.returncode == 0, done.stdout
    assert "slowest tests of the fast subset" not in done.stdout
