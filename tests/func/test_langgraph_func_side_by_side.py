"""One functional-API program run on LangGraph and on actorgraph, every stream mode compared item by item.

The program is written once against either library (`Lib`): a task call, a
question in the entrypoint, a question in a task, `entrypoint.final` and
`previous`, over a thread of several runs. It runs in LangGraph when it is
installed (the `bench` extra), and ours must stream what LangGraph streams, and
show the thread's state (`get_state`, `get_history`) as LangGraph's `values`.

Ours runs with `live_interrupts=None` here, LangGraph's model: an answer runs
the function again from its first line. What differs on purpose is removed from
LangGraph's items by `as_ours`, each case said there (and in the table of
differences of `docs/how-to/from-langgraph.md`): ids, timestamps, superstep
numbers and configs are each library's own; a task result is the value, not
LangGraph's `{"__return__": value}` write; a `values` stream that resumes a
thread does not first repeat the thread's value; a resumed function's recorded
task calls are not listed again in `tasks`; and in a stream of several modes, a
pause's `__interrupt__` item comes after its task's `tasks` result, not before.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

import actorgraph as ag
from actorgraph.checkpoint import MemoryCheckpointer
from actorgraph.func import entrypoint, task

pytestmark = pytest.mark.threads_only("the programs run in this process, LangGraph's beside ours")

pytest.importorskip("langgraph", reason="LangGraph runs beside us: pip install -e '.[bench]'")

from langgraph.checkpoint.memory import InMemorySaver  # noqa: E402 - after the skip
from langgraph.config import get_stream_writer as lg_writer  # noqa: E402
from langgraph.func import entrypoint as lg_entrypoint  # noqa: E402
from langgraph.func import task as lg_task  # noqa: E402
from langgraph.types import Command as LgCommand  # noqa: E402
from langgraph.types import Interrupt as LgInterrupt  # noqa: E402
from langgraph.types import interrupt as lg_interrupt  # noqa: E402


@dataclass(frozen=True)
class Lib:
    """What the program needs of a library."""

    ours: bool
    entrypoint: Any
    task: Any
    interrupt: Callable[[Any], Any]
    command: Any
    writer: Callable[[], Any]


LANGGRAPH = Lib(False, lg_entrypoint, lg_task, lg_interrupt, LgCommand, lg_writer)
OURS = Lib(True, entrypoint, task, ag.interrupt, ag.Command, ag.get_stream_writer)


def program(lib: Lib) -> Any:
    """A task call, then a question in the function over 10, then one in a task over 20."""

    @lib.task
    def double(x: int) -> int:
        return 2 * x

    @lib.task
    def ask(question: str) -> Any:
        return lib.interrupt(question)

    def main(x: int, *, previous: Any = None) -> Any:
        lib.writer()({"x": x})
        doubled = double(x).result()
        answer = lib.interrupt({"check": doubled}) if x > 10 else "-"
        asked = ask("and?").result() if x > 20 else "-"
        return lib.entrypoint.final(value=[doubled, answer, asked, previous], save=doubled)

    if lib.ours:
        return entrypoint(checkpointer=MemoryCheckpointer(), live_interrupts=None)(main)
    return lg_entrypoint(checkpointer=InMemorySaver())(main)


RESUME = "answer"
CASES: dict[str, list[Any]] = {
    "done": [5],
    "asks in the function": [15, RESUME],
    "asks in the function, then in a task": [25, RESUME, RESUME],
    "previous over runs": [5, 15, RESUME, 7],
}
MODES: list[Any] = [
    "values",
    "updates",
    "custom",
    "tasks",
    "checkpoints",
    "debug",
    ["values", "updates"],
    ["custom", "updates", "tasks"],
]
_OWN = ("id", "timestamp", "step", "config", "parent_config", "metadata", "triggers", "cached")


def plain(item: Any) -> Any:
    """An item without what each library has its own of: ids, times, configs; a question as its value."""
    if isinstance(item, LgInterrupt | ag.Interrupt):
        return ("question", plain(item.value))
    if isinstance(item, dict):
        if "value" in item and set(item) <= {"id", "value", "response_schema"}:  # a question, as a dict
            return ("question", plain(item["value"]))
        return {k: _field(k, v) for k, v in item.items() if k not in _OWN}
    if isinstance(item, list | tuple):
        return type(item)(plain(i) for i in item)
    return item


def _field(key: str, value: Any) -> Any:
    """A task's result: LangGraph's write `{"__return__": v}` / `{"__end__": v}` is the value (`{}`: None).

    Questions are a list (a tuple in some of LangGraph's items and ours).
    """
    if key == "result" and isinstance(value, dict) and set(value) <= {"__return__", "__end__"}:
        return plain(next(iter(value.values()), None))
    if key == "interrupts":
        return [plain(question) for question in value]
    return plain(value)


def streamed(lib: Lib, modes: Any, inputs: list[Any], **options: Any) -> tuple[list[list[Any]], Any, Any]:
    """Each run's items, then the thread's state and the states of its history, newest first."""
    graph = program(lib)
    config = {"configurable": {"thread_id": "t"}}
    runs = []
    for given in inputs:
        value = lib.command(resume="yes") if given == RESUME else given
        runs.append([plain(i) for i in graph.stream(value, config, stream_mode=modes, **options)])
    if not lib.ours:
        return runs, graph.get_state(config).values, [s.values for s in graph.get_state_history(config)]
    with graph:
        return runs, graph.get_state("t").state, [s.state for s in graph.get_history("t")]


def as_ours(runs: list[list[Any]], inputs: list[Any], modes: Any) -> list[list[Any]]:
    """LangGraph's items without what we do differently on purpose (see the module's docstring)."""
    out: list[list[Any]] = []
    finished: set[str] = set()  # the tasks with a result in an earlier run of the thread
    for given, items in zip(inputs, runs, strict=True):
        kept = list(items)
        if given == RESUME and "values" in modes:  # a resumed stream first repeats the thread's value
            del kept[next(i for i, item in enumerate(kept) if _mode_of(item, modes) == "values")]
        payloads = [_task_item(item, modes) for item in kept]
        results = {p["name"] for p in payloads if "result" in p}
        # a call recorded in an earlier run is listed again when the function runs again, without a result
        kept = [
            item
            for item, p in zip(kept, payloads, strict=True)
            if not ("input" in p and p["name"] in finished - results)
        ]
        finished |= {p["name"] for p in payloads if p.get("result") is not None and p["name"] != "main"}
        out.append(kept)
    return out


def by_mode(runs: list[list[Any]], modes: Any) -> list[dict[str, list[Any]]]:
    """Each run's items of each mode, in order (the order between modes aside)."""
    return [{m: [i for i in items if _mode_of(i, modes) == m] for m in modes} for items in runs]


