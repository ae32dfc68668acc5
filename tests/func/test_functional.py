"""The functional API: @entrypoint and @task on the engine (issue 27, item 1)."""

from __future__ import annotations

import asyncio
import gc
import threading
from collections import Counter
from typing import Any

import pykka
import pytest

import actorgraph as ag
from actorgraph._actors import reaper
from actorgraph.checkpoint import MemoryCheckpointer
from actorgraph.func import entrypoint, task

pytestmark = pytest.mark.threads_only(
    "the counters live in this process, and on Ray an entrypoint's tasks run un-nested in the worker"
)

runs: Counter[str] = Counter()


@pytest.fixture(autouse=True)
def _fresh_counts() -> None:
    runs.clear()


@task
def double(x: int) -> int:
    runs["double"] += 1
    return 2 * x


@task
def ask(x: int) -> int:
    runs["ask"] += 1
    return x + ag.interrupt({"add to": x})


def test_tasks_run_in_parallel_and_return_futures() -> None:
    both = threading.Barrier(2, timeout=10)

    @task
    def meet(x: int) -> int:
        both.wait()  # both calls must be running at once
        return x

    @entrypoint()
    def parallel(n: int) -> list[int]:
        futures = [meet(n), meet(n + 1)]
        return [f.result() for f in futures]

    with parallel:
        assert parallel.invoke(1).state == [1, 2]


def test_an_interrupt_in_a_task_pauses_the_entrypoint_and_finished_calls_do_not_run_again() -> None:
    @entrypoint(checkpointer=MemoryCheckpointer())
    def flow(n: int) -> int:
        runs["flow"] += 1
        total = double(n).result() + double(n + 1).result()
        return ask(total).result()

    with flow:
        paused = flow.invoke(3, thread_id="t")
        assert paused.status == "interrupted"
        assert paused.state is None
        assert [(i.vertex, i.value) for i in paused.interrupts] == [("flow/ask", {"add to": 14})]
        done = flow.invoke(ag.Command(resume=100), thread_id="t")
    assert done.state == 114
    # the entrypoint ran again from its top (a task's question pauses it); the task that asked
    # waited for its answer and went on from its line (the live path): it ran once
    assert runs == Counter({"flow": 2, "double": 2, "ask": 1})


def test_previous_and_final_carry_a_value_to_the_next_run_on_the_thread() -> None:
    @entrypoint(checkpointer=MemoryCheckpointer())
    def counter(step: int, previous: int | None = None) -> Any:
        total = (previous or 0) + step
        return entrypoint.final(value=f"total {total}", save=total)

    with counter:
        assert counter.invoke(2, thread_id="c").state == "total 2"
        assert counter.invoke(5, thread_id="c").state == "total 7"
        assert counter.invoke(1, thread_id="other").state == "total 1"


def test_questions_asked_in_parallel_tasks_are_pending_together_and_answered_together() -> None:
    @entrypoint(checkpointer=MemoryCheckpointer())
    def two(n: int) -> list[int]:
        first, second = ask(n), ask(n + 10)
        return [first.result(), second.result()]

    with two:
        paused = two.invoke(1, thread_id="p")
        assert sorted(i.value["add to"] for i in paused.interrupts) == [1, 11]
        answers = {i.id: i.value["add to"] * 100 for i in paused.interrupts}
        assert two.invoke(ag.Command(resume=answers), thread_id="p").state == [101, 1111]
    assert runs["ask"] == 2  # each asked once, and went on from its line when answered (live)


def test_a_resumed_entrypoint_calling_tasks_in_another_order_is_refused() -> None:
    order = ["double", "ask"]

    @entrypoint(checkpointer=MemoryCheckpointer())
    def flow(n: int) -> int:
        calls = {"double": double, "ask": ask}
        return sum(calls[name](n).result() for name in order)

    with flow:
        assert flow.invoke(1, thread_id="o").status == "interrupted"
        order.reverse()  # the code changed while the thread waited
        with pytest.raises(ag.ResumeError, match="'ask' where the run it resumes invoked 'double'"):
            flow.invoke(ag.Command(resume=5), thread_id="o")
        order.reverse()  # put back: the thread was left as it was
        assert flow.invoke(None, thread_id="o").state == 2 + 6


def test_a_call_with_other_arguments_is_refused_never_given_the_old_result() -> None:
    given = {"n": 1}

    @entrypoint(checkpointer=MemoryCheckpointer())
    def flow(_: int) -> int:
        first = double(given["n"]).result()
        return first + ask(0).result()

    with flow:
        flow.invoke(0, thread_id="a")
        given["n"] = 2
        with pytest.raises(ag.ResumeError, match="another input"):
            flow.invoke(ag.Command(resume=1), thread_id="a")


def test_a_failing_task_is_retried_by_its_policy_and_a_failed_run_resumes_without_finished_calls() -> None:
    attempts: Counter[str] = Counter()

    @task(retry=ag.RetryPolicy(max_attempts=2, initial_interval=0))
    def flaky(x: int) -> int:
        attempts["flaky"] += 1
        if attempts["flaky"] % 3 != 0:  # fails twice (one retry spent), then works
            raise ConnectionError("down")
        return x

    @entrypoint(checkpointer=MemoryCheckpointer())
    def flow(n: int) -> int:
        return double(n).result() + flaky(n).result()

    with flow:
        with pytest.raises(ag.VertexError, match="down"):
            flow.invoke(4, thread_id="f")
        assert flow.invoke(None, thread_id="f").state == 12
    assert runs["double"] == 1
    assert attempts["flaky"] == 3


