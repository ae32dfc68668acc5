"""A random entrypoint resumed at every pause, ends as if never stopped."""

from __future__ import annotations

import itertools
from collections import Counter
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import actorgraph as ag
from actorgraph.checkpoint import MemoryCheckpointer
from actorgraph.func import Entrypoint, entrypoint, task

pytestmark = [
    pytest.mark.slow,  # many runs per example
    pytest.mark.threads_only("the ledger of task bodies lives in this process"),
]

KINDS = st.sampled_from(["plain", "ask", "fail"])
PLANS = st.lists(
    st.lists(st.tuples(KINDS, st.integers(0, 9)), min_size=1, max_size=3), min_size=1, max_size=3
)

_examples = itertools.count()
finished: Counter[tuple[int, int, int]] = Counter()  # (example, group, call) -> bodies that returned
failed: set[tuple[int, int, int]] = set()


def _answer(group: int, call: int) -> int:
    return 7 * group + call


@task
def work(example: int, group: int, call: int, kind: str, k: int, acc: int) -> int:  # noqa: PLR0913, PLR0917
    value = k + acc % 5
    if kind == "ask":
        value += ag.interrupt({"group": group, "call": call})
    if kind == "fail" and (example, group, call) not in failed:
        failed.add((example, group, call))
        raise ConnectionError("fails once")
    finished[example, group, call] += 1
    return value


def _expected(plan: list[list[tuple[str, int]]]) -> int:
    acc = 1
    for g, group in enumerate(plan):
        values = [k + acc % 5 + (_answer(g, j) if kind == "ask" else 0) for j, (kind, k) in enumerate(group)]
        acc += sum(values)
    return acc


def _flow(plan: list[list[tuple[str, int]]], example: int, checkpointer: Any) -> Entrypoint[int]:
    @entrypoint(checkpointer=checkpointer, name="random")
    def flow(start: int) -> int:
        acc = start
        for g, group in enumerate(plan):
            futures = [work(example, g, j, kind, k, acc) for j, (kind, k) in enumerate(group)]
            acc += sum(f.result() for f in futures)
        return acc

    return flow


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(plan=PLANS, fresh=st.booleans())
def test_a_random_entrypoint_resumed_at_every_pause_ends_as_the_uninterrupted_run(
    plan: list[list[tuple[str, int]]], fresh: bool
) -> None:
    example = next(_examples)
    checkpointer = MemoryCheckpointer()
    flow = _flow(plan, example, checkpointer)
    given_input: Any = 1
    try:
        for _ in range(40):
            try:
                result = flow.invoke(given_input, thread_id="random")
            except ag.VertexError:
                given_input = None  # a task failed: resume the run
            else:
                if result.status == "done":
                    break
                answers = {i.id: _answer(i.value["group"], i.value["call"]) for i in result.interrupts}
                given_input = ag.Command(resume=answers)
            if fresh:  # the next step in a new entrypoint object, as another process would
                flow.close()
                flow = _flow(plan, example, checkpointer)
        else:
            pytest.fail("the run never finished")
    finally:
        flow.close()
    assert result.state == _expected(plan)
    calls = {(example, g, j) for g, group in enumerate(plan) for j in range(len(group))}
    assert {k: v for k, v in finished.items() if k[0] == example} == dict.fromkeys(calls, 1)  # each body once
