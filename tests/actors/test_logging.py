"""Structured logs: bound with run, thread, step and vertex; silent unless asked."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import Any

import pytest

import actorgraph as ag
import actorgraph.logging
from actorgraph.testing import FakeClock

Compile = Callable[..., ag.CompiledGraph]


def flaky_graph(failures: int) -> ag.Graph:
    calls = {"n": 0}

    def flaky(state: dict[str, Any]) -> dict[str, Any]:
        calls["n"] += 1
        if calls["n"] <= failures:
            raise ConnectionError("network down")
        return state

    g: ag.Graph = ag.Graph()
    g.add_vertex("flaky", flaky, retry=ag.RetryPolicy(max_attempts=2, jitter=False))
    g.add_edge(ag.START, "flaky")
    g.add_edge("flaky", ag.END)
    return g


def test_the_library_prints_nothing_by_default(
    compile_graph: Compile, capsys: pytest.CaptureFixture[str]
) -> None:
    app = compile_graph(flaky_graph(failures=5), clock=FakeClock())
    with pytest.raises(ag.VertexError):
        app.invoke({}, thread_id="quiet")
    out, err = capsys.readouterr()
    assert out == "" and err == ""


def test_events_carry_run_thread_step_vertex_and_attempt(
    compile_graph: Compile, caplog: pytest.LogCaptureFixture
) -> None:
    app = compile_graph(flaky_graph(failures=5), clock=FakeClock())
    with caplog.at_level(logging.INFO, logger="actorgraph"), pytest.raises(ag.VertexError):
        app.invoke({}, thread_id="t-logs")
    by_event = {r.getMessage(): r for r in caplog.records}
    retry = by_event["retry scheduled"]
    assert retry.levelname == "INFO"
    assert (retry.vertex, retry.attempt, retry.thread_id, retry.delay) == ("flaky", 1, "t-logs", 0.5)  # type: ignore[attr-defined]
    failed = by_event["task failed"]
    assert failed.levelname == "ERROR"
    assert (failed.vertex, failed.step, failed.attempt) == ("flaky", 1, 2)  # type: ignore[attr-defined]
    assert failed.error == "builtins.ConnectionError" and failed.run_id == retry.run_id  # type: ignore[attr-defined]


def test_configure_renders_json_with_structlog(
    compile_graph: Compile, capsys: pytest.CaptureFixture[str]
) -> None:
    handler = actorgraph.logging.configure(json=True)
    try:
        compile_graph(flaky_graph(failures=1), clock=FakeClock()).invoke({}, thread_id="json")
    finally:
        logging.getLogger("actorgraph").removeHandler(handler)
        logging.getLogger("actorgraph").setLevel(logging.NOTSET)
    lines = [json.loads(line) for line in capsys.readouterr().err.splitlines()]
    retry = next(e for e in lines if e["event"] == "retry scheduled")
    assert retry["vertex"] == "flaky" and retry["level"] == "info" and retry["thread_id"] == "json"
