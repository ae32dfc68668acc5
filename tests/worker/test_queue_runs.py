"""The run queue holds runs: a thread's runs are taken in order and never overlap, a run kept for a
worker waits for it, a run not yet due waits, a cancel ends a queued run at once and a running one
through its worker (rollback: its checkpoints go and the head comes back), and a queue of the old shape
(one row per thread) is moved into the new one on first open, every queued run still taken once.

On a real SQLite file and a real PostgreSQL database; the property drives random claims, finishes
and submissions against the invariant (one running run per thread, taken in order).
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lines import in_a_line
from pg_server import POSTGRES

import actorgraph as ag
from actorgraph.checkpoint import PostgresCheckpointer, SqliteCheckpointer
from actorgraph.checkpoint._queue import NewRun, RunQueue, run_queue
from actorgraph.checkpoint._queue_runs import insert_run, lock_thread


@pytest.fixture(params=["sqlite", POSTGRES])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    if request.param == "postgres":
        with PostgresCheckpointer(request.getfixturevalue("postgres_db")) as found:
            yield found
    else:
        with SqliteCheckpointer(tmp_path / "q.db") as found:
            yield found


def add(queue: RunQueue, thread_id: str, **options: Any) -> str:
    """Queue a run of the API server's kind (it names its graph) behind the thread's others."""
    new = NewRun(thread_id, b"run", graph=options.pop("graph", "g"), **options)

    def work(conn: Any) -> None:
        lock_thread(queue.store, conn, thread_id)
        insert_run(queue.store, conn, new, take_now=new.holder is not None, stamp=time.time())

    queue.transaction("adding a run", work)
    return new.run_id


def test_a_threads_runs_are_taken_in_order_one_at_a_time(store: Any) -> None:
    queue = run_queue(store)
    first, second = add(queue, "t"), add(queue, "t")
    other = add(queue, "u")
    taken = queue.claim("w1", 30.0, graphs=["g"])
    assert taken is not None and taken.run_id == first
    assert (taken.seq, taken.attempts) == (1, 1)
    assert queue.claim("w2", 30.0, graphs=["g"]).run_id == other  # t's second waits for its first
    assert queue.claim("w2", 30.0, graphs=["g"]) is None
    assert queue.claim("w2", 30.0) is None  # runs that name a graph are not submit's
    assert queue.finish(first, "w1", state="done") == "done"
    assert queue.claim("w2", 30.0, graphs=["g"]).run_id == second
    assert [r.run_id for r in queue.runs_of("t")] == [second, first]


@pytest.mark.slow  # waits out a reservation, a lease or a time
def test_a_run_kept_for_a_worker_waits_for_it_until_its_reservation_ends(store: Any) -> None:
    queue = run_queue(store)
    kept = add(queue, "t", kept_for="server-a", lease=30.0)
    assert queue.claim("server-b", 30.0, graphs=["g"]) is None
    assert queue.heartbeat("server-a", 30.0, [kept]) == {}  # renewed
    assert queue.claim("server-a", 30.0, graphs=["g"], mine_only=True).run_id == kept
    again = add(queue, "u", kept_for="server-a", lease=1.0)
    time.sleep(1.1)  # server-a died: its reservation ran out
    assert queue.claim("server-b", 30.0, graphs=["g"]).run_id == again


@pytest.mark.slow  # waits out a reservation, a lease or a time
def test_a_run_not_yet_due_waits_and_holds_back_its_threads_later_runs(store: Any) -> None:
    queue = run_queue(store)
    add(queue, "t", not_before=time.time() + 3600)
    add(queue, "t")
    assert queue.claim("w", 30.0, graphs=["g"]) is None
    due = add(queue, "u", not_before=time.time() + 0.5)
    time.sleep(0.6)
    assert queue.claim("w", 30.0, graphs=["g"]).run_id == due


def test_a_queued_run_cancelled_ends_at_once_and_a_running_one_through_its_worker(store: Any) -> None:
    queue = run_queue(store)
    running, waiting, dropped = add(queue, "t"), add(queue, "t"), add(queue, "t")
    assert queue.claim("w", 30.0, graphs=["g"]).run_id == running
    assert queue.cancel(waiting, "t", "interrupt") == "interrupted"
    assert queue.cancel(dropped, "t", "rollback") == "deleted"
    assert queue.run(dropped) is None
    assert queue.cancel(running, "t", "interrupt") == "running"
    assert queue.cancels("w") == {running: "interrupt"}
    assert queue.heartbeat("w", 30.0, [running]) == {running: "interrupt"}
    assert queue.finish(running, "w", state="queued") == "interrupted"  # given back, but it was cancelled
    assert [r.state for r in queue.runs_of("t")] == ["interrupted", "interrupted"]
    assert queue.cancel("no-such-run", "t", "interrupt") is None


@pytest.mark.slow  # waits out a reservation, a lease or a time
def test_a_cancelled_run_whose_worker_died_is_ended_by_the_next_claim(store: Any) -> None:
    queue = run_queue(store)
    stopping = add(queue, "t", holder="alive", lease=30.0)
    add(queue, "t")
    queue.cancel(stopping, "t", "interrupt")
    assert queue.claim("w", 30.0, graphs=["g"]) is None  # its worker may still be stopping it
    dead = add(queue, "u", holder="gone", lease=1.0)
    after = add(queue, "u")
    queue.cancel(dead, "u", "interrupt")
    time.sleep(1.1)
    ended: list[tuple[str, str]] = []
    taken = queue.claim("w", 30.0, graphs=["g"], ended=lambda _c, t, how: ended.append((t, how)))
    assert taken is not None and taken.run_id == after
    assert ended == [("u", "interrupted")]
    assert queue.run(dead).state == "interrupted"
    assert queue.run(stopping).state == "running"


def _count(state: dict[str, Any]) -> dict[str, Any]:
    return {"n": state["n"] + 1}


def test_a_rollback_deletes_the_runs_checkpoints_and_brings_the_head_back(store: Any) -> None:
    with in_a_line(("a", _count), ("b", _count)).compile(store) as app:
        app.invoke({"n": 0}, thread_id="t")
        before = app.get_state("t")
        queue = run_queue(store)
        run = add(queue, "t", holder="w")  # taken at once: its base is the head now
        app.invoke({"n": 10}, thread_id="t")
        assert len(app.get_history("t")) > len(app.get_history("t", before=before.checkpoint_id)) + 1
        assert queue.cancel(run, "t", "rollback") == "running"
        assert queue.finish(run, "w", state="interrupted") == "deleted"
        after = app.get_state("t")
        assert (after.checkpoint_id, after.state) == (before.checkpoint_id, {"n": 2})
        assert app.get_history("t")[0].checkpoint_id == before.checkpoint_id
        assert queue.run(run) is None
        assert app.invoke(None, thread_id="t").state == {"n": 2}  # the thread goes on from where it was


def test_a_rollback_of_the_run_that_began_the_thread_leaves_no_checkpoint(store: Any) -> None:
    with in_a_line(("a", _count)).compile(store) as app:
        queue = run_queue(store)
        run = add(queue, "t", holder="w")
        app.invoke({"n": 0}, thread_id="t")
        queue.cancel(run, "t", "rollback")
        assert queue.finish(run, "w", state="done") == "deleted"  # it finished first: still rolled back
        with pytest.raises(ag.ThreadNotFoundError):
            app.get_state("t")


_OLD_QUEUE = """CREATE TABLE actorgraph_queue (
    thread_id {key} PRIMARY KEY, state {text} NOT NULL, payload {blob} NOT NULL, base_head {key},
    worker {text}, lease_until {real}, attempts {int} NOT NULL, submitted_at {real} NOT NULL,
    updated_at {real} NOT NULL, error {text}
)"""


def test_a_queue_of_the_old_shape_is_moved_on_first_open_and_its_runs_are_taken(store: Any) -> None:
    with in_a_line(("a", _count)).compile(store) as app:
        submitted = app.submit({"n": 0}, thread_id="queued-before")
        payload = run_queue(store).run(submitted.run_id).payload
    d = store.dialect
    old = _OLD_QUEUE.format(key=d.key, text=d.text, real=d.real, int=d.int, blob=d.blob)
    m, now = d.mark, time.time()

    def downgrade(conn: Any) -> None:  # the queue as an earlier actorgraph left it
        conn.execute("DROP TABLE actorgraph_queue")
        conn.execute(old)
        conn.execute("CREATE INDEX actorgraph_queue_by_state ON actorgraph_queue (state, submitted_at)")
        for thread, state in (("queued-before", "queued"), ("done-before", "done")):
            conn.execute(
                f"INSERT INTO actorgraph_queue VALUES ({m}, {m}, {m}, NULL, NULL, NULL, 0, {m}, {m}, NULL)",  # noqa: S608
                (thread, state, payload, now, now),
            )

    store._transaction("downgrading", downgrade)
    store._run_queue = None  # a process that opens the store anew
    queue = run_queue(store)
    assert {r.thread_id for r in queue.rows(states=("queued", "done"))} == {"queued-before", "done-before"}
    taken = queue.claim("w", 30.0)
    assert taken is not None and taken.thread_id == "queued-before"
    assert str(uuid.UUID(taken.run_id)) == taken.run_id
    assert queue.claim("w", 30.0) is None
    with in_a_line(("a", _count)).compile(store) as app:  # submit works on the moved queue
        assert app.submit(None, thread_id="done-before").status() == "queued"


@pytest.mark.slow
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["add", "claim", "finish", "cancel"]), st.integers(0, 2), st.integers(0, 2)
        ),
        max_size=30,
    )
)
def test_no_thread_ever_has_two_runs_running_and_its_runs_start_in_order(
    tmp_path: Path, steps: list[tuple[str, int, int]]
) -> None:
    with SqliteCheckpointer(tmp_path / f"{uuid.uuid4().hex}.db") as store:
        queue = run_queue(store)
        held: dict[str, str] = {}  # run id -> worker
        started: dict[str, list[int]] = {}
        for action, thread, worker in steps:
            name = f"t{thread}"
            if action == "add":
                add(queue, name)
            elif action == "claim" and (row := queue.claim(f"w{worker}", 30.0, graphs=["g"])):
                held[row.run_id] = row.worker
                started.setdefault(row.thread_id, []).append(row.seq)
            elif action == "finish" and held:
                run_id = sorted(held)[worker % len(held)]
                queue.finish(run_id, held.pop(run_id), state="done")
            elif action == "cancel" and (runs := queue.runs_of(name, states=("queued",))):
                queue.cancel(runs[-1].run_id, name, "interrupt")
            for t in ("t0", "t1", "t2"):
                assert len(queue.runs_of(t, states=("running",))) <= 1
        assert all(seqs == sorted(seqs) for seqs in started.values())


def _ask(state: dict[str, Any]) -> dict[str, Any]:
    return {**state, "answer": ag.interrupt("go on?")}


def test_a_rolled_back_resume_leaves_its_question_unanswered(store: Any) -> None:
    with in_a_line(("a", _count), ("ask", _ask)).compile(store) as app:
        paused = app.invoke({"n": 0}, thread_id="t")
        assert paused.status == "interrupted"
        queue = run_queue(store)
        run = add(queue, "t", holder="w")  # its base: the paused checkpoint, with what is stored against it
        assert app.invoke(ag.Command(resume="yes"), thread_id="t").state["answer"] == "yes"
        queue.cancel(run, "t", "rollback")
        assert queue.finish(run, "w", state="done") == "deleted"
        again = app.get_state("t")
        assert (again.checkpoint_id, again.status) == (paused.checkpoint_id, "interrupted")
        assert store.answers_at("t", paused.checkpoint_id) == {}  # the rolled-back run's answer went too
        assert app.invoke(ag.Command(resume="no"), thread_id="t").state["answer"] == "no"
