"""LangGraph's functional-API tests (`@entrypoint`, `@task`), ported to `actorgraph.func`.

Each test names the LangGraph test it ports (`libs/langgraph/tests/`). Written
anew on our API, with these deliberate differences, asserted as ours:

- `invoke` returns a `RunResult` whose `state` is the function's return value;
  a paused run's `status` is `"interrupted"` and its questions are in
  `RunResult.interrupts` (LangGraph returns `{"__interrupt__": [...]}`).
- A task call is a run nested in the entrypoint's task, checkpointed in the
  entrypoint's thread; the streams show it as LangGraph's do, as one task of
  the entrypoint (`{"task": result}`, on the top level), and the entrypoint's
  own update is its return value. `mode="events"` shows the records instead.
- A resumed function whose task calls do not match the recorded ones is a
  `ResumeError`; LangGraph hands the old results out by position.
- Timing assertions of LangGraph's streaming tests are replaced by an ordering
  that deadlocks (and times out) if the stream were buffered.

Not ported, for features we lack: `get_input_jsonschema` / `get_output_jsonschema`
/ `context_schema` (test_imp_task's schema part,
test_entrypoint_output_schema_with_return_and_save), `TaskFuture.cancel`
(test_pregel_async.py::test_imp_task_cancel), `RunControl.request_drain`
(test_request_drain_allows_inflight_call_scheduling), injected `writer` /
`StreamWriter` (the writer half of test_overriding_injectable_args_with_tasks),
`@entrypoint(timeout=...)` (test_retry.py::test_entrypoint_timeout_e2e,
test_entrypoint_timeout_allows_pre_timeout_child_task_to_run), the exact
`debug` payloads of test_falsy_return_from_task (its behaviour is ported),
callbacks / tracers (the tracer half of test_pregel_async.py::test_imp_task),
and the deprecation warnings of `retry=`
(test_deprecation.py: `retry=` is our name, so the retries are ported instead).
test_no_redundant_put_writes_for_cached_task patches LangGraph's loop; its
point (a recorded call is not recorded again on resume) is ported by counting
the checkpoints of the call's nested run.
"""

from __future__ import annotations

import asyncio
import functools
import threading
import warnings
from collections import Counter
from typing import Any, TypedDict

import pytest
from pydantic import BaseModel

import actorgraph as ag
from actorgraph.checkpoint import MsgpackSerializer
from actorgraph.events import Interrupted
from actorgraph.func import Entrypoint, entrypoint, task
from actorgraph.store import MemoryStore

pytestmark = pytest.mark.threads_only(
    "the counters live in this process, and on Ray an entrypoint's tasks run un-nested in the worker"
)

calls: Counter[str] = Counter()
RESUME = ag.Command


@pytest.fixture(autouse=True)
def _fresh_counts() -> None:
    calls.clear()


@task
def mapper(n: int) -> str:
    calls["mapper"] += 1
    return str(n) * 2


@task
def double(x: int) -> int:
    calls["double"] += 1
    return 2 * x


@task
def ask(question: str) -> Any:
    calls["ask"] += 1
    return ag.interrupt(question)


# -- futures, parallel tasks, interrupts ----------------------------------------------------------


@pytest.mark.parametrize("durability", ["sync", "step", "exit"])
def test_imp_task(store: Any, durability: str) -> None:
    """Ports test_pregel.py::test_imp_task: parallel futures, a question; no task runs again."""

    @entrypoint(checkpointer=store)
    def graph(numbers: list[int]) -> list[str]:
        futures = [mapper(n) for n in numbers]
        mapped = [f.result() for f in futures]
        answer = ag.interrupt("question")
        return [m + answer for m in mapped]

    thread1 = {"configurable": {"thread_id": "1"}}
    with graph:
        items = [*graph.stream([0, 1], thread1, durability=durability)]
        paused = graph.get_state("1")
        assert sorted(items[:2], key=str) == [{"mapper": "00"}, {"mapper": "11"}]  # as they finish
        assert items[2:] == [{"__interrupt__": paused.interrupts}]
        assert [i.value for i in paused.interrupts] == ["question"]
        assert calls["mapper"] == 2
        done = graph.invoke(RESUME(resume="answer"), thread_id="1", durability=durability)
    assert done.state == ["00answer", "11answer"]
    assert calls["mapper"] == 2


def test_imp_task_async(store: Any) -> None:
    """Ports test_pregel_async.py::test_imp_task: async tasks gathered in an async entrypoint."""

    @task
    async def amapper(n: int) -> str:
        calls["amapper"] += 1
        await asyncio.sleep(0.01 * n)
        return str(n) * 2

    @entrypoint(checkpointer=store)
    async def graph(numbers: list[int]) -> list[str]:
        mapped = await asyncio.gather(*(amapper(n) for n in numbers))
        answer = ag.interrupt("question")
        return [m + answer for m in mapped]

    async def scenario() -> tuple[list[Any], ag.RunResult[Any]]:
        items = [i async for i in graph.astream([0, 1], {"configurable": {"thread_id": "1"}})]
        return items, await graph.ainvoke(RESUME(resume="answer"), thread_id="1")

    with graph:
        items, done = asyncio.run(scenario())
    assert sorted(items[:2], key=str) == [{"amapper": "00"}, {"amapper": "11"}]
    assert [next(iter(item)) for item in items[2:]] == ["__interrupt__"]
    assert done.state == ["00answer", "11answer"]
    assert calls["amapper"] == 2


