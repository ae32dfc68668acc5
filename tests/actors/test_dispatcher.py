"""Pooled actors: vertex actors without threads of their own, run by the process's scheduler threads."""

from __future__ import annotations

import gc
import threading
import time
import weakref
from collections.abc import Callable
from typing import Any

import pykka
import pytest

import actorgraph as ag
from actorgraph._actors.dispatcher import Dispatcher, PooledActor, shared_dispatcher

Compile = Callable[..., ag.CompiledGraph]

pytestmark = pytest.mark.threads_only("it counts this process's threads")


def fan_out(width: int, fn: Callable[[Any], Any]) -> ag.Graph:
    g: ag.Graph = ag.Graph()
    names = [f"b{i}" for i in range(width)]
    for name in names:
        g.add_vertex(name, fn)
        g.add_edge(ag.START, name)
    g.add_vertex("join", lambda s: s)
    g.add_edge(names, "join")
    g.add_edge("join", ag.END)
    return g


@pytest.mark.slow
def test_a_wide_fan_out_runs_on_a_few_scheduler_threads(compile_graph: Compile) -> None:
    seen: list[int] = []

    def branch(state: dict[str, int]) -> dict[str, int]:
        seen.append(threading.active_count())
        return state

    before = threading.active_count()
    app = compile_graph(fan_out(300, branch), actors="pooled")
    for _ in range(3):
        assert app.invoke({"x": 1}).state == {"x": 1}
    cores = shared_dispatcher().cores
    assert max(seen) - before <= cores + 4, f"{max(seen) - before} threads for 300 branches"

    threaded = compile_graph(fan_out(300, branch), actors="threads")
    seen.clear()
    threaded.invoke({"x": 1})
    assert max(seen) - before >= 300, "the thread design gives each vertex actor a thread"


def test_blocking_vertices_still_run_at_once(compile_graph: Compile) -> None:
    meet = threading.Barrier(40, timeout=20)  # only passes when 40 vertices block at the same time

    def branch(state: dict[str, int]) -> dict[str, int]:
        meet.wait()
        return state

    app = compile_graph(fan_out(40, branch), actors="pooled")
    assert app.invoke({"x": 1}).status == "done"


def test_closing_the_last_pooled_graph_ends_the_scheduler_threads(compile_graph: Compile) -> None:
    first = fan_out(20, lambda s: s).compile(actors="pooled")
    second = fan_out(20, lambda s: s).compile(actors="pooled")
    first.invoke({"x": 1})
    second.invoke({"x": 1})
    first.close()
    assert second.invoke({"x": 2}).state == {"x": 2}  # the other graph's claim keeps the schedulers
    second.close()
    deadline = time.monotonic() + 5
    while _schedulers() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not _schedulers()


class Held:
    """Something a vertex function closes over (a user's object, a `@task` made in a function)."""


def _ran_and_closed() -> Held:
    """A graph whose vertices close over a `Held`, run and closed: only the caller keeps it."""
    held = Held()

    def uses(state: dict[str, int]) -> dict[str, int]:
        assert held is not None
        return state

    with fan_out(4, uses).compile(actors="pooled") as app:
        app.invoke({"x": 1})
    return held


def test_an_idle_scheduler_keeps_nothing_of_the_last_actor_it_ran(compile_graph: Compile) -> None:
    # the schedulers stop the closed graph's actors last, then wait for work: they kept those
    # actors (their pools, vertex functions and all these close over) alive while the process's
    # other graphs held them, so a task made in a function was never collected, nor its graph closed
    keeper = compile_graph(fan_out(2, lambda s: s), actors="pooled")
    keeper.invoke({"x": 1})  # its claim keeps the schedulers running
    held = weakref.ref(_ran_and_closed())
    gc.collect()
    assert held() is None, "a scheduler thread keeps a closed graph's objects alive"


def _schedulers() -> list[str]:
    return [t.name for t in threading.enumerate() if t.name.startswith("actorgraph-sched-")]


def test_actors_is_checked(compile_graph: Compile) -> None:
    g = fan_out(2, lambda s: s)
    with pytest.raises(ag.ConfigError, match="actors must be one of 'pooled', 'threads', got 'fibers'"):
        g.compile(actors="fibers")


class Echo(PooledActor):
    def on_receive(self, message: Any) -> Any:
        if message == "fail":
            raise ValueError("asked to fail")
        return message


def test_a_pooled_actor_keeps_pykka_semantics() -> None:
    dispatcher = shared_dispatcher()
    dispatcher.acquire()
    try:
        refs = [Echo.start(dispatcher) for _ in range(50)]
        futures = [ref.ask(n, block=False) for n, ref in enumerate(refs)]
        assert [f.get(timeout=10) for f in futures] == list(range(50))
        with pytest.raises(ValueError, match="asked to fail"):
            refs[0].ask("fail", timeout=10)
        assert refs[0].ask("still here", timeout=10) == "still here"
        for ref in refs:
            ref.stop(block=True, timeout=10)
        with pytest.raises(pykka.ActorDeadError):
            refs[1].tell("too late")
    finally:
        for scheduler in dispatcher.release():
            if scheduler.thread is not None:
                scheduler.thread.join(5)


