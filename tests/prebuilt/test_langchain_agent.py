"""The prebuilt agent with langchain-core parts: chat models, `@tool` tools, message objects, chunks."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("langchain_core")

from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel, GenericFakeChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, HumanMessage
from langchain_core.outputs import ChatGenerationChunk
from langchain_core.tools import tool
from pydantic import Field

from actorgraph import END, START, Graph, RetryPolicy
from actorgraph.checkpoint import SqliteCheckpointer
from actorgraph.messages import MessagesState
from actorgraph.prebuilt import ToolNode, create_react_agent

pytestmark = pytest.mark.threads_only(
    "the langchain fake models keep their script in this process's memory (a lock cannot be pickled)"
)

Compile = Any


@tool
def add(a: int, b: int) -> int:
    """Add two whole numbers."""
    return a + b


def double(a: int) -> int:
    """Double a whole number."""
    return 2 * a


class ToolCallingModel(FakeMessagesListChatModel):
    """langchain-core's fake chat model with `bind_tools` (it remembers what it was bound to)."""

    bound: list[Any] = Field(default_factory=list)
    seen: list[list[Any]] = Field(default_factory=list)

    def bind_tools(self, tools: list[Any], **kwargs: Any) -> ToolCallingModel:  # noqa: ARG002 - langchain's
        self.bound = list(tools)
        return self

    def _generate(self, messages: list[Any], *args: Any, **kwargs: Any) -> Any:
        self.seen.append(list(messages))
        return super()._generate(messages, *args, **kwargs)


def asks(*calls: tuple[str, dict[str, Any], str]) -> AIMessage:
    return AIMessage("", tool_calls=[{"name": n, "args": a, "id": i} for n, a, i in calls])


def test_a_langchain_chat_model_drives_the_agent_and_the_thread_is_read_back_from_sqlite(
    tmp_path: Path,
) -> None:
    model = ToolCallingModel(
        responses=[
            asks(("add", {"a": 1, "b": 2}, "c1"), ("double", {"a": 4}, "c2")),
            AIMessage("3 and 8"),
            AIMessage("you are welcome"),
        ]
    )
    path = str(tmp_path / "chat.db")
    checkpointer = SqliteCheckpointer(path)
    with create_react_agent(model, [add, double], checkpointer=checkpointer) as agent:
        result = agent.invoke({"messages": [HumanMessage("1 + 2, and 4 doubled?")]}, thread_id="chat")
    checkpointer.close()
    messages = result.state["messages"]
    # one kind per conversation: the tool messages added to langchain-core messages are objects too
    assert [type(m).__name__ for m in messages] == [
        "HumanMessage",
        "AIMessage",
        "ToolMessage",
        "ToolMessage",
        "AIMessage",
    ]
    assert [(m.type, m.content, m.tool_call_id, m.name) for m in messages[2:4]] == [
        ("tool", "3", "c1", "add"),
        ("tool", "8", "c2", "double"),
    ]
    assert messages[1].tool_calls[1]["args"] == {"a": 4}
    # bind_tools got the langchain tool as it is, and the function as its spec
    assert model.bound[0] is add
    assert model.bound[1]["name"] == "double"
    assert model.bound[1]["parameters"]["properties"] == {"a": {"type": "integer"}}
    # the model was given the tool messages of the first round
    assert [getattr(m, "type", None) or m["role"] for m in model.seen[1]] == ["human", "ai", "tool", "tool"]

    reopened = SqliteCheckpointer(path)
    with create_react_agent(model, [add, double], checkpointer=reopened) as again:
        saved = again.get_state("chat").state["messages"]
        assert saved == messages
        assert isinstance(saved[0], HumanMessage) and isinstance(saved[4], AIMessage)
        more = again.invoke({"messages": [HumanMessage("thanks")]}, thread_id="chat").state["messages"]
    reopened.close()
    assert [m.content for m in more[5:]] == ["thanks", "you are welcome"]
    assert len({m.id for m in more}) == 7


