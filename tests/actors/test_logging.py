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


def test_the_console_renderer_writes_one_event_a_line_and_renders_other_loggers(
    capsys: pytest.CaptureFixture[str],
) -> None:
    handler = actorgraph.logging.configure(json=False, loggers=("actorgraph", "uvicorn.test"))
    try:
        forged = "t1\n2026-01-01T00:00:00Z [info     ] forged line\x1b[2J"
        logging.getLogger("actorgraph.worker").warning("queued run failed", extra={"thread_id": forged})
        try:
            raise ValueError("boom")  # noqa: TRY301 - a traceback to render
        except ValueError:
            logging.getLogger("uvicorn.test").exception("request failed", extra={"color_message": "\x1b[1m"})
    finally:
        for name in ("actorgraph", "uvicorn.test"):
            logging.getLogger(name).removeHandler(handler)
            logging.getLogger(name).setLevel(logging.NOTSET)
    err = capsys.readouterr().err
    assert "\x1b" not in err  # no control character reaches the terminal
    lines = err.splitlines()
    assert "queued run failed" in lines[0]
    assert "forged line" in lines[0]  # on the event's own line, its newline escaped
    assert "request failed" in lines[1]
    assert "color_message" not in lines[1]
    assert lines[2] == "Traceback (most recent call last):"  # a traceback keeps its lines
    assert lines[-1] == "ValueError: boom"