@pytest.mark.slow
def test_a_stuck_pooled_vertex_is_abandoned_and_retried(compile_graph: Compile) -> None:
    release = threading.Event()
    calls: list[int] = []

    def stuck_once(state: dict[str, int]) -> dict[str, int]:
        calls.append(1)
        if len(calls) == 1:
            release.wait(20)
        return {"n": state["n"] + 1}

    g: ag.Graph = ag.Graph()
    retry = ag.RetryPolicy(max_attempts=2, initial_interval=0, jitter=False)
    g.add_vertex("v", stuck_once, timeout=0.2, retry=retry)
    g.add_edge(ag.START, "v").add_edge("v", ag.END)
    app = compile_graph(g, actors="pooled")
    try:
        assert app.invoke({"n": 1}).state == {"n": 2}
        assert len(calls) == 2
    finally:
        release.set()


class Relay(PooledActor):
    """Records the thread each message ran on; a message naming another actor is passed on to it."""

    def __init__(self, dispatcher: Dispatcher, seen: list[tuple[str, int]], name: str) -> None:
        super().__init__(dispatcher)
        self.seen = seen
        self.name = name

    def on_receive(self, message: Any) -> None:
        self.seen.append((self.name, threading.get_ident()))
        match message:
            case ("pass", ref, then):
                ref.tell(then)
            case ("pass and wait", ref, event):
                ref.tell(("set", event))
                assert event.wait(10), "the actor made ready behind this blocked slice never ran"
            case ("set", event):
                event.set()


def _started(dispatcher: Dispatcher, seen: list[tuple[str, int]], *names: str) -> list[pykka.ActorRef[Any]]:
    dispatcher.acquire()
    return [Relay.start(dispatcher, seen, name) for name in names]


def _released(dispatcher: Dispatcher, refs: list[pykka.ActorRef[Any]]) -> None:
    for ref in refs:
        ref.stop(block=True, timeout=10)
    for scheduler in dispatcher.release():
        if scheduler.thread is not None:
            scheduler.thread.join(5)


def test_an_actor_made_ready_by_a_slice_runs_next_on_the_same_scheduler() -> None:
    """A coordinator ordering a vertex, a vertex reporting back: no thread is woken for either."""
    dispatcher = Dispatcher(blocked_after=5.0)  # no rescue in this test: only the hand-off itself
    seen: list[tuple[str, int]] = []
    a, b, c = refs = _started(dispatcher, seen, "a", "b", "c")
    try:
        for ref in refs:  # started: their first slices (pykka's set-up) are over
            ref.ask(("set", threading.Event()), timeout=10)
        time.sleep(0.05)
        done = threading.Event()
        a.tell(("pass", b, ("pass", c, ("set", done))))
        assert done.wait(10)
        assert [name for name, _ in seen[-3:]] == ["a", "b", "c"]
        assert len({ident for _, ident in seen[-3:]}) == 1, seen
    finally:
        _released(dispatcher, refs)


def test_an_actor_waiting_behind_a_blocked_slice_is_moved_to_another_scheduler() -> None:
    dispatcher = Dispatcher(blocked_after=0.002)
    seen: list[tuple[str, int]] = []
    a, b = refs = _started(dispatcher, seen, "a", "b")
    try:
        event = threading.Event()
        assert a.ask(("pass and wait", b, event), timeout=15) is None  # b set it while a's slice waited
        (_, a_thread), (_, b_thread) = seen[-2:]
        assert a_thread != b_thread
    finally:
        _released(dispatcher, refs)


class PingPong(PooledActor):
    """Passes a counter back and forth with its partner until `stop` is set or `rounds` ran out."""

    def __init__(self, dispatcher: Dispatcher, stop: threading.Event, rounds: list[int]) -> None:
        super().__init__(dispatcher)
        self.stop_event = stop
        self.rounds = rounds
        self.partner: pykka.ActorRef[Any] | None = None

    def on_receive(self, message: Any) -> None:
        if isinstance(message, pykka.ActorRef):
            self.partner = message
            return
        self.rounds[0] += 1
        if not self.stop_event.is_set() and self.rounds[0] < 200_000 and self.partner is not None:
            self.partner.tell(message + 1)


def test_two_actors_handing_work_to_each_other_do_not_starve_the_rest() -> None:
    """The `runnext` actor queues behind actors that were ready before it."""
    dispatcher = Dispatcher(blocked_after=5.0)
    stop = threading.Event()
    refs = []
    dispatcher.acquire()
    try:
        counters = []
        for _ in range(2):  # as many busy pairs as the dispatcher has schedulers: none idle
            rounds = [0]
            counters.append(rounds)
            left, right = PingPong.start(dispatcher, stop, rounds), PingPong.start(dispatcher, stop, rounds)
            left.tell(right)
            right.tell(left)
            refs += [left, right]
        for ref in refs[::2]:
            ref.tell(0)
        while min(r[0] for r in counters) < 100:  # both pairs are going
            time.sleep(0.001)
        seen: list[tuple[str, int]] = []
        late = Relay.start(dispatcher, seen, "late")
        refs.append(late)
        late.tell(("set", stop))
        assert stop.wait(10)
        assert all(r[0] < 200_000 for r in counters), "the late actor ran only once the pairs had stopped"
    finally:
        stop.set()
        for ref in refs:
            ref.stop(block=True, timeout=10)
        for scheduler in dispatcher.release():
            if scheduler.thread is not None:
                scheduler.thread.join(5)
