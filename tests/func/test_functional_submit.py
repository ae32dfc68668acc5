"""An `@entrypoint`'s runs queued for workers, as a graph's are: `Entrypoint.submit` and
`actorgraph.worker.run(an_entrypoint)` (issue 37, item 8).

The workers here are threads of this process on a real SQLite file; the real worker processes, the
command line and a worker killed inside an entrypoint are in tests/worker/test_worker_entrypoints.py.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

import actorgraph as ag
import actorgraph.worker
from actorgraph.checkpoint import MemoryCheckpointer, SqliteCheckpointer
from actorgraph.func import Entrypoint, entrypoint, task
from actorgraph.store import MemoryStore

pytestmark = pytest.mark.threads_only(
    "the counters live in this process, and an entrypoint whose function calls a task is refused on Ray"
)

WAIT = 30.0
calls: Counter[str] = Counter()


@pytest.fixture(autouse=True)
def _fresh_counts() -> None:
    calls.clear()


@task
def draft(topic: str) -> str:
    calls["draft"] += 1
    return f"a draft about {topic}"


@task
def approve(text: str) -> str:
    calls["approve"] += 1
    verdict: str = ag.interrupt({"approve": text})
    return verdict


def _review(topic: str) -> dict[str, Any]:
    text = draft(topic).result()
    return {"text": text, "verdict": approve(text).result()}


@contextmanager
def working(target: Any, **options: Any) -> Iterator[None]:
    """`actorgraph.worker.run(target, ...)` in a thread while the block runs."""
    stop = threading.Event()
    failed: list[BaseException] = []

    def work() -> None:
        try:
            actorgraph.worker.run(target, stop=stop, lease=5.0, name="thread-worker", **options)
        except BaseException as exc:  # the test reports it
            failed.append(exc)

    worker = threading.Thread(target=work)
    worker.start()
    try:
        yield
    finally:
        stop.set()
        worker.join(WAIT)
    assert not failed, failed


def test_submit_needs_a_checkpointer_workers_share() -> None:
    with (
        entrypoint()(_review) as alone,
        pytest.raises(ag.ConfigError, match=r"@entrypoint\(checkpointer=PostgresCheckpointer"),
    ):
        alone.submit("x", thread_id="t1")
    with (
        entrypoint(checkpointer=MemoryCheckpointer())(_review) as in_memory,
        pytest.raises(ag.ConfigError, match="MemoryCheckpointer keeps no database workers can share"),
    ):
        in_memory.submit("x", thread_id="t1")


def test_a_worker_refuses_an_entrypoint_without_a_store_to_take_runs_from() -> None:
    with (
        entrypoint()(_review) as alone,
        pytest.raises(ag.ConfigError, match="has no checkpointer: give the store its runs are queued in"),
    ):
        actorgraph.worker.run(alone)


@pytest.mark.slow
def test_a_submitted_entrypoint_is_run_by_a_worker_and_its_answer_claimed_at_submit(tmp_path: Path) -> None:
    with SqliteCheckpointer(tmp_path / "runs.db") as store, entrypoint(checkpointer=store)(_review) as review:
        with working(review):  # the entrypoint itself, on its own checkpointer
            handle = review.submit("actors", thread_id="essay-1")
            assert handle.wait(WAIT) == "done"
        paused = review.get_state("essay-1")
        assert (paused.status, paused.state) == ("interrupted", None)
        (question,) = paused.interrupts
        answered = review.submit(ag.Command(resume="ok"), thread_id="essay-1", answered_by="Ada")
        with pytest.raises(ag.AlreadyAnsweredError):  # claimed at submit, before any worker runs it
            review.submit(ag.Command(resume="no"), thread_id="essay-1", answered_by="Bob")
        assert answered.status() == "queued"
        with working(review):
            assert answered.wait(WAIT) == "done"
        assert answered.worker() == "thread-worker"
        done = review.get_state("essay-1")
        assert (done.status, done.state) == ("done", {"text": "a draft about actors", "verdict": "ok"})
        assert store.get_answers("essay-1", [question.id])[question.id].answered_by == "Ada"
    assert calls == {"draft": 1, "approve": 2}  # the draft was not written again


def _remembering(topic: str, store: Any) -> str:
    """An entrypoint's function that uses its `store=`: what a worker runs must be given it too."""
    store.put(("topics",), topic, {"seen": True})
    return draft(topic).result()


@pytest.mark.slow
def test_a_worker_given_a_store_runs_the_entrypoint_there_with_the_options_it_was_made_with(
    tmp_path: Path,
) -> None:
    memory, db = MemoryStore(), tmp_path / "runs.db"
    workers_copy: Entrypoint[str] = entrypoint(store=memory, name="remember")(_remembering)  # no checkpointer
    with (
        SqliteCheckpointer(db) as store,
        entrypoint(checkpointer=store, store=memory, name="remember")(_remembering) as service,
        workers_copy,
    ):
        with working(workers_copy, db=str(db)):  # compiled on the store it is given
            handle = service.submit("actors", thread_id="t1")
            assert handle.wait(WAIT) == "done"
        assert service.get_state("t1").state == "a draft about actors"
    assert memory.get(("topics",), "actors") is not None
