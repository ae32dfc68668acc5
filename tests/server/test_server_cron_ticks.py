"""The scheduler's ticks, driven with the clock it takes (`Scheduler.fire_due(now)`), on real stores.

A tick fires exactly once however many schedulers look, at once or one after
another: a property over any sequence of looks by three schedulers (three
stores open on one SQLite file, as three processes have them), and a race of
three schedulers released together on SQLite and PostgreSQL. After downtime a
cron fires once, for its first missed tick, then goes on from now. A tick past
`end_time`, a disabled cron, a busy thread with `reject` and a thread that is
gone each do what the docs say. No taker runs here: the runs stay queued, and
the queue is read to count them.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import math
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import pytest
import server_graphs
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pg_server import POSTGRES

from actorgraph.server._app import Taking, close_server, server_parts, stores_of
from actorgraph.server._body import Limits
from actorgraph.server._context import Server
from actorgraph.server._cron_models import CronCreate, CronPatch
from actorgraph.server._cron_specs import new_cron, patched, tick_run_id
from actorgraph.server._graphs import assistant_uuid

T0 = float(math.floor(time.time())) + 0.5  # the tests' clock starts here, half a second past a tick


@contextmanager
def scheduling(count: int, **store: Any) -> Iterator[list[Server]]:
    """`count` servers' parts on one store (each with its own connection), none of them taking runs."""
    graphs = {"counter": server_graphs.counter_graph, "slow": server_graphs.slow_graph}
    with ExitStack() as stack:
        servers = []
        for k in range(count):
            stores = stores_of(store.get("db"), store.get("dsn"), None, None)
            server, opened = server_parts(graphs, stores, Limits(), Taking(name=f"test-{k}"))
            stack.callback(lambda s=server, o=opened: asyncio.run(close_server(s, o)))
            servers.append(server)
        yield servers


@pytest.fixture(params=["sqlite", POSTGRES])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> dict[str, Any]:
    if request.param == "postgres":
        return {"dsn": request.getfixturevalue("postgres_db")}
    return {"db": str(tmp_path / "server.db")}


def add(server: Server, schedule: str, *, thread: str | None = None, now: float = T0, **fields: Any) -> Any:
    if thread is not None and server.tables.thread(thread) is None:
        server.tables.put_thread(thread, {}, if_exists="raise")
    body = CronCreate(assistant_id="counter", schedule=schedule, **fields)
    cron = new_cron(body, graph="counter", assistant_id=assistant_uuid("counter"), thread_id=thread, now=now)
    assert server.crons is not None
    return server.crons.put(cron)


def fired(server: Server, now: float) -> list[float]:
    assert server.scheduler is not None
    return [done.tick for done in server.scheduler.fire_due(now) if done.created is not None]


def run_ids(server: Server, thread: str) -> list[str]:
    return sorted(row.run_id for row in server.runs.queue.runs_of(thread, limit=1000))


def test_after_downtime_a_cron_fires_once_then_goes_on_from_now(store):
    with scheduling(1, **store) as (server,):
        cron = add(server, "* * * * *", thread="t")  # every minute
        first = cron.next_run_at
        assert first == math.floor(T0 / 60) * 60 + 60
        assert fired(server, first - 0.1) == []
        assert fired(server, first + 3600.5) == [first]  # an hour down: 60 ticks missed, one run
        assert fired(server, first + 3600.6) == []
        again = server.crons.get(cron.cron_id).next_run_at
        assert again == first + 3660  # the first tick after now, not the second missed one
        assert fired(server, again) == [again]
        assert run_ids(server, "t") == sorted(tick_run_id(cron.cron_id, t) for t in (first, again))


