"""Every run ends, on random graphs with random faults, however it is consumed.

A random graph (the exactness builder's descriptions, `exactness_graphs.py`)
gets a few faults drawn with it: a router from START or from a vertex that
returns an unknown vertex or raises, a vertex that raises, a listener that
raises (even `SystemExit`), and `close()` called from another thread while the
run goes. Each run is invoked or streamed (every mode, async too) and must end
within a bound with a result or an `ActorGraphError`: never hang, never leak
another exception.
"""

from __future__ import annotations

import asyncio
import os
import threading
from typing import Any

import exactness_graphs as eg
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import actorgraph as ag
from actorgraph import events as ev
from actorgraph.checkpoint import MemoryCheckpointer

pytestmark = pytest.mark.slow  # property test over random faulty graphs

EXAMPLES = max(1, round(80 * float(os.environ.get("NO_HANG_SCALE", "1"))))
"""Examples per run of the property (NO_HANG_SCALE multiplies them); each takes a few milliseconds."""
BOUND = 15.0  # seconds one run may take before it counts as a hang
HOWS = [
    "invoke",
    "ainvoke",
    "start",
    "stream:values",
    "stream:updates",
    "stream:events",
    "stream:custom",
    "stream:values+custom",
    "stream:subgraphs",
    "astream:values",
    "astream:updates",
]


@st.composite
def descriptions(draw: st.DrawFn) -> eg.Desc:
    """A small random graph: forward edges and routers (a valid description, see `exactness_graphs`)."""
    size = draw(st.integers(1, 5), label="size")
    edges: list[tuple[int, int | str]] = []
    routers: list[dict[str, Any]] = []
    for i in range(size):
        targets: list[int | str] = [*range(i + 1, size), "END"]
        edges += [(i, t) for t in targets if draw(st.integers(0, 2)) == 0]
        if draw(st.integers(0, 3)) == 0:
            options = draw(
                st.lists(st.lists(st.sampled_from(targets), min_size=1, max_size=2), min_size=1, max_size=2)
            )
            routers.append({"source": i, "by": draw(st.sampled_from(["log", "n"])), "options": options})
    style = draw(st.sampled_from(["state", "update"]))
    return eg.complete(size, [0], edges, [], routers, seer=0, extras=False, style=style)


@st.composite
def faults(draw: st.DrawFn, size: int) -> dict[str, Any]:
    """The faults of one run (None: not this one)."""
    vertex = st.integers(0, size - 1)
    return {
        "start_router": draw(st.sampled_from([None, "unknown", "raises"])),
        "router": draw(st.none() | st.tuples(vertex, st.sampled_from(["unknown", "raises"]))),
        "vertex": draw(st.none() | vertex),
        "listener": draw(st.sampled_from([None, RuntimeError, SystemExit])),
        "close_after": draw(st.none() | st.sampled_from([0.0, 0.001, 0.005])),
        "store": draw(st.booleans()),
    }


class FailingProbe(eg.Probe):
    """The run's context: the vertex `failing` raises before its work."""

    def __init__(self, failing: int | None) -> None:
        super().__init__()
        self.failing = failing

    def started(self, token: str) -> None:
        if eg.parse_token(token)[1] == self.failing:
            msg = f"vertex {self.failing} failed on purpose"
            raise ValueError(msg)


def bad_router(kind: str) -> Any:
    def route(state: Any) -> str:
        if kind == "raises":
            msg = "router failed on purpose"
            raise LookupError(msg)
        return "nowhere"

    return route


def build(desc: eg.Desc, fault: dict[str, Any]) -> ag.Graph:
    graph = eg.build(desc)
    if fault["start_router"] is not None:
        graph.add_conditional_edges(ag.START, bad_router(fault["start_router"]), [ag.END])
    if fault["router"] is not None:
        index, kind = fault["router"]
        graph.add_conditional_edges(eg.vertex_name(index), bad_router(kind), [ag.END])
    return graph


def listener_raising(error: type[BaseException] | None) -> list[Any]:
    if error is None:
        return []

    def listen(event: ev.Event) -> None:
        raise error("listener failed on purpose")

    return [listen]


def _mode(how: str) -> Any:
    mode = how.partition(":")[2]
    if mode == "subgraphs":
        return "values"
    return mode.split("+") if "+" in mode else mode


def consume(app: ag.CompiledGraph[Any], given: Any, how: str, run: dict[str, Any]) -> Any:
    """Run `given` the way `how` says; what it returned or yielded."""
    kind = how.partition(":")[0]
    if kind == "invoke":
        return app.invoke(given, **run)
    if kind == "start":
        return app.start(given, **run).result()
    if kind == "ainvoke":
        return asyncio.run(app.ainvoke(given, **run))
    if kind == "stream":
        return list(app.stream(given, mode=_mode(how), subgraphs=how.endswith("subgraphs"), **run))

    async def collect() -> list[Any]:
        return [item async for item in app.astream(given, mode=_mode(how), **run)]

    return asyncio.run(collect())


def ends(call: Any) -> tuple[str, Any]:
    """Run `call` in a thread: ("ok", value) or ("raised", exception); fail if it outlasts BOUND."""
    outcome: list[tuple[str, Any]] = []

    def run() -> None:
        try:
            outcome.append(("ok", call()))
        except BaseException as exc:  # the property is about what leaks
            outcome.append(("raised", exc))

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(BOUND)
    assert not worker.is_alive(), f"the run did not end within {BOUND} s"
    return outcome[0]


@pytest.mark.timeout(300)
@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(desc=descriptions(), data=st.data(), how=st.sampled_from(HOWS))
def test_every_run_ends_with_a_result_or_an_actorgraph_error(
    desc: eg.Desc, data: st.DataObject, how: str
) -> None:
    fault = data.draw(faults(desc["size"]), label="faults")
    store = MemoryCheckpointer() if fault["store"] else None
    run: dict[str, Any] = {
        "context": FailingProbe(fault["vertex"]),
        "listeners": listener_raising(fault["listener"]),
        "thread_id": "t" if store is not None else None,
    }
    app = build(desc, fault).compile(checkpointer=store)
    closer = None
    if fault["close_after"] is not None:
        closer = threading.Timer(fault["close_after"], app.close)
        closer.start()
    try:
        kind, value = ends(lambda: consume(app, eg.initial_state(desc), how, run))
    finally:
        if closer is not None:
            closer.join(BOUND)
        app.close()
    if kind == "raised":
        assert isinstance(value, ag.ActorGraphError), f"{type(value).__name__} leaked: {value}"
    failing = fault["start_router"] or fault["router"] or fault["vertex"] is not None
    if not failing and fault["close_after"] is None:
        assert kind == "ok", value
    if fault["start_router"] is not None and fault["close_after"] is None:
        assert kind == "raised" and isinstance(value, ag.RoutingError), value
