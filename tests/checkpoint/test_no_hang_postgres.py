"""A PostgreSQL server that stops answering (frozen with SIGSTOP, as a network partition looks) fails
the run within the store's bound with a `CheckpointError` that says what to do, and the run resumes
once the server is back (SIGCONT).

The server is frozen at a chosen point by a listener of the run: `TaskFinished` is heard on the
coordinator's thread just before the task's result is written, so the freeze lands exactly before
that write (`durability="sync"`) or before the superstep's checkpoint (`durability="step"`).
"""

from __future__ import annotations

import asyncio
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import psycopg
import pytest

import actorgraph as ag
from actorgraph import events as ev
from actorgraph.checkpoint import PostgresCheckpointer

pytestmark = pytest.mark.slow  # PostgreSQL servers frozen with SIGSTOP, waited out

STATEMENT = 1.0  # the store's statement timeout in these tests: the client gives up a second later
BOUND = 2 * (STATEMENT + 1.0) + 8.0  # the longest a failure may take here: one call's bound twice, and slack


@pytest.fixture(scope="module")
def server() -> Iterator[Any]:
    """A server of this module's own (freezing the session's would stall other tests)."""
    from pg_server import PostgresServer

    with PostgresServer() as made:
        try:
            yield made
        finally:
            made.thaw()


@pytest.fixture
def store(server: Any) -> Iterator[PostgresCheckpointer]:
    """A store on a fresh database of the module's server, thawed and closed after the test."""
    name = f"t_{uuid.uuid4().hex}"
    with psycopg.connect(server.dsn(), autocommit=True) as admin:
        admin.execute(f"CREATE DATABASE {name}")
    made = PostgresCheckpointer(server.dsn(name), statement_timeout=STATEMENT, connect_timeout=2)
    try:
        yield made
    finally:
        server.thaw()
        made.close()
        with psycopg.connect(server.dsn(), autocommit=True) as admin:
            admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def counter(steps: int = 3) -> ag.Graph:
    """`inc` runs `steps` times, one superstep each."""
    g: ag.Graph = ag.Graph()
    g.add_vertex("inc", lambda s: {"n": s["n"] + 1})
    g.add_edge(ag.START, "inc")
    g.add_conditional_edges("inc", lambda s: "inc" if s["n"] < steps else ag.END, ["inc", ag.END])
    return g


def freeze_at(server: Any, step: int) -> Callable[[ev.Event], None]:
    """A listener freezing the server when the task of superstep `step` has finished, before it is stored."""

    def listen(event: ev.Event) -> None:
        if isinstance(event, ev.TaskFinished) and event.step == step and event.final:
            server.freeze()

    return listen


def timed(call: Callable[[], Any]) -> tuple[BaseException | None, float]:
    """What `call` raised (None if nothing), and how many seconds it took."""
    began = time.monotonic()
    try:
        call()
    except ag.ActorGraphError as exc:
        return exc, time.monotonic() - began
    return None, time.monotonic() - began


def assert_says_what_to_do(error: BaseException | None, took: float) -> None:
    assert isinstance(error, ag.CheckpointError), error
    assert took < BOUND, f"the failure took {took:.1f} s, beyond the store's bound"
    message = str(error)
    assert "frozen, overloaded or cut off" in message or "could not be reached" in message, message
    assert "What to do" in message and "reconnects" in message


@pytest.mark.timeout(90)
@pytest.mark.parametrize("how", ["invoke", "stream", "astream"])
def test_a_server_frozen_before_the_run_fails_it_within_the_bound_and_it_runs_once_thawed(
    server: Any, store: PostgresCheckpointer, how: str
) -> None:
    with counter().compile(checkpointer=store) as app:
        assert app.invoke({"n": 0}, thread_id="warm").state == {"n": 3}  # connected before the freeze
        server.freeze()

        def run() -> None:
            if how == "invoke":
                app.invoke({"n": 0}, thread_id="t")
            elif how == "stream":
                list(app.stream({"n": 0}, thread_id="t"))
            else:
                asyncio.run(_drain(app.astream({"n": 0}, thread_id="t")))

        assert_says_what_to_do(*timed(run))
        server.thaw()
        assert app.invoke({"n": 0}, thread_id="t").state == {"n": 3}


