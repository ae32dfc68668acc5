"""Outcomes as values: what a superstep records, and re-running only what failed.

Run it: python examples/superstep_state.py
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from typing import Any

import actorgraph as ag
from actorgraph import events
from actorgraph.checkpoint import MemoryCheckpointer
from actorgraph.merge import by_key, merge_dicts
from actorgraph.testing import FakeClock

State = dict[str, Any]

# --8<-- [start:outcomes]
runs: Counter[str] = Counter()
broken = {"prices"}


def source(name: str) -> Callable[[State], State]:
    def fetch(state: State) -> State:
        runs[name] += 1
        if name in broken:
            msg = f"unknown symbol in {name}"
            raise ValueError(msg)  # a programming error: the default policy never retries it
        return {**state, "data": {**state["data"], name: f"{name} data"}}

    return fetch


def dashboard() -> ag.Graph[State]:
    """Three sources in parallel (superstep 1), then END."""
    graph: ag.Graph[State] = ag.Graph(merge=by_key({"data": merge_dicts}), name="dashboard")
    for name in ("news", "prices", "weather"):
        graph.add_vertex(name, source(name), retry=ag.RetryPolicy())
        graph.add_edge(ag.START, name)
        graph.add_edge(name, ag.END)
    return graph


def outcomes(app: ag.CompiledGraph[State]) -> None:
    try:
        app.invoke({"data": {}}, thread_id="dash-1")
    except ag.VertexError as exc:
        print(f"failed: {exc.vertex} in superstep {exc.step} after {exc.attempts} attempt(s)")
    snap = app.get_state("dash-1")
    print(f"thread status: {snap.status}, pending superstep {snap.superstep.step}")
    for task_id, result in snap.superstep.results.items():
        error = f" ({result.error.type}: {result.error.message})" if result.error else ""
        print(f"  {task_id}: {result.status}{error}")
    # --8<-- [end:outcomes]
    assert snap.status == "error"
    statuses = {task_id: r.status for task_id, r in snap.superstep.results.items()}
    assert statuses == {"news": "ok", "prices": "error", "weather": "ok"}
    assert [r.task_id for r in snap.superstep.failed] == ["prices"]


def rerun(app: ag.CompiledGraph[State]) -> None:
    # --8<-- [start:rerun]
    broken.clear()  # fix the cause ...
    result = app.invoke(None, thread_id="dash-1")  # ... and re-run only the failed task
    print(f"{result.status}: {sorted(result.state['data'])}; runs: {dict(sorted(runs.items()))}")
    # --8<-- [end:rerun]
    assert result.status == "done"
    assert runs == {"news": 1, "prices": 2, "weather": 1}


# --8<-- [start:policies]
class RateLimitedError(Exception):
    """The API asked us to slow down."""


calls = Counter[str]()


def quote(state: State) -> State:
    calls["quote"] += 1
    if calls["quote"] <= 3:
        raise RateLimitedError
    return {**state, "quote": 42}


policies = [
    ag.RetryPolicy(retry_on=RateLimitedError, max_attempts=5, initial_interval=1.0, jitter=False),
    ag.RetryPolicy(max_attempts=2, initial_interval=0.1),  # anything else transient
]
# --8<-- [end:policies]


def first_matching_policy() -> None:
    # --8<-- [start:fake-clock]
    graph: ag.Graph[State] = ag.Graph(name="quote")
    graph.add_vertex("quote", quote, retry=policies)
    graph.add_edge(ag.START, "quote")
    graph.add_edge("quote", ag.END)
    clock = FakeClock()  # backoff sleeps return at once and are recorded
    with graph.compile(clock=clock) as app:
        result = app.invoke({})
    print(f"quote {result.state['quote']} after {calls['quote']} attempts, waits {clock.sleeps}")
    # --8<-- [end:fake-clock]
    assert clock.sleeps == [1.0, 2.0, 4.0]
    assert calls["quote"] == 4


# --8<-- [start:timeout]
def slow_once(state: State, ctx: ag.Context[Any]) -> State:
    if ctx.attempt == 1:
        time.sleep(0.3)  # hangs past the timeout: abandoned, its late answer dropped
    return {**state, "answered_by_attempt": ctx.attempt}


def timeouts() -> None:
    graph: ag.Graph[State] = ag.Graph(name="timeout")
    retry = ag.RetryPolicy(max_attempts=2, initial_interval=0.0, jitter=False)
    graph.add_vertex("slow", slow_once, timeout=0.05, retry=retry)
    graph.add_edge(ag.START, "slow")
    graph.add_edge("slow", ag.END)
    failures: list[str] = []
    with graph.compile() as app:
        for event in app.stream({}, mode="events"):
            if isinstance(event, events.TaskFinished) and event.result.error:
                failures.append(event.result.error.type)
            elif isinstance(event, events.RunFinished):
                state = event.state
    print(f"timeout: {failures} then {state}")
    # --8<-- [end:timeout]
    assert failures == ["actorgraph.VertexTimeoutError"]
    assert state == {"answered_by_attempt": 2}


# --8<-- [start:on-error]
def charge(state: State) -> State:
    msg = "payment API down"
    raise ConnectionError(msg)


def charge_failed(state: State, error: BaseException) -> State:
    """Runs once the retries are spent; its state is routed like charge's would be."""
    return {**state, "paid": False, "why": str(error)}


def payments() -> ag.Graph[State]:
    graph: ag.Graph[State] = ag.Graph(name="payments")
    retry = ag.RetryPolicy(max_attempts=2, initial_interval=0.01)
    graph.add_vertex("charge", charge, retry=retry, on_error=charge_failed)
    graph.add_vertex("receipt", lambda s: {**s, "receipt": True})
    graph.add_vertex("apologize", lambda s: {**s, "apology": True})
    graph.add_edge(ag.START, "charge")
    graph.add_conditional_edges(
        "charge", lambda s: "receipt" if s.get("paid", True) else "apologize", ["receipt", "apologize"]
    )
    graph.add_edge("receipt", ag.END)
    graph.add_edge("apologize", ag.END)
    return graph


def handlers() -> None:
    with payments().compile(MemoryCheckpointer()) as app:
        state = app.invoke({"order": 7}, thread_id="order-7").state
        recorded = app.get_history("order-7")[-1].superstep.results["charge"]
    print(f"on_error: {state}; charge recorded as {recorded.status}, handler={recorded.handler}")
    # --8<-- [end:on-error]
    assert state == {"order": 7, "paid": False, "why": "payment API down", "apology": True}
    assert recorded.status == "ok"
    assert recorded.handler
    assert recorded.attempts == 2
    assert recorded.error is not None
    assert recorded.error.type == "builtins.ConnectionError"


def main() -> None:
    with dashboard().compile(MemoryCheckpointer()) as app:
        outcomes(app)
        rerun(app)
    first_matching_policy()
    timeouts()
    handlers()


if __name__ == "__main__":
    main()