def test_async_entrypoints_await_their_tasks() -> None:
    @task
    async def slow_double(x: int) -> int:
        await asyncio.sleep(0.01)
        return 2 * x

    @entrypoint(checkpointer=MemoryCheckpointer())
    async def flow(n: int) -> int:
        a, b = slow_double(n), slow_double(n + 1)
        return await a + await b

    with flow:
        assert asyncio.run(flow.ainvoke(1, thread_id="x")).state == 6


@pytest.mark.parametrize(
    ("options", "says"),
    [
        ({"retry": "twice"}, "retry must be a RetryPolicy or a list of them, got 'twice'"),
        ({"timeout": -1}, "timeout must be a positive number of seconds, got -1"),
        ({"cache": 60}, "cache must be a CachePolicy"),
    ],
)
def test_a_tasks_options_are_checked_when_it_is_made_not_at_its_first_call(
    options: dict[str, Any], says: str
) -> None:
    with pytest.raises(ag.GraphValidationError, match=f"vertex 'late': {says}"):

        @task(**options)
        def late(x: int) -> int:
            return x


def test_a_task_called_outside_any_run_simply_runs() -> None:
    assert double(21).result() == 42


def test_an_entrypoint_dropped_without_close_lets_the_tasks_graphs_close_with_the_last_one() -> None:
    def dropped() -> None:
        forgotten = entrypoint()(lambda n: double(n).result())
        assert forgotten.invoke(1).state == 2  # never closed: only dropped

    dropped()
    gc.collect()
    assert reaper.settle()
    with entrypoint()(lambda n: double(n).result()) as last:
        assert last.invoke(2).state == 4
    # the dropped one counted as closed once collected, so this was the last: its tasks' graphs closed
    assert pykka.ActorRegistry.get_all() == []


def test_stream_updates_show_the_return_value() -> None:
    @entrypoint()
    def plain(n: int) -> int:
        return double(n).result()

    with plain:
        updates = list(plain.stream(3))
    assert updates == [{"double": 6}, {"plain": 6}]  # each task call, then the return value


def test_tasks_and_entrypoints_are_vertices_of_graphs_and_tasks_call_graphs() -> None:
    inner = ag.Graph(name="plus")
    inner.add_vertex("plus", lambda s: {"n": s["n"] + 1})
    inner.add_edge(ag.START, "plus")
    inner.add_edge("plus", ag.END)

    with inner.compile() as plus:

        @task
        def via_graph(n: int) -> int:
            return plus.invoke({"n": n}).state["n"]

        @entrypoint()
        def enrich(state: dict[str, Any]) -> dict[str, Any]:
            return {"n": via_graph(state["n"]).result() * 10}

        @task
        def halve(state: dict[str, Any]) -> dict[str, Any]:
            return {**state, "n": state["n"] // 2}

        g = ag.Graph()
        g.add_vertex("halve", halve)
        g.add_vertex("enrich", enrich)
        g.add_edge(ag.START, "halve")
        g.add_edge("halve", "enrich")
        g.add_edge("enrich", ag.END)
        with enrich, g.compile(MemoryCheckpointer()) as app:
            assert app.invoke({"n": 8}, thread_id="v").state == {"n": 50}


def test_a_pause_waits_for_the_tasks_still_running_so_the_resume_finds_their_results() -> None:
    """A task still running when its entrypoint pauses is saved before the pause is reported.

    Found by CI: the resume raced the first call's nested run for its thread's
    head (a `CheckpointError`), and could have run the task a second time.
    """
    gate = threading.Event()

    @task
    def slow(x: int) -> int:
        runs["slow"] += 1
        gate.wait(0.3)
        return x + 1

    @entrypoint(checkpointer=MemoryCheckpointer())
    def flow(n: int) -> int:
        pending = slow(n)
        answer = ag.interrupt("go on?")
        return pending.result() + answer

    with flow:
        paused = flow.invoke(1, thread_id="t")
        assert paused.status == "interrupted"
        assert flow.invoke(ag.Command(resume=10), thread_id="t").state == 12
    assert runs["slow"] == 1


def test_a_paused_run_s_state_is_the_thread_s_value_as_get_state_shows_it() -> None:
    """While paused, `RunResult.state` is the thread's value: the last run's return value, as LangGraph's."""

    @entrypoint(checkpointer=MemoryCheckpointer())
    def gated(n: int) -> int:
        return n if n < 10 else n + ag.interrupt("large?")

    with gated:
        assert gated.invoke(20, thread_id="g").state is None  # nothing returned yet on the thread
        assert gated.invoke(ag.Command(resume=1), thread_id="g").state == 21
        paused = gated.invoke(30, thread_id="g")
        assert (paused.status, paused.state) == ("interrupted", 21)
        assert gated.get_state("g").state == 21
        assert gated.invoke(ag.Command(resume=2), thread_id="g").state == 32