def test_a_langchain_tool_in_a_tool_node_and_its_arguments_checked_once(compile_graph: Compile) -> None:
    runs: list[int] = []

    @tool
    def flaky(n: int) -> str:
        """Fail once, then answer."""
        runs.append(n)
        if len(runs) == 1:
            raise ConnectionError("down")
        return f"got {n}"

    retry = RetryPolicy(max_attempts=3, initial_interval=0, jitter=False, retry_on=Exception)
    g: Graph[Any] = Graph(state=MessagesState)
    g.add_vertex("tools", ToolNode([add, flaky]), retry=retry)
    g.add_edge(START, "tools")
    g.add_edge("tools", END)
    app = compile_graph(g)
    calls = [("add", {"a": 2, "b": 5}, "a1"), ("flaky", {"n": 3}, "f1"), ("flaky", {"n": "three"}, "f2")]
    messages = app.invoke({"messages": [asks(*calls)]}).state["messages"]
    assert [m.content for m in messages[1:3]] == ["7", "got 3"]
    assert messages[3].status == "error"
    assert "ToolCallError" in messages[3].content and "'flaky'" in messages[3].content
    assert runs == [3, 3]  # retried once; the call with bad arguments never ran and was not retried
    assert ToolNode([add]).specs()[0]["parameters"]["required"] == ["a", "b"]


class StreamingToolModel(GenericFakeChatModel):
    """langchain-core's streaming fake, also streaming tool calls (as tool call chunks), with `bind_tools`."""

    def bind_tools(self, tools: list[Any], **kwargs: Any) -> StreamingToolModel:  # noqa: ARG002 - langchain's
        return self

    def _stream(self, messages: list[Any], *args: Any, **kwargs: Any) -> Iterator[ChatGenerationChunk]:  # noqa: ARG002
        message = next(self.messages)
        for token in filter(None, re.split(r"(\s)", str(message.content))):
            yield ChatGenerationChunk(message=AIMessageChunk(content=token, id=message.id))
        for index, c in enumerate(message.tool_calls):
            piece = {"name": c["name"], "args": json.dumps(c["args"]), "id": c["id"], "index": index}
            yield ChatGenerationChunk(
                message=AIMessageChunk(content="", id=message.id, tool_call_chunks=[piece])
            )


def test_a_streaming_langchain_model_gives_chunks_and_the_joined_message_is_saved() -> None:
    planned = [
        AIMessage("let me add", id="m1", tool_calls=[{"name": "add", "args": {"a": 2, "b": 2}, "id": "c1"}]),
        AIMessage("two and two make four", id="m2"),
    ]
    model = StreamingToolModel(messages=iter(planned))
    with create_react_agent(model, [add]) as agent:
        streamed = list(agent.stream({"messages": ["2 + 2?"]}, mode=["messages", "values"]))
    pieces = [(chunk, meta) for mode, (chunk, meta) in ((m, p) for m, p in streamed if m == "messages")]
    assert all(isinstance(chunk, AIMessageChunk) for chunk, _ in pieces)
    assert "".join(chunk.content for chunk, meta in pieces if chunk.id == "m2") == "two and two make four"
    assert [chunk.content for chunk, _ in pieces if chunk.id == "m1"] == ["let", " ", "me", " ", "add", ""]
    assert {meta["vertex"] for _, meta in pieces} == {"agent"}
    final = [p for m, p in streamed if m == "values"][-1]["messages"]
    first, last = final[1], final[-1]
    assert type(first) is AIMessage and first.id == "m1" and first.content == "let me add"
    assert first.tool_calls == [{"name": "add", "args": {"a": 2, "b": 2}, "id": "c1", "type": "tool_call"}]
    assert final[2].content == "4"
    assert type(last) is AIMessage and (last.id, last.content) == ("m2", "two and two make four")


def test_a_generic_fake_model_streams_word_by_word_in_order() -> None:
    model = GenericFakeChatModel(messages=iter([AIMessage("hello big world")]))
    with create_react_agent(model, []) as agent:
        streamed = list(agent.stream({"messages": [HumanMessage("hi")]}, mode=["messages", "values"]))
    pieces = [p for m, p in streamed if m == "messages"]
    assert [chunk.content for chunk, _ in pieces] == ["hello", " ", "big", " ", "world"]
    assert [meta["step"] for _, meta in pieces] == [1] * 5
    saved = [p for m, p in streamed if m == "values"][-1]["messages"][-1]
    assert type(saved) is AIMessage and saved.content == "hello big world"
    assert {chunk.id for chunk, _ in pieces} == {saved.id}