def test_imp_nested(store: Any) -> None:
    """Ports test_pregel.py::test_imp_nested: a task calls a task; the entrypoint then invokes a graph."""
    g: ag.Graph[Any] = ag.Graph(name="add_a", returns="state")
    g.add_vertex("mynode", lambda s: {"items": [it + "a" for it in s["items"]]})
    g.add_edge(ag.START, "mynode")
    g.add_edge("mynode", ag.END)

    @task
    def submapper(n: int) -> str:
        return str(n)

    @task
    def outer(n: int) -> str:
        sub = submapper(n)
        return sub.result() * 2

    with g.compile() as add_a:

        @entrypoint(checkpointer=store)
        def graph(numbers: list[int]) -> list[str]:
            mapped = [f.result() for f in [outer(n) for n in numbers]]
            answer = ag.interrupt("question")
            return add_a.invoke({"items": [m + answer for m in mapped]}).state["items"]

        with graph:
            items = [*graph.stream([0, 1], {"configurable": {"thread_id": "1"}})]
            # a task's own task calls are tasks of the entrypoint too, each before its caller's
            assert sorted(items[:4], key=str) == [
                {"outer": "00"},
                {"outer": "11"},
                {"submapper": "0"},
                {"submapper": "1"},
            ]
            assert items.index({"submapper": "0"}) < items.index({"outer": "00"})
            assert items.index({"submapper": "1"}) < items.index({"outer": "11"})
            assert [next(iter(item)) for item in items[4:]] == ["__interrupt__"]
            done = graph.invoke(RESUME(resume="answer"), thread_id="1")
    assert done.state == ["00answera", "11answera"]


@task
def foo(state: dict[str, Any]) -> tuple[str, str]:
    return state["a"] + "foo", "bar"


@task
def bar(a: str, b: str, c: str | None = None) -> dict[str, Any]:
    return {"a": a + b, "c": (c or "") + "bark"}


@task
def baz(state: dict[str, Any]) -> dict[str, Any]:
    return {"a": state["a"] + "baz", "c": "something else"}


def chained(state: dict[str, Any]) -> dict[str, Any]:
    """foo, then bar with foo's result spread, then baz (test_imp_stream_order's entrypoint)."""
    fut_bar = bar(*foo(state).result())
    return baz(fut_bar.result()).result()


def test_imp_stream_order(store: Any) -> None:
    """Ports test_pregel.py::test_imp_stream_order: tasks stream in call order, then the entrypoint."""
    graph = entrypoint(checkpointer=store, name="graph")(chained)
    thread1 = {"configurable": {"thread_id": "1"}}
    with graph:
        assert list(graph.stream({"a": "0"}, thread1)) == [
            {"foo": ("0foo", "bar")},
            {"bar": {"a": "0foobar", "c": "bark"}},
            {"baz": {"a": "0foobarbaz", "c": "something else"}},
            {"graph": {"a": "0foobarbaz", "c": "something else"}},
        ]
        assert graph.get_state("1").state == {"a": "0foobarbaz", "c": "something else"}


def test_imp_sync_from_async(store: Any) -> None:
    """Ports test_pregel_async.py::test_imp_sync_from_async: a sync entrypoint streamed with `astream`."""
    graph = entrypoint(checkpointer=store, name="graph")(chained)

    async def scenario() -> list[Any]:
        return [c async for c in graph.astream({"a": "0"}, {"configurable": {"thread_id": "1"}})]

    with graph:
        assert asyncio.run(scenario()) == [
            {"foo": ("0foo", "bar")},
            {"bar": {"a": "0foobar", "c": "bark"}},
            {"baz": {"a": "0foobarbaz", "c": "something else"}},
            {"graph": {"a": "0foobarbaz", "c": "something else"}},
        ]


def test_interrupt_functional(store: Any) -> None:
    """Ports test_pregel.py::test_interrupt_functional: the entrypoint asks while a future is pending."""

    @task
    def add_foo(state: dict[str, Any]) -> dict[str, Any]:
        calls["add_foo"] += 1
        return {"a": state["a"] + "foo"}

    @task
    def add_bar(state: dict[str, Any]) -> dict[str, Any]:
        return {"a": state["a"] + "bar", "b": state["b"]}

    @entrypoint(checkpointer=store)
    def graph(inputs: dict[str, Any]) -> dict[str, Any]:
        fut_foo = add_foo(inputs)
        value = ag.interrupt("Provide value for bar:")
        return add_bar({**fut_foo.result(), "b": value}).result()

    with graph:
        paused = graph.invoke({"a": ""}, thread_id="1")
        assert (paused.status, paused.state) == ("interrupted", None)
        assert [(i.vertex, i.value) for i in paused.interrupts] == [("graph", "Provide value for bar:")]
        assert graph.invoke(RESUME(resume="bar"), thread_id="1").state == {"a": "foobar", "b": "bar"}
    assert calls["add_foo"] == 1  # the call made before the question is recorded, not repeated


@task
def prefix_foo(state: dict[str, Any]) -> dict[str, Any]:
    return {"a": state["a"] + "foo"}


