"""Every way a run ends ends its stream, and closing the graph releases everyone waiting on it.

Each test carries a timeout, so a consumer left waiting fails it instead of
hanging the suite. Every consumer is tried: `stream` in each mode (and with
`subgraphs=True`), `astream`, `invoke`, `ainvoke` and a started run's handle.
"""

from __future__ import annotations

import asyncio
import itertools
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from shared import SharedEvent

import actorgraph as ag
from actorgraph import events as ev
from actorgraph.checkpoint import MemoryCheckpointer, SqliteCheckpointer

Compile = Callable[..., ag.CompiledGraph]

CONSUMERS = [
    "stream:values",
    "stream:updates",
    "stream:events",
    "stream:custom",
    "stream:values+updates",
    "stream:subgraphs",
    "astream:values",
    "astream:events",
    "invoke",
    "ainvoke",
]
WAIT = 20  # seconds a test may take before it counts as a hang


def _mode(how: str) -> Any:
    mode = how.partition(":")[2]
    if mode == "subgraphs":
        return "values"
    return mode.split("+") if "+" in mode else mode


def consume(
    app: ag.CompiledGraph, given: Any, how: str, **run: Any
) -> tuple[list[Any], BaseException | None]:
    """Run `given` the way `how` says; the items it gave, and what it raised (None when it ended well)."""
    items: list[Any] = []
    kind = how.partition(":")[0]
    try:
        if kind == "stream":
            subgraphs = how.endswith("subgraphs")
            items.extend(app.stream(given, mode=_mode(how), subgraphs=subgraphs, **run))
        elif kind == "astream":

            async def collect() -> None:
                items.extend([item async for item in app.astream(given, mode=_mode(how), **run)])

            asyncio.run(collect())
        elif kind == "invoke":
            items.append(app.invoke(given, **run))
        else:
            items.append(asyncio.run(app.ainvoke(given, **run)))
    except ag.ActorGraphError as exc:
        return items, exc
    return items, None


def line(*names: str) -> ag.Graph:
    """START -> names[0] -> ... -> END, each vertex adding its name to `path`."""
    g: ag.Graph = ag.Graph()
    for name in names:
        g.add_vertex(name, lambda s, name=name: {"path": [*s["path"], name]})
    g.add_edge(ag.START, names[0])
    for a, b in itertools.pairwise(names):
        g.add_edge(a, b)
    g.add_edge(names[-1], ag.END)
    return g


# -- an error before the first superstep -------------------------------------------------------------


def start_router(router: Callable[[Any], Any]) -> ag.Graph:
    g: ag.Graph = ag.Graph()
    g.add_vertex("a", lambda s: s)
    g.add_conditional_edges(ag.START, router, ["a", ag.END])
    g.add_edge("a", ag.END)
    return g


@pytest.mark.timeout(WAIT)
@pytest.mark.parametrize("how", CONSUMERS)
def test_a_start_router_returning_an_unknown_vertex_ends_every_consumer(
    compile_graph: Compile, how: str
) -> None:
    items, error = consume(compile_graph(start_router(lambda s: "nowhere")), {"x": 1}, how)
    assert isinstance(error, ag.RoutingError) and "'nowhere'" in str(error)
    assert items == []


def _raises(state: Any) -> Any:
    raise KeyError("no route")


@pytest.mark.timeout(WAIT)
@pytest.mark.parametrize("how", CONSUMERS)
def test_a_start_router_that_raises_ends_every_consumer(compile_graph: Compile, how: str) -> None:
    _, error = consume(compile_graph(start_router(_raises)), {"x": 1}, how)
    assert isinstance(error, ag.RoutingError) and "KeyError" in str(error)


@pytest.mark.timeout(WAIT)
@pytest.mark.parametrize("how", CONSUMERS)
def test_nothing_to_resume_ends_every_consumer(compile_graph: Compile, how: str) -> None:
    app = compile_graph(line("a"), checkpointer=MemoryCheckpointer())
    _, error = consume(app, None, how, thread_id="never-ran")
    assert isinstance(error, ag.ThreadNotFoundError)


@pytest.mark.timeout(WAIT)
@pytest.mark.parametrize("how", CONSUMERS)
def test_a_store_that_fails_before_the_first_superstep_ends_every_consumer(
    compile_graph: Compile, how: str, tmp_path: Path
) -> None:
    store = SqliteCheckpointer(tmp_path / "runs.db")
    store.close()
    _, error = consume(compile_graph(line("a"), checkpointer=store), {"path": []}, how, thread_id="t")
    assert isinstance(error, ag.CheckpointError) and "closed" in str(error)


# -- errors during the run ---------------------------------------------------------------------------


def routed(router: Callable[[Any], Any]) -> ag.Graph:
    g: ag.Graph = ag.Graph()
    g.add_vertex("a", lambda s: {"path": [*s["path"], "a"]})
    g.add_vertex("b", lambda s: {"path": [*s["path"], "b"]})
    g.add_edge(ag.START, "a")
    g.add_conditional_edges("a", router, ["b", ag.END])
    g.add_edge("b", ag.END)
    return g


@pytest.mark.timeout(WAIT)
@pytest.mark.parametrize("how", CONSUMERS)
@pytest.mark.parametrize("router", [lambda s: "nowhere", _raises], ids=["unknown", "raises"])
def test_a_router_failing_mid_run_ends_every_consumer_with_its_error(
    compile_graph: Compile, how: str, router: Callable[[Any], Any]
) -> None:
    items, error = consume(compile_graph(routed(router)), {"path": []}, how)
    assert isinstance(error, ag.RoutingError)
    if how in ("stream:values", "stream:subgraphs"):
        assert items[0] in ({"path": []}, ((), {"path": []}))  # the items before the failure came


