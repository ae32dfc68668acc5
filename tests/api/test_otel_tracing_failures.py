"""A span processor that raises changes no run's outcome: tracing observes, never decides (issue 38, item 3).

A processor's `on_start` runs when a span begins, its `on_end` when it ends;
both run inside the run's threads (the coordinator's, a vertex actor's, the
event loop of an async vertex). Whatever they raise is logged once and
contained: every result, error and stored checkpoint is the one an untraced
run would have, and no vertex runs twice.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from ledger import note
from lines import in_a_line
from otel_spans import Spans, recording, trace

import actorgraph as ag
from actorgraph._actors import tracing
from actorgraph.checkpoint import MemoryCheckpointer

from opentelemetry.sdk.trace import SpanProcessor  # isort: skip - after otel_spans' skip


class Raising(SpanProcessor):
    """A span processor whose `on_start` or `on_end` raises, as a broken exporter's plugin may."""

    def __init__(self, hook: str) -> None:
        self.hook = hook
        self.raised = 0

    def on_start(self, span: Any, parent_context: Any = None) -> None:  # noqa: ARG002 - the SDK's signature
        self._maybe("on_start")

    def on_end(self, span: Any) -> None:  # noqa: ARG002 - the SDK's signature
        self._maybe("on_end")

    def _maybe(self, hook: str) -> None:
        if hook == self.hook:
            self.raised += 1
            msg = f"the processor's {hook} is broken"
            raise RuntimeError(msg)


@pytest.fixture
def spans() -> Iterator[Spans]:
    yield from recording()


@pytest.fixture(params=["on_start", "on_end"])
def broken(request: pytest.FixtureRequest, spans: Spans) -> Raising:
    processor = Raising(request.param)
    trace.get_tracer_provider().add_span_processor(processor)  # type: ignore[attr-defined]
    tracing._REPORTED.clear()  # "logged once" counts from this test's start
    return processor


def counted(ledger: str, name: str) -> Any:
    """A vertex that notes its side effect in `ledger` (a file: vertices may run in Ray's workers)."""

    def vertex(state: dict[str, Any]) -> dict[str, Any]:
        note(ledger, name)
        return {**state, "n": state["n"] + 1}

    return vertex


def every_kind(ledger: str) -> ag.Graph:
    """A plain vertex, a subgraph's and an async one: every place an attempt's span is made."""

    async def aio(state: dict[str, Any]) -> dict[str, Any]:
        note(ledger, "aio")
        return {**state, "n": state["n"] + 1}

    inner = in_a_line(("deep", counted(ledger, "deep")))
    return in_a_line(("a", counted(ledger, "a")), ("inner", inner), ("aio", aio))


def noted(ledger: str) -> list[str]:
    return Path(ledger).read_text().splitlines()


@pytest.fixture
def ledger(tmp_path: Path) -> str:
    return str(tmp_path / "effects")


@pytest.mark.parametrize("how", ["invoke", "ainvoke", "stream"])
def test_a_raising_span_processor_changes_no_outcome(
    broken: Raising, compile_graph, ledger: str, how: str
) -> None:
    app = compile_graph(every_kind(ledger), checkpointer=MemoryCheckpointer())
    if how == "invoke":
        state = app.invoke({"n": 0}, thread_id="t").state
    elif how == "ainvoke":
        state = asyncio.run(app.ainvoke({"n": 0}, thread_id="t")).state
    else:
        state = list(app.stream({"n": 0}, thread_id="t", mode="values"))[-1]
    assert state == {"n": 3}
    assert sorted(noted(ledger)) == ["a", "aio", "deep"]  # each vertex once: nothing was retried
    assert app.get_state("t").status == "done"
    assert broken.raised > 0  # it did raise, in the run's threads


def test_a_failing_vertex_still_fails_with_its_own_error(broken: Raising, compile_graph) -> None:
    def fails(state: dict[str, Any]) -> dict[str, Any]:
        msg = "the vertex's own failure"
        raise ValueError(msg)

    app = compile_graph(in_a_line(("fails", fails)), checkpointer=MemoryCheckpointer())
    with pytest.raises(ag.VertexError, match="the vertex's own failure"):
        app.invoke({"n": 0}, thread_id="f")
    assert app.get_state("f").status == "error"
    assert broken.raised > 0


def test_a_question_asked_and_answered_under_a_raising_processor(
    broken: Raising, compile_graph, ledger: str
) -> None:
    def ask(state: dict[str, Any]) -> dict[str, Any]:
        note(ledger, "before")
        answer = ag.interrupt("ship?")
        note(ledger, f"after:{answer}")
        return {**state, "answer": answer}

    app = compile_graph(in_a_line(("ask", ask)), checkpointer=MemoryCheckpointer())
    assert app.invoke({"n": 0}, thread_id="q").status == "interrupted"
    done = app.invoke(ag.Command(resume="yes"), thread_id="q")
    assert done.status == "done" and done.state == {"n": 0, "answer": "yes"}
    assert noted(ledger)[-1] == "after:yes" and noted(ledger).count("after:yes") == 1
    assert broken.raised > 0


def test_each_failing_place_is_logged_once(
    broken: Raising, compile_graph, ledger: str, caplog: pytest.LogCaptureFixture
) -> None:
    app = compile_graph(every_kind(ledger))
    with caplog.at_level(logging.DEBUG, logger="actorgraph"):
        app.invoke({"n": 0})
        first = _failures(caplog, logging.WARNING)
        app.invoke({"n": 0})
        again = _failures(caplog, logging.WARNING)
    assert first  # said, with what raised
    assert all(broken.hook in r.getMessage() or broken.hook in str(r.exc_info[1]) for r in first)
    assert len({r.where for r in first}) == len(first)  # type: ignore[attr-defined] - once per place
    assert again == first  # the second run's failures are debug lines only
    assert _failures(caplog, logging.DEBUG)  # and they were there


def _failures(caplog: pytest.LogCaptureFixture, level: int) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.levelno == level and r.getMessage().startswith("tracing failed")]