def test_end_time_disabled_and_enabled_again(store):
    with scheduling(1, **store) as (server,):
        ending = add(server, "* * * * * *", thread="a", end_time=T0 + 2.2)
        assert fired(server, T0 + 10) == [T0 + 0.5]  # its first tick; the next would be past its end
        assert server.crons.get(ending.cron_id).next_run_at is None
        assert fired(server, T0 + 20) == []
        relabelled = server.crons.change(
            ending.cron_id, lambda c: patched(c, CronPatch(metadata={"k": 1}), now=T0 + 21)
        )
        assert relabelled.next_run_at is None  # still past its end
        later = dt.datetime.fromtimestamp(T0 + 100, dt.UTC)
        extended = server.crons.change(
            ending.cron_id, lambda c: patched(c, CronPatch(end_time=later), now=T0 + 22)
        )
        assert extended.next_run_at == T0 + 22.5  # an end moved later starts it again, from now
        server.crons.delete(ending.cron_id)

        off = add(server, "* * * * * *", thread="b", enabled=False)
        assert fired(server, T0 + 30) == []
        on = server.crons.change(off.cron_id, lambda c: patched(c, CronPatch(enabled=True), now=T0 + 40))
        assert on.next_run_at == T0 + 40.5  # the ticks it was off are not run
        assert fired(server, T0 + 41) == [T0 + 40.5]


def test_a_busy_thread_with_reject_passes_the_tick_and_a_gone_thread_ends_the_cron(store):
    with scheduling(1, **store) as (server,):
        queuing = add(server, "* * * * * *", thread="busy")
        assert fired(server, T0 + 1) == [T0 + 0.5]  # its run is queued (no taker here): the thread is busy
        refusing = add(server, "* * * * * *", thread="busy", multitask_strategy="reject", now=T0 + 1)
        assert fired(server, T0 + 2) == [T0 + 1.5]  # enqueue queues behind; reject passes its tick
        assert len(run_ids(server, "busy")) == 2
        assert server.crons.get(refusing.cron_id).next_run_at == T0 + 2.5  # it goes on
        server.crons.delete(queuing.cron_id)

        gone = add(server, "* * * * * *", thread="gone")
        server.forget("gone")  # the thread goes without the route (which deletes its crons itself)
        assert fired(server, T0 + 3) == []
        assert server.crons.get(gone.cron_id) is None


@pytest.mark.slow
def test_any_sequence_of_looks_by_three_schedulers_fires_each_tick_once(tmp_path):
    with scheduling(3, db=str(tmp_path / "server.db")) as servers:

        @settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
        @given(
            st.lists(
                st.tuples(st.integers(0, 2), st.floats(0, 3.5, allow_nan=False)), min_size=1, max_size=25
            )
        )
        def check(looks: list[tuple[int, float]]) -> None:
            start = float(math.floor(time.time())) + 0.25
            thread = f"t-{uuid.uuid4()}"
            cron = add(servers[0], "* * * * * *", thread=thread, now=start)
            expected, following, now = list[float](), math.floor(start) + 1.0, start
            for which, step in looks:
                now += step
                due = [following] if following <= now else []  # the model: the earliest due tick, once
                if due:
                    following = math.floor(now) + 1.0  # then on from now
                assert fired(servers[which], now) == due
                expected += due
            got = run_ids(servers[1], thread)
            assert got == sorted(tick_run_id(cron.cron_id, tick) for tick in expected)
            servers[0].crons.delete(cron.cron_id)

        check()


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["sqlite", POSTGRES])
def test_three_schedulers_released_together_fire_a_tick_once(kind, tmp_path, request):
    store = (
        {"dsn": request.getfixturevalue("postgres_db")}
        if kind == "postgres"
        else {"db": str(tmp_path / "s.db")}
    )
    with scheduling(3, **store) as servers:
        cron = add(servers[0], "* * * * * *", thread="race")
        counts = []
        for round_ in range(20):
            now, gate, found = T0 + round_ + 0.6, threading.Barrier(3), list[list[float]]()

            def look(
                server: Server, at: float = now, barrier: threading.Barrier = gate, out: list = found
            ) -> None:
                barrier.wait(30)
                out.append(fired(server, at))

            lookers = [threading.Thread(target=look, args=(server,)) for server in servers]
            for looker in lookers:
                looker.start()
            for looker in lookers:
                looker.join(60)
            counts.append(sorted(len(ticks) for ticks in found))
        assert counts == [[0, 0, 1]] * 20
        assert run_ids(servers[2], "race") == sorted(
            tick_run_id(cron.cron_id, T0 + k + 0.5) for k in range(20)
        )
