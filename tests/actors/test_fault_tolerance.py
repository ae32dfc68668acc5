"""Retry policies, timeouts, dying actors, error handlers: only failed work is redone."""

from __future__ import annotations

import ctypes
import random
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from shared import SharedDict, SharedEvent, SharedList

import actorgraph as ag
from actorgraph._engine.retry import backoff, choose, is_transient, next_delay
from actorgraph.checkpoint import MemoryCheckpointer, SqliteCheckpointer
from actorgraph.merge import append, by_key
from actorgraph.testing import FakeClock

Compile = Callable[..., ag.CompiledGraph]


@pytest.fixture(params=["memory", "sqlite"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    made = MemoryCheckpointer() if request.param == "memory" else SqliteCheckpointer(tmp_path / "ft.db")
    yield made
    made.close()


def single(fn: Callable[..., Any], **options: Any) -> ag.Graph:
    g: ag.Graph = ag.Graph()
    g.add_vertex("v", fn, **options)
    g.add_edge(ag.START, "v")
    g.add_edge("v", ag.END)
    return g


class HTTPError(Exception):
    def __init__(self, status_code: int) -> None:
        super().__init__(f"HTTP {status_code}")
        self.status_code = status_code


# -- the pure decisions ---------------------------------------------------------------------


def test_default_retry_on_is_transient_errors_only() -> None:
    for transient in (ConnectionError(), TimeoutError(), HTTPError(503), ag.VertexTimeoutError()):
        assert is_transient(transient)
    for permanent in (ValueError(), TypeError(), KeyError(), HTTPError(404), ag.RoutingError()):
        assert not is_transient(permanent)


def test_backoff_is_exact_without_jitter_and_bounded_with_it() -> None:
    policy = ag.RetryPolicy(initial_interval=1, backoff_factor=2, max_interval=5, jitter=False)
    assert [backoff(policy, n, 0.9) for n in (1, 2, 3, 4)] == [1, 2, 4, 5]
    jittery = ag.RetryPolicy(initial_interval=1, backoff_factor=2, jitter=True)
    assert backoff(jittery, 2, 0.0) == 2 and backoff(jittery, 2, 0.999) < 2.5


def test_the_first_matching_policy_decides() -> None:
    policies = [
        ag.RetryPolicy(retry_on=ValueError, max_attempts=2),
        ag.RetryPolicy(retry_on=lambda e: "flaky" in str(e), max_attempts=5),
    ]
    assert choose(policies, ValueError("x")) is policies[0]
    assert choose(policies, RuntimeError("flaky thing")) is policies[1]
    assert choose(policies, RuntimeError("solid")) is None
    info = ag.ErrorInfo.from_exception(RuntimeError("flaky"))
    assert next_delay(policies, info, 4, 0.0) is not None and next_delay(policies, info, 5, 0.0) is None


# -- retry in runs --------------------------------------------------------------------------------


def test_attempts_and_backoff_are_exact_with_a_fake_clock(compile_graph: Compile, store: Any) -> None:
    calls = SharedDict({"n": 0})

    def flaky(state: dict[str, int]) -> dict[str, int]:
        n = calls.add("n")
        if n < 4:
            raise ConnectionError("reset")
        return {"n": n}

    clock = FakeClock()
    policy = ag.RetryPolicy(
        max_attempts=4, initial_interval=1.0, backoff_factor=3.0, max_interval=5.0, jitter=False
    )
    app = compile_graph(single(flaky, retry=policy), checkpointer=store, clock=clock)
    assert app.invoke({"n": 0}, thread_id="backoff").state == {"n": 4}
    assert clock.sleeps == [1.0, 3.0, 5.0]
    assert app.get_history("backoff")[-1].superstep.results["v"].attempts == 4


@pytest.mark.parametrize(("error", "attempts"), [(ValueError, 2), (ConnectionError, 5), (KeyError, 1)])
def test_several_policies_the_first_match_sets_the_attempt_count(
    compile_graph: Compile, store: Any, error: type[Exception], attempts: int
) -> None:
    calls = SharedDict({"n": 0})

    def always(state: Any) -> Any:
        calls.add("n")
        raise error("nope")

    policies = [
        ag.RetryPolicy(retry_on=ValueError, max_attempts=2, jitter=False),
        ag.RetryPolicy(retry_on=(ConnectionError, TimeoutError), max_attempts=5, jitter=False),
    ]
    app = compile_graph(single(always, retry=policies), checkpointer=store, clock=FakeClock())
    with pytest.raises(ag.VertexError) as info:
        app.invoke({}, thread_id="policies")
    assert calls["n"] == attempts == info.value.attempts
    assert app.get_state("policies").superstep.results["v"].attempts == attempts


def test_each_attempt_starts_from_the_recorded_input(compile_graph: Compile) -> None:
    seen = SharedList()

    def mutating(state: dict[str, Any]) -> dict[str, Any]:
        seen.append(list(state["items"]))
        state["items"].append(len(seen))
        if len(seen) < 3:
            raise ConnectionError("again")
        return state

    app = compile_graph(single(mutating, retry=ag.RetryPolicy(jitter=False)), clock=FakeClock())
    assert app.invoke({"items": [0]}).state == {"items": [0, 3]}
    assert seen == [[0], [0], [0]]


def test_a_graph_default_policy_applies_to_vertices_without_one(compile_graph: Compile) -> None:
    calls = SharedDict({"n": 0})

    def flaky(state: Any) -> Any:
        if calls.add("n") == 1:
            raise TimeoutError("slow upstream")
        return state

    g: ag.Graph = ag.Graph(retry=ag.RetryPolicy(max_attempts=2, jitter=False))
    g.add_vertex("v", flaky)
    g.add_edge(ag.START, "v")
    g.add_edge("v", ag.END)
    assert compile_graph(g, clock=FakeClock()).invoke({"x": 1}).state == {"x": 1}
    assert calls["n"] == 2


def test_an_interrupting_vertex_with_a_retry_policy_runs_once(compile_graph: Compile, store: Any) -> None:
    calls = SharedDict({"n": 0})

    def ask(state: Any) -> Any:
        calls.add("n")
        return {"answer": ag.interrupt("ok?")}

    app = compile_graph(
        single(ask, retry=ag.RetryPolicy(max_attempts=5)), checkpointer=store, clock=FakeClock()
    )
    result = app.invoke({}, thread_id="i")
    assert result.status == "interrupted" and calls["n"] == 1
    snap = app.get_state("i")
    assert snap.superstep.results["v"].attempts == 1


def test_twenty_way_fan_out_with_five_branches_failing_once(compile_graph: Compile, store: Any) -> None:
    names = [f"b{i:02d}" for i in range(20)]
    failing = set(random.Random(7).sample(names, 5))
    calls = SharedDict(dict.fromkeys(names, 0))

    def branch(name: str) -> Callable[[dict[str, Any]], dict[str, Any]]:
        def run(state: dict[str, Any]) -> dict[str, Any]:
            first = calls.add(name) == 1
            if name in failing and first:
                raise ConnectionError(f"{name} lost its connection")
            return {**state, "done": [*state["done"], name]}

        return run

    g: ag.Graph = ag.Graph(merge=by_key({"done": append}))
    for name in names:
        g.add_vertex(name, branch(name), retry=ag.RetryPolicy(max_attempts=2, jitter=False))
        g.add_edge(ag.START, name)
        g.add_edge(name, ag.END)
    app = compile_graph(g, checkpointer=store, clock=FakeClock())
    result = app.invoke({"done": []}, thread_id="fan")
    assert sorted(result.state["done"]) == names
    assert calls == {n: (2 if n in failing else 1) for n in names}
    results = app.get_history("fan")[1].superstep.results
    assert {n: results[n].attempts for n in names} == calls


# -- timeouts and dying actors ---------------------------------------------------------------------------


def test_a_vertex_past_its_timeout_is_abandoned_retried_and_the_run_completes(
    compile_graph: Compile, store: Any
) -> None:
    calls = SharedDict({"n": 0})
    release, stuck_done = SharedEvent(), SharedEvent()

    def slow_once(state: dict[str, int]) -> dict[str, int]:
        if calls.add("n") == 1:
            release.wait(10)  # stuck until the test has seen the run finish without it
            stuck_done.set()
            return {"n": -1}  # the late answer: must be discarded
        return {"n": state["n"] + 1}

    app = compile_graph(
        single(slow_once, timeout=0.1, retry=ag.RetryPolicy(max_attempts=2, jitter=False)),
        checkpointer=store,
        clock=FakeClock(),
    )
    result = app.invoke({"n": 1}, thread_id="slow")
    assert result.state == {"n": 2} and calls["n"] == 2
    assert not stuck_done.is_set()  # the superstep finished while the first attempt was still stuck
    release.set()
    assert stuck_done.wait(5)
    assert app.get_state("slow").state == {"n": 2}


def test_a_timeout_without_retry_fails_with_vertex_timeout_error(compile_graph: Compile) -> None:
    release = SharedEvent()
    app = compile_graph(single(lambda s: (release.wait(5), s)[1], timeout=0.05))
    with pytest.raises(ag.VertexError) as info:
        app.invoke({})
    release.set()
    assert isinstance(info.value.__cause__, ag.VertexTimeoutError)
    assert "timeout of 0.05 s" in str(info.value.__cause__)


def kill_thread(thread: threading.Thread) -> None:
    """Raise SystemExit inside another thread (a death outside the vertex's control)."""
    assert thread.ident is not None
    hit = ctypes.pythonapi.PyThreadState_SetAsyncExc(
        ctypes.c_ulong(thread.ident), ctypes.py_object(SystemExit)
    )
    assert hit == 1


@pytest.mark.threads_only(
    "it injects SystemExit into the vertex actor's thread; tests/ray/test_ray.py kills a partition process"
)
@pytest.mark.own_threads("it checks that the killed actor's thread ends; a scheduler thread goes on")
def test_a_vertex_actor_killed_mid_run_is_replaced_and_the_run_completes(
    compile_graph: Compile, store: Any
) -> None:
    entered = threading.Event()
    victims: list[threading.Thread] = []

    def doomed(state: dict[str, int]) -> dict[str, int]:
        if not victims:
            victims.append(threading.current_thread())
            entered.set()
            while True:  # busy Python code, so the injected exception lands here
                time.sleep(0.001)
        return {"n": state["n"] + 1}

    app = compile_graph(
        single(doomed, retry=ag.RetryPolicy(max_attempts=2, jitter=False)),
        checkpointer=store,
        clock=FakeClock(),
    )
    handle = app.start({"n": 1}, thread_id="kill")
    assert entered.wait(5)
    kill_thread(victims[0])
    assert handle.result(10).state == {"n": 2}
    victims[0].join(5)
    assert not victims[0].is_alive()
    assert app.invoke({"n": 5}, thread_id="after").state == {"n": 6}


@pytest.mark.threads_only(
    "it injects SystemExit into the vertex actor's thread; tests/ray/test_ray.py kills a partition process"
)
def test_a_killed_actor_without_retry_is_a_vertex_actor_died_error(compile_graph: Compile) -> None:
    entered = threading.Event()
    victims: list[threading.Thread] = []

    def doomed(state: Any) -> Any:
        victims.append(threading.current_thread())
        entered.set()
        while True:
            time.sleep(0.001)

    handle = compile_graph(single(doomed)).start({})
    assert entered.wait(5)
    kill_thread(victims[0])
    with pytest.raises(ag.VertexError) as info:
        handle.result(10)
    assert isinstance(info.value.__cause__, ag.VertexActorDiedError)


def test_a_dying_coordinator_fails_only_its_runs_and_is_replaced(compile_graph: Compile) -> None:
    def fatal_merge(base: Any, states: Any) -> Any:
        raise SystemExit("merge blew up")

    g: ag.Graph = ag.Graph(merge=fatal_merge)
    g.add_vertex("a", lambda s: {"a": 1})
    g.add_vertex("b", lambda s: {"b": 1})
    for name in ("a", "b"):
        g.add_edge(ag.START, name)
        g.add_edge(name, ag.END)
    app = compile_graph(g)
    with pytest.raises(ag.ActorGraphError, match="coordinator driving this run died"):
        app.invoke({}, timeout=10)
    other = compile_graph(single(lambda s: {"ok": True}))
    assert other.invoke({}).state == {"ok": True}  # no pykka stop_all took the process down
    with pytest.raises(ag.ActorGraphError, match="coordinator driving this run died"):
        app.invoke({}, timeout=10)


# -- error handlers -------------------------------------------------------------------------------------


def test_on_error_routes_around_a_failure_and_is_recorded(compile_graph: Compile, store: Any) -> None:
    def broken(state: Any) -> Any:
        raise ConnectionError("payment API down")

    def fallback(state: dict[str, Any], error: BaseException) -> ag.Command:
        return ag.Command(update={"paid": False, "why": str(error)}, goto="notify")

    g: ag.Graph = ag.Graph()
    g.add_vertex(
        "pay",
        broken,
        retry=ag.RetryPolicy(max_attempts=2, jitter=False),
        on_error=fallback,
        destinations=["notify"],
    )
    g.add_vertex("notify", lambda s: {**s, "notified": True})
    g.add_vertex("receipt", lambda s: {**s, "receipt": True})
    g.add_edge(ag.START, "pay")
    g.add_edge("pay", "receipt")
    g.add_edge("notify", ag.END)
    g.add_edge("receipt", ag.END)
    app = compile_graph(g, checkpointer=store, clock=FakeClock())
    result = app.invoke({"order": 1}, thread_id="pay")
    assert result.state["notified"] and result.state["paid"] is False
    assert result.state["why"] == "payment API down"
    recorded = app.get_history("pay")[-1].superstep.results["pay"]
    assert recorded.status == "ok" and recorded.handler and recorded.attempts == 2
    assert recorded.error is not None and recorded.error.type == "builtins.ConnectionError"


def test_a_failing_handler_pauses_the_run_with_its_error(compile_graph: Compile) -> None:
    def broken(state: Any) -> Any:
        raise ConnectionError("down")

    def bad_handler(state: Any, error: BaseException) -> Any:
        raise ValueError("handler bug")

    app = compile_graph(single(broken, on_error=bad_handler))
    with pytest.raises(ag.VertexError) as info:
        app.invoke({})
    assert isinstance(info.value.__cause__, ValueError)


def test_a_task_waiting_to_retry_holds_no_actor(compile_graph: Compile) -> None:
    """With one actor for the vertex, a run waiting 30 s to retry does not keep another run waiting."""
    waiting = threading.Event()  # set by the listener, in this process
    calls = SharedList()

    def flaky(state: dict[str, Any]) -> dict[str, Any]:
        calls.append(state["who"])
        if state["who"] == "first":
            raise ConnectionError("down")
        return state

    def listen(event: Any) -> None:
        if isinstance(event, ag.events.RetryScheduled):
            waiting.set()

    g: ag.Graph = ag.Graph()
    g.add_vertex("v", flaky, concurrency=1, retry=ag.RetryPolicy(initial_interval=30.0, jitter=False))
    g.add_edge(ag.START, "v")
    g.add_edge("v", ag.END)
    app = compile_graph(g, listeners=[listen])
    first = app.start({"who": "first"})
    assert waiting.wait(5)  # the first run's task now waits 30 s for its second attempt
    assert app.invoke({"who": "second"}, timeout=10).state == {"who": "second"}  # the one actor is free
    assert calls == ["first", "second"]
    first.cancel()  # the timer entry fires later, finds the run cancelled, and starts nothing
