"""On Ray, a vertex's invocations cannot nest: refused at compile when its code names them, else when made.

A vertex on the Ray backend runs in a worker process, away from its run's
coordinator and checkpointer, so a graph it invokes (a `@task` it calls) could
only run unrecorded there (issue 38, item 20). `compile` refuses a vertex whose
code names a graph, a task or an entrypoint, before anything runs; one that
reaches a graph only at run time (built in the call) has that invocation
refused, and nothing of the invoked graph runs. A graph added as a subgraph
vertex runs on Ray, nested and recorded.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import actorgraph as ag
from actorgraph.checkpoint import MemoryCheckpointer
from actorgraph.func import entrypoint, task
from actorgraph.ray import RayBackend  # sets Ray's sandbox settings before Ray is imported

pytestmark = pytest.mark.slow  # a real Ray cluster

ray = pytest.importorskip("ray", reason='the Ray backend needs Ray: pip install -e ".[ray]"')


def one(name: str, fn: Any, graph_name: str = "graph", **options: Any) -> ag.Graph:
    g = ag.Graph(name=graph_name)
    g.add_vertex(name, fn, **options)
    g.add_edge(ag.START, name)
    g.add_edge(name, ag.END)
    return g


def touch(state: dict[str, Any]) -> dict[str, Any]:
    """The invoked graph's vertex: it leaves a file, so a run of it in any process shows."""
    Path(state["mark"]).write_text("ran")
    return state


@task
def double(n: int) -> int:
    return n * 2


def test_a_vertex_whose_code_invokes_a_graph_is_refused_at_compile_naming_both(backend: RayBackend) -> None:
    with one("touch", touch, "inner").compile() as inner:

        def outer(state: dict[str, Any]) -> dict[str, Any]:
            return inner.invoke(state).state

        parent = one("outer", outer)
        refused = (
            r"vertex 'outer' cannot run on the Ray backend: its code invokes CompiledGraph 'inner'.*subgraph"
        )
        with pytest.raises(ag.GraphValidationError, match=refused):
            parent.compile(backend=backend, checkpointer=MemoryCheckpointer())


def test_a_vertex_inside_a_subgraph_is_named_by_its_path(backend: RayBackend) -> None:
    with one("touch", touch, "inner").compile() as inner:
        team = one("lead", lambda state: inner.invoke(state).state, "team")
        parent = ag.Graph()
        parent.add_vertex("team", team).add_edge(ag.START, "team").add_edge("team", ag.END)
        refused = r"vertex 'team/lead' cannot run on the Ray backend: its code invokes CompiledGraph 'inner'"
        with pytest.raises(ag.GraphValidationError, match=refused):
            parent.compile(backend=backend)


def test_an_entrypoint_that_calls_tasks_is_refused_as_a_vertex_on_ray(backend: RayBackend) -> None:
    def build() -> None:
        @entrypoint(checkpointer=MemoryCheckpointer())  # on Ray already when every compile is (CI's Ray pass)
        def flow(n: int) -> int:
            return double(n).result()

        with flow:
            parent = ag.Graph()
            parent.add_vertex("flow", flow).add_edge(ag.START, "flow").add_edge("flow", ag.END)
            parent.compile(backend=backend)

    with pytest.raises(
        ag.GraphValidationError, match=r"vertex '(flow/)?flow'.*invokes TaskFunction 'double'"
    ):
        build()


def test_a_graph_reached_only_at_run_time_is_refused_when_invoked_and_never_runs(
    backend: RayBackend, tmp_path: Path
) -> None:
    def outer(state: dict[str, Any]) -> dict[str, Any]:
        with one("touch", touch, "inner").compile() as inner:  # built in the call: no code names it
            return inner.invoke(state).state

    retried = ag.RetryPolicy(max_attempts=3, initial_interval=0)
    parent = one("outer", outer, retry=retried)
    mark = tmp_path / "inner-ran"
    with parent.compile(backend=backend, checkpointer=MemoryCheckpointer()) as app:
        with pytest.raises(ag.ConfigError, match="vertex 'outer' invokes 'inner' in a Ray worker"):
            app.invoke({"mark": str(mark)}, thread_id="t")
        assert app.get_state("t").superstep.results["outer"].attempts == 1  # a mistake: not retried
    assert not mark.exists()


def test_a_task_made_at_run_time_is_refused_when_called(backend: RayBackend) -> None:
    def outer(state: dict[str, Any]) -> dict[str, Any]:
        triple = task(lambda n: n * 3, name="triple")  # made in the call: no code names it
        return {"n": triple(state["n"]).result()}

    refused = "vertex 'outer' invokes 'triple' in a Ray worker"
    with one("outer", outer).compile(backend=backend) as app, pytest.raises(ag.ConfigError, match=refused):
        app.invoke({"n": 1})


def test_a_graph_added_as_a_subgraph_vertex_runs_on_ray_nested_and_recorded(
    backend: RayBackend, tmp_path: Path
) -> None:
    parent = ag.Graph()
    parent.add_vertex("inner", one("touch", touch, "inner"))
    parent.add_edge(ag.START, "inner").add_edge("inner", ag.END)
    with parent.compile(backend=backend, checkpointer=MemoryCheckpointer()) as app:
        app.invoke({"mark": str(tmp_path / "ran")}, thread_id="t")
        first = app.get_history("t")[-1]
        (namespace,) = app.get_state("t", first.checkpoint_id, subgraphs=True).subgraphs
        assert [s.next for s in app.get_history("t", namespace=namespace)][-1] == ("touch",)
    assert (tmp_path / "ran").read_text() == "ran"