@task
def asks_suffix(state: dict[str, Any]) -> dict[str, Any]:
    calls["asks_suffix"] += 1
    return {"a": state["a"] + ag.interrupt("Provide value for bar:")}


def test_interrupt_task_functional(store: Any) -> None:
    """Ports test_pregel.py::test_interrupt_task_functional: a task asks; and one task asks twice in turn."""

    @entrypoint(checkpointer=store)
    def once(inputs: dict[str, Any]) -> dict[str, Any]:
        return asks_suffix(prefix_foo(inputs).result()).result()

    @entrypoint(checkpointer=store)
    def twice(inputs: dict[str, Any]) -> dict[str, Any]:
        first = asks_suffix(prefix_foo(inputs).result()).result()
        return asks_suffix(first).result()

    with once, twice:
        paused = once.invoke({"a": ""}, thread_id="1")
        assert [(i.vertex, i.value) for i in paused.interrupts] == [
            ("once/asks_suffix", "Provide value for bar:")
        ]
        assert once.invoke(RESUME(resume="bar"), thread_id="1").state == {"a": "foobar"}

        assert twice.invoke({"a": ""}, thread_id="2").status == "interrupted"
        again = twice.invoke(RESUME(resume="bar"), thread_id="2")
        assert [i.value for i in again.interrupts] == ["Provide value for bar:"]
        assert twice.invoke(RESUME(resume="baz"), thread_id="2").state == {"a": "foobarbaz"}


def test_falsy_return_from_task(store: Any) -> None:
    """Ports test_pregel.py::test_falsy_return_from_task: a recorded False is a result, not a missing one.

    LangGraph asserts the `debug` stream; its point, that the falsy result is
    reused on resume and the entrypoint ends with None, is asserted here.
    """

    @task
    def falsy_task() -> bool:
        calls["falsy"] += 1
        return False

    @entrypoint(checkpointer=store)
    def graph(state: dict[str, Any]) -> None:
        assert falsy_task().result() is False
        ag.interrupt("test")

    with graph:
        assert graph.invoke({"a": 5}, thread_id="f", durability="exit").status == "interrupted"
        done = graph.invoke(RESUME(resume="123"), thread_id="f", durability="exit")
    assert (done.status, done.state) == ("done", None)
    assert calls["falsy"] == 1


def test_multiple_interrupts_functional(store: Any) -> None:
    """Ports test_pregel.py::test_multiple_interrupts_functional: task, question, task, question..."""

    @entrypoint(checkpointer=store)
    def graph(state: dict[str, Any]) -> dict[str, Any]:
        values: list[Any] = []
        for idx in [1, 2, 3]:
            values.extend([double(idx).result(), ag.interrupt({"a": "boo"})])
        return {"values": values}

    with graph:
        graph.invoke({}, thread_id="m")
        graph.invoke(RESUME(resume="a"), thread_id="m")
        graph.invoke(RESUME(resume="b"), thread_id="m")
        result = graph.invoke(RESUME(resume="c"), thread_id="m")
    assert result.state == {"values": [2, "a", 4, "b", 6, "c"]}
    assert calls["double"] == 3


def test_multiple_interrupts_functional_cache(store: Any) -> None:
    """Ports test_pregel.py::test_multiple_interrupts_functional_cache: a cached task across threads.

    LangGraph's `double.clear_cache(cache)` is `cache.clear` of the task's
    namespace: a task's outcomes are kept in the entrypoint's cache under the
    task's one-vertex graph (`TaskFunction` has no `clear_cache` of its own).
    """
    cache = ag.MemoryCache()

    @task(cache=ag.CachePolicy())
    def cached_double(x: int) -> int:
        calls["cached_double"] += 1
        return 2 * x

    @entrypoint(checkpointer=store, cache=cache)
    def graph(state: dict[str, Any]) -> dict[str, Any]:
        values: list[Any] = []
        for idx in [1, 1, 2, 2, 3, 3]:
            values.extend([cached_double(idx).result(), ag.interrupt({"a": "boo"})])
        return {"values": values}

    def whole_thread(thread_id: str) -> Any:
        graph.invoke({}, thread_id=thread_id)
        for answer in "abcde":
            graph.invoke(RESUME(resume=answer), thread_id=thread_id)
        return graph.invoke(RESUME(resume="f"), thread_id=thread_id).state

    expected = {"values": [2, "a", 2, "b", 4, "c", 4, "d", 6, "e", 6, "f"]}
    with graph:
        assert whole_thread("c1") == expected
        assert calls["cached_double"] == 3
        assert whole_thread("c2") == expected  # all cached now
        assert calls["cached_double"] == 3
        cache.clear(["cached_double/cached_double"])  # the task graph's vertex, `graph/vertex`
        assert whole_thread("c3") == expected
        assert calls["cached_double"] == 6