@pytest.mark.timeout(WAIT)
@pytest.mark.parametrize("how", CONSUMERS)
def test_a_vertex_that_raises_ends_every_consumer_with_its_error(compile_graph: Compile, how: str) -> None:
    def broken(state: Any) -> Any:
        raise ValueError("bad")

    g = line("a")
    g.add_vertex("broken", broken)
    g.add_edge("a", "broken")
    g.add_edge("broken", ag.END)
    _, error = consume(compile_graph(g), {"path": []}, how)
    assert isinstance(error, ag.VertexError) and error.vertex == "broken"


class _Quit:
    """A listener that raises what no `except Exception` catches."""

    def __init__(self, error: type[BaseException]) -> None:
        self.error = error

    def __call__(self, event: ev.Event) -> None:
        raise self.error(f"listener gave up at {type(event).__name__}")


@pytest.mark.timeout(WAIT)
@pytest.mark.parametrize("how", CONSUMERS)
@pytest.mark.parametrize("error", [RuntimeError, SystemExit, KeyboardInterrupt])
def test_a_listener_that_raises_anything_does_not_break_the_run_or_its_consumers(
    compile_graph: Compile, how: str, error: type[BaseException]
) -> None:
    app = compile_graph(line("a", "b"))
    items, raised = consume(app, {"path": []}, how, listeners=[_Quit(error)])
    assert raised is None
    if how.startswith("invoke"):
        assert items[0].state == {"path": ["a", "b"]}
    assert app.invoke({"path": []}).state == {"path": ["a", "b"]}  # the graph still works


# -- cancelling and closing ----------------------------------------------------------------------------


def held(gate: SharedEvent, entered: SharedEvent) -> ag.Graph:
    """a -> hold -> END; `hold` says it started, then waits for `gate`."""

    def hold(state: Any) -> Any:
        entered.set()
        gate.wait(WAIT)
        return state

    g = line("a")
    g.add_vertex("hold", hold)
    g.add_edge("a", "hold")
    g.add_edge("hold", ag.END)
    return g


@pytest.mark.timeout(WAIT)
def test_cancelling_an_astream_task_cancels_the_run_and_ends_it(compile_graph: Compile) -> None:
    gate, entered = SharedEvent(), SharedEvent()
    app = compile_graph(held(gate, entered))

    async def main() -> None:
        async def collect() -> None:
            async for _ in app.astream({"path": []}):
                pass

        task = asyncio.create_task(collect())
        await asyncio.to_thread(entered.wait, WAIT)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    try:
        asyncio.run(main())
    finally:
        gate.set()


@pytest.fixture
def closing() -> Iterator[Callable[[ag.CompiledGraph], threading.Thread]]:
    """Closes a graph from another thread once its held vertex has started; joins it after the test."""
    threads: list[threading.Thread] = []

    def close(app: ag.CompiledGraph) -> threading.Thread:
        thread = threading.Thread(target=app.close, kwargs={"timeout": WAIT}, daemon=True)
        threads.append(thread)
        thread.start()
        return thread

    yield close
    for thread in threads:
        thread.join(WAIT)


@pytest.mark.timeout(WAIT)
@pytest.mark.parametrize("how", [*CONSUMERS, "handle"])
def test_closing_the_graph_releases_every_consumer_at_once(
    how: str, closing: Callable[[ag.CompiledGraph], threading.Thread]
) -> None:
    """Released while the held vertex still runs: the consumer does not wait for it, only for the close."""
    gate, entered = SharedEvent(), SharedEvent()
    app = held(gate, entered).compile()
    watcher = threading.Thread(target=lambda: (entered.wait(WAIT), closing(app)), daemon=True)
    watcher.start()
    try:
        if how == "handle":
            handle = app.start({"path": []})
            with pytest.raises(ag.ActorGraphError) as info:
                handle.result()
            error: BaseException | None = info.value
        else:
            _, error = consume(app, {"path": []}, how)
        assert isinstance(error, ag.ActorGraphError) and "closed" in str(error)
        assert not gate.is_set()
    finally:
        gate.set()
        watcher.join(WAIT)
        app.close()


@pytest.mark.timeout(WAIT)
def test_closing_the_graph_while_runs_are_being_started_releases_every_handle() -> None:
    for _ in range(20):
        app = line("a", "b").compile()
        handles = [app.start({"path": []}) for _ in range(8)]
        app.close()
        for handle in handles:
            try:
                outcome: Any = handle.result(WAIT).state
            except ag.ActorGraphError as exc:
                outcome = str(exc)
            assert outcome == {"path": ["a", "b"]} or "closed" in outcome


@pytest.mark.timeout(WAIT)
def test_closing_the_graph_from_a_listener_ends_the_stream(compile_graph: Compile) -> None:
    holder: dict[str, ag.CompiledGraph] = {}

    def close_at_step_one(event: ev.Event) -> None:
        if isinstance(event, ev.SuperstepCommitted) and event.step == 1:
            holder["app"].close(timeout=0)

    app = holder["app"] = compile_graph(line("a", "b", "c"))
    items, error = consume(app, {"path": []}, "stream:values", listeners=[close_at_step_one])
    assert isinstance(error, ag.ActorGraphError) and "closed" in str(error)
    assert items[0] == {"path": []} and {"path": ["a", "b"]} not in items
