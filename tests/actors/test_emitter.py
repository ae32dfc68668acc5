"""A run's emitter: every superstep's two events are built only when someone takes the record."""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable, Iterator
from types import FrameType
from typing import Any

import pytest

from actorgraph._actors.emitter import Emitter
from actorgraph._model.records import VertexResult
from actorgraph.events import Event, SuperstepCommitted, TaskFinished

RESULT = VertexResult("a", "a", "ok", {"n": 2})


class Direct:
    """A listener that takes committed states and finished results as they are, as a stream of one mode."""

    kinds = frozenset({SuperstepCommitted, TaskFinished})

    def __init__(self) -> None:
        self.taken: list[Any] = []
        self.direct = {SuperstepCommitted: self.taken.append, TaskFinished: self.taken.append}

    def __call__(self, event: Event) -> None:
        self.taken.append(("record", event))


class Records(list[Event]):
    """A listener that takes every event record."""

    def __call__(self, event: Event) -> None:
        self.append(event)


@pytest.fixture
def built() -> Iterator[list[str]]:
    """The names of the event records built (in this thread) while the test runs."""
    made: list[str] = []
    inits = {kind.__init__.__code__: kind.__name__ for kind in (SuperstepCommitted, TaskFinished)}

    def watch(frame: FrameType, event: str, _: Any) -> Callable[..., Any] | None:
        if event == "call" and frame.f_code in inits:
            made.append(inits[frame.f_code])
        return None

    sys.setprofile(watch)
    yield made
    sys.setprofile(None)


def test_a_listener_taking_directly_gets_the_state_and_the_result_and_no_record_is_built(
    built: list[str],
) -> None:
    direct = Direct()
    emitter = Emitter("run", None, [direct])
    emitter.committed(1, {"n": 2}, None)
    emitter.finished(1, RESULT)
    assert direct.taken == [{"n": 2}, RESULT]
    assert built == []


def test_the_other_listeners_get_the_records_and_the_direct_one_only_what_it_takes(built: list[str]) -> None:
    direct, records = Direct(), Records()
    emitter = Emitter("run", "t", [direct, records])
    emitter.committed(3, {"n": 2}, "c1")
    emitter.finished(4, RESULT)
    assert built == ["SuperstepCommitted", "TaskFinished"]  # once each, for both listeners
    assert direct.taken == [{"n": 2}, RESULT]
    assert records == [
        SuperstepCommitted("run", "t", 3, {"n": 2}, "c1"),
        TaskFinished("run", "t", 4, RESULT),
    ]


def test_with_debug_logging_the_records_are_built_and_logged(
    built: list[str], caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.DEBUG, logger="actorgraph"):
        direct = Direct()
        emitter = Emitter("run", None, [direct])
        emitter.committed(1, {"n": 2}, None)
        emitter.finished(1, RESULT)
    assert direct.taken == [{"n": 2}, RESULT]
    assert built == ["SuperstepCommitted", "TaskFinished"]
    assert [r.getMessage() for r in caplog.records] == ["superstep committed", "task finished"]


def test_a_direct_taker_that_raises_does_not_stop_the_others(caplog: pytest.LogCaptureFixture) -> None:
    def broken(_: object) -> None:
        raise RuntimeError("broken")

    class Broken(Direct):
        def __init__(self) -> None:
            super().__init__()
            self.direct = {SuperstepCommitted: broken, TaskFinished: broken}

    records = Records()
    emitter = Emitter("run", None, [Broken(), records])
    emitter.committed(1, {"n": 2}, None)
    assert records == [SuperstepCommitted("run", None, 1, {"n": 2})]
    assert "listener failed" in caplog.text