def test_task_before_interrupt_resume(store: Any) -> None:
    """Ports test_pregel.py::test_task_before_interrupt_resume: inner tasks ask in turn."""

    @entrypoint(checkpointer=store)
    def workflow(number_of_topics: int) -> dict[str, Any]:
        @task
        def setup() -> int:
            return number_of_topics

        @task
        def ask_topic(question: str) -> Any:
            return ag.interrupt(question)

        n = setup().result()
        return {"answers": [ask_topic(f"Whats the answer for topic {i + 1}?").result() for i in range(n)]}

    with workflow:
        first = workflow.invoke(2, thread_id="1")
        assert [i.value for i in first.interrupts] == ["Whats the answer for topic 1?"]
        second = workflow.invoke(RESUME(resume="answer1"), thread_id="1")
        assert [i.value for i in second.interrupts] == ["Whats the answer for topic 2?"]
        done = workflow.invoke(RESUME(resume="answer2"), thread_id="1")
    assert done.state == {"answers": ["answer1", "answer2"]}


@pytest.mark.slow
def test_tasks_defined_inside_the_entrypoint_run_their_own_function() -> None:
    """Ports test_pregel.py::test_task_before_interrupt_resume: tasks defined in the entrypoint, run often.

    Every run defines two new tasks closing over its input; each call must run
    its own task's function. A run's tasks die when it returns (nothing else
    holds them), so a later run's tasks often take their ids. Slow: 300 runs,
    each compiling two task graphs (it once also collected garbage after each
    run, a full collection of the test process's heap: a minute in the fast subset).
    """

    @entrypoint()
    def workflow(k: int) -> list[Any]:
        @task
        def first() -> list[Any]:
            return ["first", k]

        @task
        def second() -> list[Any]:
            return ["second", k]

        return [list(first().result()), list(second().result())]

    with workflow:
        for k in range(300):
            assert workflow.invoke(k).state == [["first", k], ["second", k]]


def test_multiple_tasks_before_interrupt_resume(store: Any) -> None:
    """Ports test_pregel.py::test_multiple_tasks_before_interrupt_resume: two tasks, then one asks."""

    @task
    def step_a(x: int) -> int:
        return x + 1

    @task
    def step_b(x: int) -> int:
        return x * 2

    @entrypoint(checkpointer=store)
    def workflow(inputs: dict[str, int]) -> dict[str, Any]:
        b = step_b(step_a(inputs["x"]).result()).result()
        return {"computed": b, "answer": ask(f"Result so far is {b}. What next?").result()}

    with workflow:
        paused = workflow.invoke({"x": 5}, thread_id="1")
        assert [i.value for i in paused.interrupts] == ["Result so far is 12. What next?"]
        assert workflow.invoke(RESUME(resume="continue"), thread_id="1").state == {
            "computed": 12,
            "answer": "continue",
        }


@task
def setup(x: int) -> int:
    calls["setup"] += 1
    return x


def setup_then_ask(x: int) -> dict[str, Any]:
    """test_no_redundant_put_writes_for_cached_task's entrypoint: a task, then a task that asks."""
    n = setup(x).result()
    return {"answer": ask(f"q{n}").result()}


def test_no_redundant_put_writes_for_cached_task(store: Any) -> None:
    """Ports test_pregel.py::test_no_redundant_put_writes_for_cached_task: no call is recorded twice.

    LangGraph spies on its loop's `put_writes`; we count the checkpoints of the
    `setup` call's nested run, kept in the checkpointer as the thread
    `parent|namespace`: resuming adds none.
    """
    workflow = entrypoint(checkpointer=store, name="workflow")(setup_then_ask)
    with workflow:
        items = list(workflow.stream(1, thread_id="1", mode="tasks"))
        (namespace,) = {item["id"] for item in items if item["name"] == "setup"}  # the call's, as its run's
        before = len(store.history(f"1|{namespace}"))
        assert before >= 1
        assert workflow.invoke(RESUME(resume="ans"), thread_id="1").state == {"answer": "ans"}
        assert len(store.history(f"1|{namespace}")) == before
    assert calls["setup"] == 1


def test_no_redundant_put_writes_for_cached_task_by_namespace(store: Any) -> None:
    """Ports test_pregel.py::test_no_redundant_put_writes_for_cached_task, read through the entrypoint's API.

    The nested runs of task calls should be reachable as the subgraph runs of
    the entrypoint's thread are: named by `get_state(..., subgraphs=True)`,
    their history read by `get_history(..., namespace=...)`.
    """
    workflow = entrypoint(checkpointer=store, name="workflow")(setup_then_ask)
    with workflow:
        items = list(workflow.stream(1, thread_id="1", mode="tasks"))
        (namespace,) = {item["id"] for item in items if item["name"] == "setup"}
        assert namespace in workflow.get_state("1", subgraphs=True).subgraphs
        assert len(workflow.get_history("1", namespace=namespace)) >= 1


def test_handles_multiple_interrupts_from_tasks(store: Any) -> None:
    """Ports test_pregel_async.py::test_handles_multiple_interrupts_from_tasks: awaited tasks ask in turn."""

    @task
    async def add_participant(name: str) -> str:
        feedback = ag.interrupt(f"Hey do you want to add {name}?")
        if feedback is True:
            return f"Added {name}!"
        return f"The user changed their mind and doesn't want to add {name}!"

    @entrypoint(checkpointer=store)
    async def program(_state: Any) -> list[str]:
        return [await add_participant("James"), await add_participant("Will")]

    async def scenario() -> ag.RunResult[Any]:
        for name in ("James", "Will"):
            resume = "this is ignored" if name == "James" else RESUME(resume=True)
            paused = await program.ainvoke(resume, thread_id="1")
            assert [i.value for i in paused.interrupts] == [f"Hey do you want to add {name}?"]
            assert [i.value for i in program.get_state("1").interrupts] == [f"Hey do you want to add {name}?"]
        return await program.ainvoke(RESUME(resume=True), thread_id="1")

    with program:
        assert asyncio.run(scenario()).state == ["Added James!", "Added Will!"]


