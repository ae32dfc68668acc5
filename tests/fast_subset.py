"""Keeping the fast subset fast: the slowest tests not marked `slow`, listed, and a bound on them.

`python -m pytest --fast-limit SECONDS` (or `ACTORGRAPH_FAST_LIMIT=SECONDS`, as
CI's first run sets it, so that its command stays the README's) lists, after the tests, the
slowest tests that are not marked `slow` (what `-m "not slow"` runs), and fails
the session when one took longer than SECONDS to run (its call, not its
fixtures': a session's first PostgreSQL test starts the server). The bound is
generous, far above the quarter of a second that makes a test `slow`
(CONTRIBUTING.md): it catches a test that a change made slow, not a busy machine.
"""

from __future__ import annotations

import os

import pytest

__all__ = ["FastSubset", "add_option"]

LISTED = 10  # how many of the slowest fast tests the summary lists


def add_option(parser: pytest.Parser) -> None:
    """Add `--fast-limit SECONDS` (default: `$ACTORGRAPH_FAST_LIMIT`).

    With it, the slowest fast tests are listed, and one over the limit fails the session.

    Raises:
        UsageError: `$ACTORGRAPH_FAST_LIMIT` is not a number.
    """
    parser.addoption(
        "--fast-limit",
        type=float,
        default=_from_environment(),
        metavar="SECONDS",
        help="list the slowest tests not marked slow, and fail when one's call took longer than SECONDS",
    )


def _from_environment() -> float | None:
    given = os.environ.get("ACTORGRAPH_FAST_LIMIT", "").strip()
    if not given:
        return None
    try:
        return float(given)
    except ValueError:
        msg = f"ACTORGRAPH_FAST_LIMIT must be a number of seconds, got {given!r}"
        raise pytest.UsageError(msg) from None


class FastSubset:
    """The plugin: notes how long each fast test's call took, then lists and checks them."""

    def __init__(self, limit: float) -> None:
        """Check against `limit` seconds."""
        self.limit = limit
        self.took: dict[str, float] = {}  # test id -> seconds its call took

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """Note a fast test's call (a passed or failed one: a skipped test did not run)."""
        if report.when == "call" and "slow" not in report.keywords and not report.skipped:
            self.took[report.nodeid] = report.duration

    def over(self) -> list[tuple[str, float]]:
        """The fast tests that took longer than the limit, slowest first."""
        return [(test, took) for test, took in self._slowest() if took > self.limit]

    def _slowest(self) -> list[tuple[str, float]]:
        return sorted(self.took.items(), key=lambda item: -item[1])

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        """Fail the session when a fast test took longer than the limit."""
        if self.over() and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        """List the slowest fast tests, and those over the limit."""
        if not self.took:
            return
        write = terminalreporter.write_line
        terminalreporter.section(f"slowest tests of the fast subset (-m 'not slow'), of {len(self.took)}")
        for test, took in self._slowest()[:LISTED]:
            write(f"{took:8.2f}s  {test}")
        write(f"{sum(self.took.values()):8.2f}s  in all (their calls)")
        over = self.over()
        if over:
            terminalreporter.section("fast tests over --fast-limit", red=True)
            for test, took in over:
                write(
                    f"{test} took {took:.1f}s (limit {self.limit:g}s): make it fast, or mark it "
                    "@pytest.mark.slow if it must take long (CONTRIBUTING.md)",
                    red=True,
                )
