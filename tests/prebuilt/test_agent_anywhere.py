"""The agent on every backend: a model and tools that are pure functions travel to Ray workers too."""

from __future__ import annotations

from typing import Any

from actorgraph.checkpoint import MemoryCheckpointer
from actorgraph.messages import content_of, role_of
from actorgraph.prebuilt import create_react_agent


def add(a: int, b: int) -> int:
    """Add two whole numbers."""
    return a + b


def double(x: int) -> int:
    """Double a number."""
    return 2 * x


def model(messages: list[Any]) -> dict[str, Any]:
    """Ask for both tools after each question; answer with their results."""
    if role_of(messages[-1]) == "user":
        calls = [
            {"id": f"a{len(messages)}", "name": "add", "args": {"a": 20, "b": 1}},
            {"id": f"d{len(messages)}", "name": "double", "args": {"x": 21}},
        ]
        return {"role": "assistant", "content": "", "tool_calls": calls}
    results = [content_of(m) for m in messages if role_of(m) == "tool"][-2:]
    return {"role": "assistant", "content": " and ".join(results)}


def test_two_turns_on_a_thread_with_parallel_tool_calls() -> None:
    with create_react_agent(model, [add, double], checkpointer=MemoryCheckpointer()) as agent:
        first = agent.invoke({"messages": ["go"]}, thread_id="t")
        assert content_of(first.state["messages"][-1]) == "21 and 42"
        second = agent.invoke({"messages": ["again"]}, thread_id="t")
    messages = second.state["messages"]
    assert [role_of(m) for m in messages] == ["user", "assistant", "tool", "tool", "assistant"] * 2
    assert [m["tool_call_id"] for m in messages if role_of(m) == "tool"] == ["a1", "d1", "a6", "d6"]


def test_tokens_stream_from_a_streaming_model_object() -> None:
    class Streamer:
        def stream(self, messages: list[Any]) -> Any:  # noqa: ARG002 - the model interface
            yield from ("all ", "done")

    with create_react_agent(Streamer(), [add]) as agent:
        items = list(agent.stream({"messages": ["hi"]}, mode=["messages", "values"]))
    tokens = [chunk["content"] for mode, (chunk, _) in ((m, i) for m, i in items if m == "messages")]
    assert tokens == ["all ", "done"]
    assert items[-1][1]["messages"][-1]["content"] == "all done"