def test_interrupts_in_tasks_surfaced_once(store: Any) -> None:
    """Ports test_pregel_async.py::test_interrupts_in_tasks_surfaced_once: one `__interrupt__` per pause.

    Also in the `events` mode: one `Interrupted` event of the entrypoint's run.
    """

    @task
    async def add_participant(name: str) -> str:
        return f"Added {name}!" if ag.interrupt(f"add {name}?") is True else "no"

    @entrypoint(checkpointer=store)
    async def program(_state: Any) -> list[str]:
        return [await add_participant("James"), await add_participant("Will")]

    config = {"configurable": {"thread_id": "1"}}

    async def interrupted(given: Any) -> list[Any]:
        chunks = [c async for c in program.astream(given, config=config, stream_mode=["updates", "events"])]
        events = [e for mode, e in chunks if mode == "events" and isinstance(e, Interrupted)]
        return [e for mode, e in chunks if mode == "updates" and "__interrupt__" in e] + events

    async def scenario() -> ag.RunResult[Any]:
        for name, given in (("James", "this is ignored"), ("Will", RESUME(resume=True))):
            update, event = await interrupted(given)
            assert [i.value for i in update["__interrupt__"]] == [i.value for i in event.interrupts]
            assert [i.value for i in event.interrupts] == [f"add {name}?"]
            assert [i.value for i in program.get_state("1").interrupts] == [f"add {name}?"]
        return await program.ainvoke(RESUME(resume=True), thread_id="1")

    with program:
        assert asyncio.run(scenario()).state == ["Added James!", "Added Will!"]


def test_imp_exception(store: Any) -> None:
    """Ports test_pregel.py::test_imp_exception: a task's failure is caught; the run goes on."""

    @task
    def my_task(number: int) -> int:
        calls["my_task"] += 1
        return number * 2

    @task
    def task_with_exception(number: int) -> int:
        raise ValueError("This is a test exception")

    @entrypoint(checkpointer=store)
    def my_workflow(number: int) -> str:
        my_task(number).result()
        with pytest.raises(ag.VertexError, match="This is a test exception"):
            task_with_exception(number).result()
        my_task(number).result()
        return "done"

    thread1 = {"configurable": {"thread_id": "1"}}
    with my_workflow:
        assert my_workflow.invoke(1, thread1).state == "done"
        assert list(my_workflow.stream(1, thread1)) == [
            {"my_task": 2},
            {"my_task": 2},
            {"my_workflow": "done"},
        ]
    assert calls["my_task"] == 4  # a new run on the thread calls its tasks anew


# -- streaming ------------------------------------------------------------------------------------


def test_sync_streaming_with_functional_api() -> None:
    """Ports test_pregel.py::test_sync_streaming_with_functional_api: updates stream as tasks finish.

    LangGraph measures the time between the two updates; here the second call
    waits until the reader has the first update, so a buffered stream would
    never deliver it (the wait times out and the test fails).
    """
    seen_first = threading.Event()

    @task
    def slow(n: int) -> int:
        if n == 2:
            assert seen_first.wait(10), "the first update was not streamed before the second call"
        return n

    @entrypoint()
    def graph(_: Any) -> list[int]:
        return [slow(1).result(), slow(2).result()]

    got: list[Any] = []
    with graph:
        for chunk in graph.stream({}):
            if "slow" not in chunk:  # We'll just look at the updates from `slow`
                continue
            got.append(chunk["slow"])
            seen_first.set()
    assert got == [1, 2]


def test_async_streaming_with_functional_api() -> None:
    """Ports test_pregel_async.py::test_async_streaming_with_functional_api: `astream`, as the sync port."""
    seen_first = threading.Event()

    @task
    async def slow(n: int) -> int:
        if n == 2:
            assert await asyncio.to_thread(seen_first.wait, 10), "the first update was buffered"
        return n

    @entrypoint()
    async def graph(_: Any) -> list[int]:
        return [await slow(1), await slow(2)]

    async def scenario() -> list[int]:
        got = []
        async for chunk in graph.astream({}):
            if "slow" in chunk:
                got.append(chunk["slow"])
                seen_first.set()
        return got

    with graph:
        assert asyncio.run(scenario()) == [1, 2]