async def _drain(items: Any) -> None:
    async for _ in items:
        pass


@pytest.mark.timeout(90)
@pytest.mark.parametrize("durability", ["sync", "step"])
@pytest.mark.parametrize("how", ["invoke", "stream"])
def test_a_server_frozen_mid_run_fails_it_within_the_bound_and_it_resumes_once_thawed(
    server: Any, store: PostgresCheckpointer, durability: str, how: str
) -> None:
    """Frozen before a task's durable write ("sync") or before the superstep's checkpoint ("step")."""
    with counter().compile(checkpointer=store, durability=durability) as app:
        listeners = [freeze_at(server, 2)]
        items: list[Any] = []

        def run() -> None:
            if how == "invoke":
                app.invoke({"n": 0}, thread_id="t", listeners=listeners)
            else:
                items.extend(app.stream({"n": 0}, thread_id="t", listeners=listeners))

        assert_says_what_to_do(*timed(run))
        if how == "stream":
            assert items[:2] == [{"n": 0}, {"n": 1}]  # what came before the freeze
        server.thaw()
        assert app.get_state("t").step == 1  # superstep 2 was never committed
        assert app.invoke(None, thread_id="t").state == {"n": 3}


@pytest.mark.timeout(90)
def test_a_server_frozen_during_get_state_fails_it_within_the_bound(
    server: Any, store: PostgresCheckpointer
) -> None:
    with counter().compile(checkpointer=store) as app:
        app.invoke({"n": 0}, thread_id="t")
        server.freeze()
        assert_says_what_to_do(*timed(lambda: app.get_state("t")))
        server.thaw()
        assert app.get_state("t").state == {"n": 3}


@pytest.mark.timeout(90)
def test_calls_waiting_behind_a_stuck_call_fail_within_the_bound_too(
    server: Any, store: PostgresCheckpointer
) -> None:
    """One connection serves the store: calls queued behind one that waits for a frozen server do not
    wait for it and then for the server again, one after the other."""
    store.threads()
    server.freeze()
    outcomes: list[tuple[BaseException | None, float]] = []
    callers = [threading.Thread(target=lambda: outcomes.append(timed(store.threads))) for _ in range(8)]
    for caller in callers:
        caller.start()
    for caller in callers:
        caller.join(90)
    assert len(outcomes) == 8
    for error, took in outcomes:
        assert isinstance(error, ag.CheckpointError), error
        assert took < BOUND, f"a call took {took:.1f} s"
    server.thaw()
    assert store.threads() == []


@pytest.mark.timeout(90)
@pytest.mark.parametrize("how", ["stream", "handle"])
def test_closing_the_graph_releases_a_consumer_whose_run_waits_on_a_frozen_server(
    server: Any, store: PostgresCheckpointer, how: str
) -> None:
    """The coordinator is stuck in a write for as long as the store's bound (30 s here): closing the
    graph does not wait for it to let go of the run before it releases the run's consumer."""
    patient = PostgresCheckpointer(store._dsn, statement_timeout=30)
    frozen = threading.Event()

    def freeze(event: ev.Event) -> None:
        if isinstance(event, ev.TaskFinished) and event.step == 2 and event.final:
            server.freeze()
            frozen.set()

    app = counter().compile(checkpointer=patient)
    closed_at: list[float] = []

    def close_once_frozen() -> None:
        frozen.wait(60)
        closed_at.append(time.monotonic())
        app.close(timeout=2)

    closer = threading.Thread(target=close_once_frozen, daemon=True)
    closer.start()
    try:
        if how == "stream":
            error, _ = timed(lambda: list(app.stream({"n": 0}, thread_id="t", listeners=[freeze])))
        else:
            error, _ = timed(lambda: app.start({"n": 0}, thread_id="t", listeners=[freeze]).result())
        released = time.monotonic() - closed_at[0]
        assert isinstance(error, ag.ActorGraphError) and "closed" in str(error), error
        assert released < 10, f"released {released:.1f} s after close(), not at once"
    finally:
        server.thaw()
        closer.join(60)
        app.close()
        patient.close()