def _mode_of(item: Any, modes: Any) -> str:
    return modes if isinstance(modes, str) else str(item[0])


def _task_item(item: Any, modes: Any) -> dict[str, Any]:
    """The `tasks` payload an item holds (a `debug` item's too), or {}."""
    mode = _mode_of(item, modes)
    payload = item if isinstance(modes, str) else item[1]
    if mode == "tasks":
        return payload  # type: ignore[no-any-return]
    if mode == "debug" and payload["type"] in ("task", "task_result"):
        return payload["payload"]  # type: ignore[no-any-return]
    return {}


@pytest.mark.parametrize("modes", MODES, ids=str)
@pytest.mark.parametrize("case", sorted(CASES))
def test_every_stream_mode_shows_what_langgraph_s_shows(modes: Any, case: str) -> None:
    inputs = CASES[case]
    theirs, their_state, their_history = streamed(LANGGRAPH, modes, inputs)
    ours, our_state, our_history = streamed(OURS, modes, inputs)
    assert by_mode(ours, modes) == by_mode(as_ours(theirs, inputs, modes), modes)
    if "tasks" not in modes or isinstance(modes, str):  # else LangGraph's pause precedes its task's result
        assert ours == as_ours(theirs, inputs, modes)
    assert our_state == their_state
    assert our_history == their_history


@pytest.mark.parametrize("case", sorted(CASES))
def test_with_subgraphs_a_task_call_is_the_entrypoint_s_own_item(case: str) -> None:
    """`subgraphs=True`: a task call streams under `()`, as the entrypoint's own task, in both."""
    inputs = CASES[case]
    theirs = streamed(LANGGRAPH, ["updates", "custom"], inputs, subgraphs=True)[0]
    ours = streamed(OURS, ["updates", "custom"], inputs, subgraphs=True)[0]
    assert ours == theirs


def test_astream_shows_what_stream_shows() -> None:
    inputs = CASES["asks in the function, then in a task"]

    async def scenario(lib: Lib) -> list[list[Any]]:
        graph = program(lib)
        config = {"configurable": {"thread_id": "t"}}
        runs = []
        for given in inputs:
            value = lib.command(resume="yes") if given == RESUME else given
            runs.append([plain(i) async for i in graph.astream(value, config, stream_mode="updates")])
        if lib.ours:
            graph.close()
        return runs

    assert asyncio.run(scenario(OURS)) == asyncio.run(scenario(LANGGRAPH))