def test_named_tasks_functional() -> None:
    """Ports test_pregel.py::test_named_tasks_functional: `name=`, a method, a callable object."""

    class Foo:
        def foo(self, value: str) -> str:
            return value + "foo"

    f = Foo()
    custom_foo = task(f.foo, name="custom_foo")
    other_foo = task(f.foo, name="other_foo")

    @task(name="custom_bar")
    def bar_fn(value: str) -> str:
        return value + "|bar"

    def baz_fn(update: str, value: str) -> str:
        return value + f"|{update}"

    custom_baz = task(functools.partial(baz_fn, "custom_baz"), name="custom_baz")

    class Qux:
        def __call__(self, value: str) -> str:
            return value + "|qux"

    qux = task(Qux(), name="qux")

    @entrypoint()
    def workflow(inputs: str) -> str:
        foo_result = custom_foo(inputs).result()
        other_foo(inputs).result()
        return qux(custom_baz(bar_fn(foo_result).result()).result()).result()

    with workflow:
        assert list(workflow.stream("", stream_mode="updates")) == [
            {"custom_foo": "foo"},
            {"other_foo": "foo"},
            {"custom_bar": "foo|bar"},
            {"custom_baz": "foo|bar|custom_baz"},
            {"qux": "foo|bar|custom_baz|qux"},
            {"workflow": "foo|bar|custom_baz|qux"},
        ]


def test_named_tasks_functional_unnamed_partial() -> None:
    """Ports test_pregel.py::test_named_tasks_functional: an unnamed partial is named after its function."""

    def baz_fn(update: str, value: str) -> str:
        return value + f"|{update}"

    assert task(functools.partial(baz_fn, "baz")).name == "baz_fn"


# -- previous, final, threads ----------------------------------------------------------------------


def test_entrypoint_without_checkpointer() -> None:
    """Ports test_pregel.py::test_entrypoint_without_checkpointer: `previous` is always None."""

    @entrypoint()
    def echo(inputs: Any) -> Any:
        return inputs

    @entrypoint()
    def remembers(inputs: Any, *, previous: Any = None) -> Any:
        return {"previous": previous, "current": inputs}

    with echo, remembers:
        assert echo.invoke({"a": "1"}).state == {"a": "1"}
        assert remembers.invoke({"a": "1"}).state == {"current": {"a": "1"}, "previous": None}
        assert remembers.invoke({"a": "1"}).state == {"current": {"a": "1"}, "previous": None}


def test_async_entrypoint_without_checkpointer() -> None:
    """Ports test_pregel_async.py::test_async_entrypoint_without_checkpointer: the sync port, awaited."""

    @entrypoint()
    async def remembers(inputs: Any, *, previous: Any = None) -> Any:
        return {"previous": previous, "current": inputs}

    async def twice() -> list[Any]:
        return [(await remembers.ainvoke({"a": "1"})).state for _ in range(2)]

    with remembers:
        assert asyncio.run(twice()) == [{"current": {"a": "1"}, "previous": None}] * 2


def remembering(store: Any, seen: list[Any]) -> Entrypoint[Any]:
    """LangGraph's `foo` of its stateful tests: returns its input and `previous`, noting each `previous`."""

    def foo(inputs: Any, *, previous: Any = None) -> Any:
        seen.append(previous)
        return {"previous": previous, "current": inputs}

    return entrypoint(checkpointer=store)(foo)


def test_entrypoint_stateful(store: Any) -> None:
    """Ports test_pregel.py::test_entrypoint_stateful: each run gets the last one's return value."""
    seen: list[Any] = []
    chain = remembering(store, seen)

    with chain:
        one = {"current": {"a": "1"}, "previous": None}
        two = {"current": {"a": "2"}, "previous": one}
        assert chain.invoke({"a": "1"}, thread_id="1").state == one
        assert chain.invoke({"a": "2"}, thread_id="1").state == two
        assert chain.invoke({"a": "3"}, thread_id="1").state == {"current": {"a": "3"}, "previous": two}
        assert seen == [None, one, two]
        items = list(chain.stream({"a": "1"}, {"configurable": {"thread_id": "2"}}))
    assert items == [{"foo": {"current": {"a": "1"}, "previous": None}}]


def test_entrypoint_stateful_update_state(store: Any) -> None:
    """Ports test_pregel.py::test_entrypoint_stateful_update_state: a person sets what `previous` will be.

    `update_state` takes the thread's id where LangGraph's takes a config.
    """
    seen: list[Any] = []
    foo = remembering(store, seen)

    with foo:
        foo.update_state("1", {"a": "-1"})  # a thread with no run yet begins so
        assert foo.invoke({"a": "1"}, thread_id="1").state == {"current": {"a": "1"}, "previous": {"a": "-1"}}
        one = {"current": {"a": "1"}, "previous": {"a": "-1"}}
        assert foo.invoke({"a": "2"}, thread_id="1").state == {"current": {"a": "2"}, "previous": one}
        two = {"current": {"a": "2"}, "previous": one}
        assert foo.invoke({"a": "3"}, thread_id="1").state == {"current": {"a": "3"}, "previous": two}

        foo.update_state("1", {"a": "3"})

        assert list(foo.stream({"a": "1"}, {"configurable": {"thread_id": "1"}})) == [
            {"foo": {"current": {"a": "1"}, "previous": {"a": "3"}}}
        ]
    assert seen == [{"a": "-1"}, one, two, {"a": "3"}]


def test_entrypoint_with_return_and_save(store: Any) -> None:
    """Ports test_pregel.py::test_entrypoint_with_return_and_save: `final`: return one, save another."""
    seen: list[Any] = []

    @entrypoint(checkpointer=store)
    def foo_entry(msg: str, *, previous: Any = None) -> Any:
        seen.append(previous)
        kept = previous or []
        return entrypoint.final(value=len(kept), save=[*kept, msg])

    with foo_entry:
        assert [foo_entry.invoke(m, thread_id="1").state for m in ("hello", "goodbye", "definitely")] == [
            0,
            1,
            2,
        ]
    assert seen == [None, ["hello"], ["hello", "goodbye"]]


