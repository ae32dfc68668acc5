"""One attempt of one task: every outcome is a value."""

from __future__ import annotations

import contextlib
from typing import Any

import actorgraph as ag
from actorgraph._build.validate import build_spec
from actorgraph._engine.task import TaskEnv, run_attempt
from actorgraph._model.records import Message, Node, Task

ENV = TaskEnv(node_prefix="t/", thread_id="th", line="origin")


def one_vertex(fn: Any, **kwargs: Any) -> ag.Graph:
    g: ag.Graph = ag.Graph()
    g.add_vertex("v", fn, **kwargs)
    g.add_vertex("w", lambda s: s)
    g.add_edge(ag.START, "v")
    g.add_edge("v", ag.END)
    g.add_edge("w", ag.END)
    g.add_conditional_edges("v", lambda s: [], ["w"])  # makes "w" a legal goto target
    return g


def attempt(graph: ag.Graph, state: Any, *, resumes: tuple[Any, ...] = ()) -> ag.VertexResult:
    spec = build_spec(graph)
    task = Task("v", "v", 1, (Message("v", Node("in", state), ag.START),), resumes=resumes)
    return run_attempt(spec, task, 1, ENV)


def test_ok_result_carries_the_new_state_and_outbox() -> None:
    result = attempt(one_vertex(lambda s: {"n": s["n"] + 1}), {"n": 1})
    assert result.status == "ok" and result.state == {"n": 2}
    assert [m.target for m in result.outbox] == [ag.END]
    assert result.outbox[0].node.parents[0].id == "in"


def test_none_forwards_the_input_unchanged() -> None:
    result = attempt(one_vertex(lambda s: None), {"n": 1})
    assert result.state == {"n": 1}
    assert result.outbox[0].node.id == "in"


def test_the_vertex_gets_a_private_copy_of_its_input() -> None:
    original = {"items": [1]}

    def mutate(state: dict[str, Any]) -> dict[str, Any]:
        state["items"].append(2)
        return state

    result = attempt(one_vertex(mutate), original)
    assert result.state == {"items": [1, 2]}
    assert original == {"items": [1]}


def test_an_exception_becomes_an_error_value_with_its_traceback() -> None:
    def boom(state: Any) -> Any:
        raise ConnectionError("down")

    result = attempt(one_vertex(boom), {})
    assert result.status == "error" and result.error is not None
    assert result.error.type == "builtins.ConnectionError"
    assert "down" in result.error.message and "boom" in result.error.traceback
    assert result.error.retryable and result.outbox == ()


def test_command_updates_the_input_and_routes_with_goto() -> None:
    result = attempt(
        one_vertex(lambda s: ag.Command(update={"b": 2}, goto="w"), destinations=["w"]), {"a": 1}
    )
    assert result.state == {"a": 1, "b": 2}
    assert [m.target for m in result.outbox] == [ag.END, "w"]


def test_goto_outside_destinations_is_a_routing_error_that_is_not_retried() -> None:
    result = attempt(one_vertex(lambda s: ag.Command(goto="w"), destinations=[ag.END]), {})
    assert result.status == "error" and result.error is not None
    assert result.error.type.endswith("RoutingError") and not result.error.retryable
    assert "destinations" in result.error.message


def test_returning_a_send_is_an_error_that_says_what_to_do() -> None:
    result = attempt(one_vertex(lambda s: ag.Send("w", s)), {})
    assert result.error is not None and "router" in result.error.message


def test_interrupt_is_an_outcome_with_a_deterministic_id() -> None:
    def ask(state: Any) -> Any:
        return {"answer": ag.interrupt("ok?")}

    first = attempt(one_vertex(ask), {})
    again = attempt(one_vertex(ask), {})
    assert first.status == "interrupt" and first.interrupt is not None
    assert first.interrupt.value == "ok?" and first.interrupt.vertex == "v"
    assert first.interrupt.id == again.interrupt.id  # type: ignore[union-attr]
    answered = attempt(one_vertex(ask), {}, resumes=("yes",))
    assert answered.status == "ok" and answered.state == {"answer": "yes"}


def test_an_interrupt_swallowed_by_the_vertex_still_pauses() -> None:
    def swallow(state: Any) -> Any:
        with contextlib.suppress(BaseException):
            ag.interrupt("?")
        return state

    assert attempt(one_vertex(swallow), {}).status == "interrupt"


def test_ctx_is_passed_when_the_function_takes_two_arguments() -> None:
    def with_ctx(state: Any, ctx: ag.Context[Any]) -> Any:
        ctx.value = (ctx.vertex, ctx.step, ctx.attempt, ctx.thread_id)
        return state

    result = attempt(one_vertex(with_ctx), {})
    assert result.value == ("v", 1, 1, "th")
