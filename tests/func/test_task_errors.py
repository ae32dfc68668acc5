"""A failing `@task` keeps its exception: `VertexError.__cause__` is what it raised (issue 38, item 23).

As a graph vertex's and a nested invoke's already did (the docs promise it).
On Ray the failure crosses from the worker to the driver pickled, its cause
with it. A cause that cannot be pickled crosses as a `RecordedError` of its
type, message and traceback, as a failure read back from a checkpoint does.
"""

from __future__ import annotations

import asyncio
import os
import pickle
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from lines import in_a_line

import actorgraph as ag
from actorgraph._actors.handle import raised_for
from actorgraph._model.records import ErrorInfo, Task, VertexResult
from actorgraph.checkpoint import MemoryCheckpointer
from actorgraph.func import entrypoint, task


@task
def lookup(table: dict[str, int]) -> int:
    return table["missing"]


@pytest.fixture
def looks_up() -> Iterator[Any]:
    @entrypoint(checkpointer=MemoryCheckpointer())
    def flow(table: dict[str, int]) -> int:
        return lookup(table).result() + 1

    with flow:
        yield flow


def _run(flow: Any, how: str) -> None:
    if how == "invoke":
        flow.invoke({}, thread_id=how)
    elif how == "start":
        flow.start({}, thread_id=how).result()
    else:
        asyncio.run(flow.ainvoke({}, thread_id=how))


@pytest.mark.threads_only("an entrypoint whose function calls a task is refused on Ray")
@pytest.mark.parametrize("how", ["invoke", "start", "ainvoke"])
def test_a_failing_task_raises_a_vertex_error_whose_cause_is_its_exception(looks_up: Any, how: str) -> None:
    with pytest.raises(ag.VertexError) as caught:
        _run(looks_up, how)
    error = caught.value
    # on Ray the entrypoint runs in a worker, where its task calls are plain calls: the entrypoint fails
    assert error.vertex == ("flow" if os.environ.get("ACTORGRAPH_TEST_BACKEND") == "ray" else "lookup")
    assert error.error_type == "builtins.KeyError"
    assert isinstance(error.__cause__, KeyError)
    assert error.__cause__.args == ("missing",)
    assert looks_up.get_state(how).status == "error"  # and the run stays resumable


def test_a_failing_entrypoint_function_keeps_its_exception_too() -> None:
    @entrypoint()
    def divides(n: int) -> float:
        return 1 / n

    with divides, pytest.raises(ag.VertexError) as caught:
        divides.invoke(0)
    assert isinstance(caught.value.__cause__, ZeroDivisionError)


def _fails(state: dict[str, Any]) -> dict[str, Any]:
    return {**state, "n": state["missing"]}


def test_a_graph_vertex_keeps_its_exception(compile_graph: Any) -> None:
    app = compile_graph(in_a_line(("fails", _fails)))
    with pytest.raises(ag.VertexError) as caught:
        app.invoke({})
    assert isinstance(caught.value.__cause__, KeyError)


@pytest.mark.threads_only("the vertex holds a compiled graph, which cannot be pickled for a Ray worker")
def test_a_nested_invoke_keeps_its_exception(compile_graph: Any) -> None:
    inner = compile_graph(in_a_line(("fails", _fails)))
    outer = compile_graph(in_a_line(("calls", lambda state: inner.invoke(state).state)))
    with pytest.raises(ag.VertexError) as nested:
        outer.invoke({})
    assert isinstance(nested.value.__cause__, KeyError)


def _vertex_error(cause: BaseException) -> ag.VertexError:
    error = ag.VertexError("lookup", task_id="lookup", step=1, attempts=1, error_type="t", message="m")
    error.__cause__ = cause
    return error


def test_a_vertex_error_pickled_keeps_its_cause() -> None:
    back = pickle.loads(pickle.dumps(_vertex_error(KeyError("missing"))))  # noqa: S301 - our own bytes
    assert (back.vertex, back.step, back.attempts) == ("lookup", 1, 1)
    assert isinstance(back.__cause__, KeyError) and back.__cause__.args == ("missing",)


class HoldsALockError(Exception):
    """An exception that cannot be pickled (it holds a lock)."""

    def __init__(self) -> None:
        super().__init__("it holds a lock")
        self.lock = threading.Lock()


def _raised(exc: Exception) -> Exception:
    """`exc`, raised and caught (so it has a traceback)."""
    try:
        raise exc  # noqa: TRY301 - raised here so that it has a traceback
    except Exception as caught:
        return caught


def test_a_cause_that_cannot_be_pickled_crosses_as_a_recorded_error() -> None:
    error = _vertex_error(_raised(HoldsALockError()))
    back = pickle.loads(pickle.dumps(error))  # noqa: S301 - our own bytes
    assert isinstance(back.__cause__, ag.RecordedError)
    assert back.__cause__.type == f"{__name__}.HoldsALockError"
    assert back.__cause__.message == "it holds a lock"
    assert "in _raised" in back.__cause__.traceback  # its traceback, where it was raised


def test_a_failure_read_back_from_a_checkpoint_has_a_recorded_error_as_its_cause() -> None:
    task_ = Task(step=1, vertex="lookup", id="lookup", inputs=())
    recorded = ErrorInfo("builtins.KeyError", "'missing'", "Traceback ...\nKeyError: 'missing'")
    failed = VertexResult.failure(task_, 1, recorded, 0.0, 0.0)  # as loaded: no exception object
    error = raised_for(failed, 1, 0, resumable=True)
    assert isinstance(error, ag.VertexError)
    assert isinstance(error.__cause__, ag.RecordedError)
    assert (error.__cause__.type, error.__cause__.message) == ("builtins.KeyError", "'missing'")