def test_entrypoint_cache_for_tasks_does_not_warn() -> None:
    """Ports test_pregel.py::test_multiple_interrupts_functional_cache: `cache=` is for tasks."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", ag.GraphValidationWarning)
        made = entrypoint(cache=ag.MemoryCache())(lambda inputs: inputs)
    made.close()


@pytest.mark.parametrize("kind", ["sync", "async"])
def test_entrypoint_from_generator(kind: str) -> None:
    """Ports test_pregel.py::test_entrypoint_from_sync_generator and the async one: a generator is refused."""

    def sync_gen(inputs: Any) -> Any:
        yield "a"

    async def async_gen(inputs: Any) -> Any:
        yield "a"

    fn = sync_gen if kind == "sync" else async_gen
    made: Any = None
    try:
        with pytest.raises(ag.ConfigError, match="generator"):
            made = entrypoint()(fn)
    finally:
        if made is not None:
            made.close()


# -- store and injected arguments ----------------------------------------------------------------


def test_overriding_injectable_args_with_tasks() -> None:
    """Ports test_pregel.py::test_overriding_injectable_args_with_tasks: a task's `store` parameter is plain.

    The entrypoint gets the `store=` it declares; a task's parameter named
    `store` is an ordinary argument, given what the caller passes (LangGraph
    has injection there too, which an explicit argument overrides).
    """
    memory = MemoryStore()

    @task
    def check(store: Any, value: Any) -> bool:
        return bool(store == value)

    @entrypoint(store=memory)
    def main(inputs: Any, store: Any = None) -> str:
        assert store is memory
        assert check(store=None, value=None).result()
        assert check(store="hello", value="hello").result()
        return "OK"

    with main:
        assert main.invoke({}).state == "OK"
    memory.close()


# -- graphs and entrypoints inside each other ------------------------------------------------------


@task
def multiply_task(a: int, b: int) -> int:
    return a * b


def add_and_multiply() -> tuple[Entrypoint[int], Entrypoint[int]]:
    """Two entrypoints over a pair (LangGraph's `add` and `multiply`), the second calling a task."""

    @entrypoint()
    def add(inputs: list[int]) -> int:
        return inputs[0] + inputs[1]

    @entrypoint()
    def multiply(inputs: list[int]) -> int:
        return multiply_task(*inputs).result()

    return add, multiply


def spread(called: Any) -> Any:
    """An entrypoint function calling the task `called` with its input list spread as arguments."""

    def parent(inputs: list[int]) -> Any:
        return called(*inputs).result()

    parent.__name__ = f"parent_{called.name}"
    return parent


def test_multiple_subgraphs_functional(store: Any) -> None:
    """Ports test_pregel.py::test_multiple_subgraphs_functional: entrypoints invoked in a task nest."""

    add, multiply = add_and_multiply()

    @task
    def call_same(a: int, b: int) -> int:
        return add.invoke([add.invoke([a, b]).state, 10]).state

    @task
    def call_both(a: int, b: int) -> list[int]:
        return [add.invoke([a, b]).state, multiply.invoke([a, b]).state]

    parent_same, parent_both = (entrypoint(checkpointer=store)(spread(t)) for t in (call_same, call_both))

    with add, multiply, parent_same, parent_both:
        assert parent_same.invoke([2, 3], thread_id="1").state == 15
        assert parent_both.invoke([2, 3], thread_id="2").state == [5, 6]


class Pair(TypedDict, total=False):
    a: int
    b: int
    result: int


class Result(TypedDict):
    result: int


def pair_graph(name: str, op: Any) -> ag.Graph[Any]:
    """A one-vertex graph over `a`, `b` whose output holds `result` only (LangGraph's `output_schema=`)."""
    g: ag.Graph[Any] = ag.Graph(name=name, state=Pair, output=Result, returns="update")
    g.add_vertex(name, lambda s: {"result": op(s["a"], s["b"])})
    g.add_edge(ag.START, name)
    g.add_edge(name, ag.END)
    return g


def test_multiple_subgraphs_mixed_entrypoint(store: Any) -> None:
    """Ports test_pregel.py::test_multiple_subgraphs_mixed_entrypoint: graphs invoked in a task."""

    add_g = pair_graph("add", lambda a, b: a + b)
    mul_g = pair_graph("multiply", lambda a, b: a * b)
    with add_g.compile() as add_sub, mul_g.compile() as mul_sub:

        @task
        def call_same(a: int, b: int) -> int:
            first = add_sub.invoke({"a": a, "b": b}).state["result"]
            return add_sub.invoke({"a": first, "b": 10}).state["result"]

        @task
        def call_both(a: int, b: int) -> list[int]:
            return [s.invoke({"a": a, "b": b}).state["result"] for s in (add_sub, mul_sub)]

        parent_same, parent_both = (entrypoint(checkpointer=store)(spread(t)) for t in (call_same, call_both))

        with parent_same, parent_both:
            assert parent_same.invoke([2, 3], thread_id="1").state == 15
            assert parent_both.invoke([2, 3], thread_id="2").state == [5, 6]


def test_multiple_subgraphs_mixed_state_graph(store: Any) -> None:
    """Ports test_pregel.py::test_multiple_subgraphs_mixed_state_graph: entrypoints invoked in a vertex."""

    class State(TypedDict, total=False):
        a: int
        b: int
        result: int
        add_result: int
        multiply_result: int

    add, multiply = add_and_multiply()

    def call_same(s: dict[str, Any]) -> dict[str, Any]:
        return {"result": add.invoke([add.invoke([s["a"], s["b"]]).state, 10]).state}

    def call_both(s: dict[str, Any]) -> dict[str, Any]:
        pair = [s["a"], s["b"]]
        return {"add_result": add.invoke(pair).state, "multiply_result": multiply.invoke(pair).state}

    def one_vertex(fn: Any) -> ag.Graph[Any]:
        g: ag.Graph[Any] = ag.Graph(name=fn.__name__, state=State, returns="update")
        g.add_vertex(fn.__name__, fn)
        g.add_edge(ag.START, fn.__name__)
        g.add_edge(fn.__name__, ag.END)
        return g

    with add, multiply:
        with one_vertex(call_same).compile(store) as same:
            assert same.invoke({"a": 2, "b": 3}, thread_id="1").state["result"] == 15
        with one_vertex(call_both).compile(store) as both:
            state = both.invoke({"a": 2, "b": 3}, thread_id="2").state
    assert (state["add_result"], state["multiply_result"]) == (5, 6)


# -- retries, timeouts ---------------------------------------------------------------------------


def test_task_retry_arg(store: Any) -> None:
    """Ports test_deprecation.py::test_task_retry_arg: `@task(retry=...)` retries the call."""
    attempts: Counter[str] = Counter()

    @task(retry=ag.RetryPolicy(max_attempts=3, initial_interval=0))
    def flaky(x: int) -> int:
        attempts["flaky"] += 1
        if attempts["flaky"] < 3:
            raise ConnectionError("down")
        return x

    @entrypoint(checkpointer=store)
    def flow(n: int) -> int:
        return double(n).result() + flaky(n).result()

    with flow:
        assert flow.invoke(4, thread_id="r").state == 12
    assert (attempts["flaky"], calls["double"]) == (3, 1)


def test_entrypoint_retry_arg(store: Any) -> None:
    """Ports test_deprecation.py::test_entrypoint_retry_arg: `@entrypoint(retry=...)` reruns the function.

    A retried entrypoint runs from the top; its finished task calls return
    their recorded results, so `double` runs once.
    """
    attempts: Counter[str] = Counter()

    @entrypoint(checkpointer=store, retry=ag.RetryPolicy(max_attempts=2, initial_interval=0))
    def flow(n: int) -> int:
        got = double(n).result()
        attempts["flow"] += 1
        if attempts["flow"] == 1:
            raise ConnectionError("down")
        return got

    with flow:
        assert flow.invoke(4, thread_id="r").state == 8
    assert (attempts["flow"], calls["double"]) == (2, 1)


def test_task_decorator_timeout_e2e() -> None:
    """Ports test_retry.py::test_task_decorator_timeout_e2e: a task over `timeout=` fails the run."""
    release = threading.Event()

    @task(timeout=0.05)
    async def slow_task(x: int) -> int:
        await asyncio.to_thread(release.wait, 5)
        return x + 1

    @entrypoint()
    async def workflow(x: int) -> int:
        return await slow_task(x)

    with workflow:
        with pytest.raises(ag.VertexError, match="slow_task"):
            asyncio.run(workflow.ainvoke(1))
        release.set()


# -- values through the record ---------------------------------------------------------------------


class FunctionalState(BaseModel):
    a: str
    b: str | None = None


def test_interrupt_functional_pydantic(store_factory: Any) -> None:
    """Ports test_pydantic.py::test_interrupt_functional_pydantic: pydantic models in and out of tasks.

    Our serializer stores only the classes it is told to allow (LangGraph's
    stores any pydantic model): the checkpointer allows `FunctionalState`.
    """
    store = store_factory(serializer=MsgpackSerializer(allowed=[FunctionalState]))

    @task
    def add_foo(state: FunctionalState) -> FunctionalState:
        calls["add_foo"] += 1
        return FunctionalState(a=state.a + "foo")

    @task
    def add_bar(state: FunctionalState) -> dict[str, Any]:
        return {"a": state.a + "bar", "b": state.b}

    @entrypoint(checkpointer=store)
    def graph(inputs: FunctionalState) -> dict[str, Any]:
        fut_foo = add_foo(inputs)
        value = ag.interrupt("Provide value for bar:")
        foo_res = fut_foo.result()
        assert isinstance(foo_res, FunctionalState)
        return add_bar(FunctionalState(a=foo_res.a, b=value)).result()

    with graph:
        paused = graph.invoke(FunctionalState(a=""), thread_id="1")
        assert [i.value for i in paused.interrupts] == ["Provide value for bar:"]
        assert graph.invoke(RESUME(resume="bar"), thread_id="1").state == {"a": "foobar", "b": "bar"}
    assert calls["add_foo"] == 1
