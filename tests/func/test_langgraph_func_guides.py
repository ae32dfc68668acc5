"""LangGraph's functional-API guides rewritten for actorgraph: custom stream data and injected parameters.

The code is the guides' with the imports changed. What an entrypoint's own
`updates` item holds differs (issue 37, item 7, later), so these tests read the
`custom` items, which are LangGraph's exactly.
"""

from __future__ import annotations

import asyncio
from typing import Any

from actorgraph import StreamWriter, get_stream_writer
from actorgraph.checkpoint import MemoryCheckpointer
from actorgraph.func import entrypoint, task


def test_an_entrypoint_is_given_a_writer_as_langgraph_injects_it() -> None:
    checkpointer = MemoryCheckpointer()

    @entrypoint(checkpointer=checkpointer)
    def main(inputs: dict[str, Any], writer: StreamWriter) -> int:
        writer("Started processing")
        result = inputs["x"] * 2
        writer(f"Result is {result}")
        return result

    config = {"configurable": {"thread_id": "abc"}}
    with main:
        chunks = list(main.stream({"x": 5}, stream_mode=["custom", "updates"], config=config))
        assert [chunk for mode, chunk in chunks if mode == "custom"] == ["Started processing", "Result is 10"]
        assert main.invoke({"x": 6}, {"configurable": {"thread_id": "def"}}).state == 12


@task
def call_tool(x: int) -> int:
    writer = get_stream_writer()
    writer({"progress": f"working on {x}"})
    return x + 1


def test_a_task_s_get_stream_writer_streams_as_the_entrypoint_s() -> None:
    @entrypoint(checkpointer=MemoryCheckpointer())
    def workflow(numbers: list[int]) -> list[int]:
        get_stream_writer()({"progress": "started"})
        return [future.result() for future in [call_tool(n) for n in numbers]]

    with workflow:
        custom = list(workflow.stream([1], {"configurable": {"thread_id": "1"}}, stream_mode="custom"))
        assert custom == [{"progress": "started"}, {"progress": "working on 1"}]
        tagged = list(workflow.stream([2], thread_id="2", mode="custom", subgraphs=True))
        assert tagged == [((), {"progress": "started"}), ((), {"progress": "working on 2"})]


def test_an_entrypoint_is_given_its_context_and_config() -> None:
    @entrypoint(checkpointer=MemoryCheckpointer())
    def greet(name: str, *, context: dict[str, str], config: dict[str, Any]) -> str:
        return f"{context['greeting']}, {name} (thread {config['configurable']['thread_id']})"

    with greet:
        given = greet.invoke("Ada", thread_id="t", context={"greeting": "Hello"})
    assert given.state == "Hello, Ada (thread t)"


def test_the_async_stream_of_an_entrypoint_takes_langgraph_s_spellings() -> None:
    @entrypoint(checkpointer=MemoryCheckpointer())
    async def main(x: int, writer: StreamWriter) -> int:
        writer("async")
        return x

    async def streamed() -> list[Any]:
        return [c async for c in main.astream(1, {"configurable": {"thread_id": "a"}}, stream_mode="custom")]

    with main:
        assert asyncio.run(streamed()) == ["async"]
