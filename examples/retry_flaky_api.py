"""Retry a flaky API call: a retry policy, a timeout, a fallback, and resuming a failed run.

Run it: python examples/retry_flaky_api.py
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import actorgraph as ag
from actorgraph import events
from actorgraph.checkpoint import MemoryCheckpointer
from actorgraph.testing import FakeClock

State = dict[str, Any]


# --8<-- [start:client]
class HTTPError(Exception):
    """What an HTTP client raises; the default retry policy reads `status_code`."""

    def __init__(self, status_code: int) -> None:
        super().__init__(f"HTTP {status_code}")
        self.status_code = status_code


class WeatherAPI:
    """A stand-in for a remote API that fails with 503 for its first `failures` calls."""

    def __init__(self, failures: int) -> None:
        self.failures = failures
        self.calls = 0

    def forecast(self, city: str) -> str:
        """The forecast for `city`, or an `HTTPError`."""
        self.calls += 1
        if self.calls <= self.failures:
            raise HTTPError(503)  # a server error: transient, worth retrying
        if city == "Atlantis":
            raise HTTPError(404)  # a client error: retrying cannot help
        return f"sunny in {city}"


# --8<-- [end:client]

runs: Counter[str] = Counter()


# --8<-- [start:graph]
def prepare(state: State) -> State:
    runs["prepare"] += 1
    return {**state, "city": state["city"].title()}


def fetch(state: State, ctx: ag.Context[WeatherAPI]) -> State:
    """The flaky call, alone in its vertex: a retry repeats nothing else."""
    runs["fetch"] += 1
    return {**state, "forecast": ctx.context.forecast(state["city"])}


RETRY = ag.RetryPolicy(max_attempts=4, initial_interval=0.01, backoff_factor=2.0, jitter=False)


def weather() -> ag.Graph[State]:
    graph: ag.Graph[State] = ag.Graph(name="weather")
    graph.add_vertex("prepare", prepare)
    graph.add_vertex("fetch", fetch, retry=RETRY, timeout=5.0)  # each attempt gets 5 s
    graph.add_edge(ag.START, "prepare")
    graph.add_edge("prepare", "fetch")
    graph.add_edge("fetch", ag.END)
    return graph


# --8<-- [end:graph]


def retried() -> None:
    # --8<-- [start:run]
    def show_retry(event: events.Event) -> None:
        if isinstance(event, events.RetryScheduled):
            print(f"  attempt {event.attempt} failed ({event.error.message}); retry in {event.delay:.2f} s")

    api = WeatherAPI(failures=2)
    with weather().compile(listeners=[show_retry]) as app:
        result = app.invoke({"city": "oslo"}, context=api)
    print(f"{result.state['forecast']} after {api.calls} calls")
    # --8<-- [end:run]
    assert result.state["forecast"] == "sunny in Oslo"
    assert api.calls == 3


def not_retried() -> None:
    # --8<-- [start:not-found]
    api = WeatherAPI(failures=0)
    with weather().compile() as app:
        try:
            app.invoke({"city": "atlantis"}, context=api)
        except ag.VertexError as exc:
            print(f"gave up at once: {exc.vertex}, {exc.attempts} attempt, cause {exc.__cause__!r}")
            attempts = exc.attempts
    # --8<-- [end:not-found]
    assert attempts == 1
    assert api.calls == 1


def resumed() -> None:
    runs.clear()
    # --8<-- [start:resume]
    api = WeatherAPI(failures=6)  # down for longer than 4 attempts
    with weather().compile(MemoryCheckpointer()) as app:
        try:
            app.invoke({"city": "lima"}, thread_id="lima", context=api)
        except ag.VertexError as exc:
            print(f"retries spent: {exc}")
        # later, once the API is back: only `fetch` runs again, not `prepare`
        result = app.invoke(None, thread_id="lima", context=api)
    print(f"{result.state['forecast']}; runs: {dict(runs)}")
    # --8<-- [end:resume]
    assert result.state["forecast"] == "sunny in Lima"
    assert runs == {"prepare": 1, "fetch": 7}
    assert api.calls == 7


def fallback() -> None:
    # --8<-- [start:fallback]
    def from_cache(state: State, error: BaseException) -> State:
        """Called once the retries are spent: answer from the cache instead."""
        return {**state, "forecast": "unknown (cached)", "error": str(error)}

    graph: ag.Graph[State] = ag.Graph(name="weather-with-fallback")
    graph.add_vertex("fetch", fetch, retry=RETRY, on_error=from_cache)
    graph.add_edge(ag.START, "fetch")
    graph.add_edge("fetch", ag.END)
    with graph.compile() as app:
        state = app.invoke({"city": "Atlantis"}, context=WeatherAPI(failures=0)).state
    print(f"fallback: {state}")
    # --8<-- [end:fallback]
    assert state == {"city": "Atlantis", "forecast": "unknown (cached)", "error": "HTTP 404"}


def policies() -> None:
    # --8<-- [start:policies]
    too_many_requests = ag.RetryPolicy(
        retry_on=lambda exc: getattr(exc, "status_code", None) == 429,
        max_attempts=10,
        initial_interval=1.0,
        jitter=False,
    )
    graph: ag.Graph[State] = ag.Graph(name="weather")
    graph.add_vertex("fetch", fetch, retry=[too_many_requests, RETRY])  # the first match decides
    graph.add_edge(ag.START, "fetch")
    graph.add_edge("fetch", ag.END)
    clock = FakeClock()  # in tests: backoff returns at once, and is recorded
    with graph.compile(clock=clock) as app:
        app.invoke({"city": "Rome"}, context=WeatherAPI(failures=3))
    print(f"waited {clock.sleeps}")
    # --8<-- [end:policies]
    assert clock.sleeps == [0.01, 0.02, 0.04]  # RETRY decided: 429 did not match the first policy


def main() -> None:
    retried()
    not_retried()
    resumed()
    fallback()
    policies()


if __name__ == "__main__":
    main()
