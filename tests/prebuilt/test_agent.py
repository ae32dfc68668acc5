"""The prebuilt ReAct agent and its ToolNode, driven by scripted models (no LLM provider)."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Annotated, Any

import pytest

from actorgraph import END, START, Command, ConfigError, Graph, GraphValidationError, RetryPolicy, VertexError
from actorgraph.checkpoint import MemoryCheckpointer, SqliteCheckpointer
from actorgraph.messages import MessagesState
from actorgraph.prebuilt import (
    InjectedState,
    InjectedStore,
    InjectedToolCallId,
    ToolCallError,
    ToolNode,
    create_react_agent,
    tools_condition,
)
from actorgraph.store import SqliteStore
from actorgraph.testing import ScriptedModel

Compile = Any

# A ScriptedModel and the tools here keep what they saw in this process's memory
pytestmark = pytest.mark.threads_only("the scripted model and the counting tools share this process's memory")


def add(a: int, b: int) -> int:
    """Add two whole numbers."""
    return a + b


def weather(city: str, unit: str = "C") -> dict[str, Any]:
    """The weather in a city."""
    return {"city": city, "temperature": 21, "unit": unit}


def call(name: str, args: dict[str, Any], id: str) -> dict[str, Any]:  # noqa: A002 - a tool call's id
    return {"id": id, "name": name, "args": args}


def asks(*calls: dict[str, Any]) -> dict[str, Any]:
    return {"role": "assistant", "content": "", "tool_calls": list(calls)}


def roles(messages: list[dict[str, Any]]) -> list[str]:
    return [m["role"] for m in messages]


def test_a_two_tool_agent_answers_over_several_turns_of_one_thread(tmp_path: Path) -> None:
    model = ScriptedModel(
        [
            asks(call("add", {"a": 2, "b": 3}, "c1"), call("weather", {"city": "Oslo"}, "c2")),
            "2 + 3 is 5 and Oslo is at 21 C.",
            asks(call("add", {"a": 5, "b": 5}, "c3")),
            "Now it is 10.",
        ]
    )
    checkpointer = SqliteCheckpointer(str(tmp_path / "agent.db"))
    with create_react_agent(model, [add, weather], checkpointer=checkpointer) as agent:
        first = agent.invoke({"messages": ["what is 2 + 3, and the weather in Oslo?"]}, thread_id="chat")
        messages = first.state["messages"]
        assert roles(messages) == ["user", "assistant", "tool", "tool", "assistant"]
        assert [m["content"] for m in messages[2:4]] == [
            "5",
            '{"city": "Oslo", "temperature": 21, "unit": "C"}',
        ]
        assert [m["tool_call_id"] for m in messages[2:4]] == ["c1", "c2"]
        second = agent.invoke({"messages": [("user", "and 5 + 5?")]}, thread_id="chat")
        assert second.state["messages"][-1]["content"] == "Now it is 10."
        assert len(second.state["messages"]) == 9
        assert len({m["id"] for m in second.state["messages"]}) == 9
    # the model saw the whole conversation each time (the second turn included the first)
    assert len(model.calls[2]) == 6
    checkpointer.close()


def test_the_prompt_is_put_first_and_a_callable_prompt_makes_the_whole_input(compile_graph: Compile) -> None:
    model = ScriptedModel(["hello", "again"])
    with create_react_agent(model, [add], prompt="Be brief.") as agent:
        agent.invoke({"messages": ["hi"]})
    assert model.calls[0][0] == {"role": "system", "content": "Be brief."}
    made = ScriptedModel(["ok"])
    with create_react_agent(made, [add], prompt=lambda s: [("system", "S"), *s["messages"][-1:]]) as agent:
        agent.invoke({"messages": ["one", "two"]})
    assert [m if isinstance(m, tuple) else m["content"] for m in made.calls[0]] == [("system", "S"), "two"]


def test_tool_results_come_in_call_order_though_the_calls_run_in_parallel() -> None:
    started: list[str] = []
    both = threading.Barrier(2, timeout=10)

    def slow(tag: str) -> str:
        """Answer after the other call started."""
        started.append(tag)
        both.wait()  # the two calls must run at the same time
        time.sleep(0.05 if tag == "first" else 0)
        return tag

    model = ScriptedModel(
        [asks(call("slow", {"tag": "first"}, "a"), call("slow", {"tag": "second"}, "b")), "done"]
    )
    with create_react_agent(model, [slow]) as agent:
        messages = agent.invoke({"messages": ["go"]}).state["messages"]
    assert [m["content"] for m in messages if m["role"] == "tool"] == ["first", "second"]
    assert sorted(started) == ["first", "second"]


def _tool_graph(node: ToolNode, **vertex_options: Any) -> Graph[Any]:
    g: Graph[Any] = Graph(state=MessagesState)
    g.add_vertex("tools", node, **vertex_options)
    g.add_edge(START, "tools")
    g.add_edge("tools", END)
    return g


def test_a_tool_that_fails_twice_succeeds_under_the_vertex_retry_policy(compile_graph: Compile) -> None:
    attempts: list[int] = []

    def flaky(x: int) -> str:
        """Fail twice, then answer."""
        attempts.append(x)
        if len(attempts) < 3:
            raise ConnectionError("the service is down")
        return f"ok {x}"

    retry = RetryPolicy(max_attempts=3, initial_interval=0, jitter=False)
    app = compile_graph(_tool_graph(ToolNode([flaky]), retry=retry))
    state = app.invoke({"messages": [asks(call("flaky", {"x": 7}, "f1"))]}).state
    assert state["messages"][-1]["content"] == "ok 7"
    assert attempts == [7, 7, 7]


def test_spent_retries_become_an_error_message_or_fail_the_vertex(compile_graph: Compile) -> None:
    def broken(x: int) -> str:
        """Always fails."""
        raise ConnectionError(f"no route for {x}")

    retry = RetryPolicy(max_attempts=2, initial_interval=0, jitter=False)
    handled = compile_graph(_tool_graph(ToolNode([broken]), retry=retry))
    last = handled.invoke({"messages": [asks(call("broken", {"x": 1}, "b1"))]}).state["messages"][-1]
    assert last["role"] == "tool"
    assert last["status"] == "error"
    assert "ConnectionError: no route for 1" in last["content"]
    strict = compile_graph(_tool_graph(ToolNode([broken], handle_tool_errors=False), retry=retry))
    with pytest.raises(VertexError, match="no route for 1"):
        strict.invoke({"messages": [asks(call("broken", {"x": 1}, "b1"))]})


def test_unknown_tools_and_bad_arguments_are_told_to_the_model_and_never_retried(
    compile_graph: Compile,
) -> None:
    counted: list[Any] = []

    def count(n: int) -> int:
        """Count."""
        counted.append(n)
        return n

    retry = RetryPolicy(max_attempts=5, initial_interval=0, retry_on=Exception)
    app = compile_graph(_tool_graph(ToolNode([count]), retry=retry))
    calls = [call("nope", {}, "x1"), call("count", {"n": "three"}, "x2"), call("count", {"m": 1}, "x3")]
    tool_messages = app.invoke({"messages": [asks(*calls)]}).state["messages"][1:]
    texts = [m["content"] for m in tool_messages]
    assert "'nope', which is not one of: count" in texts[0]
    assert "argument 'n' must fit" in texts[1]
    assert "missing argument 'n'" in texts[2]
    assert "unknown argument 'm'" in texts[2]
    assert counted == []
    with pytest.raises(ToolCallError, match="nope"):
        ToolNode([count], handle_tool_errors=False).invoke({"messages": [asks(calls[0])]})


def test_injected_parameters_are_hidden_from_the_model_and_given_by_the_engine(
    compile_graph: Compile,
) -> None:
    seen: dict[str, Any] = {}

    def lookup(
        query: str,
        state: Annotated[dict, InjectedState],
        history: Annotated[list, InjectedState("messages")],
        call_id: Annotated[str, InjectedToolCallId],
    ) -> str:
        """Look something up."""
        seen.update(query=query, keys=sorted(state), n=len(history), call_id=call_id)
        return "found"

    node = ToolNode([lookup])
    assert node.specs() == [
        {
            "name": "lookup",
            "description": "Look something up.",
            "parameters": {
                "type": "object",
                "properties": {"query": {"type": "string"}},
                "required": ["query"],
            },
        }
    ]
    app = compile_graph(_tool_graph(node))
    app.invoke({"messages": [asks(call("lookup", {"query": "q"}, "L1"))]})
    assert seen == {"query": "q", "keys": ["messages"], "n": 1, "call_id": "L1"}


def test_a_tool_asks_a_person_before_it_acts(compile_graph: Compile) -> None:
    from actorgraph import interrupt

    sent: list[str] = []

    def send_mail(to: str) -> str:
        """Send a mail, once a person approves."""
        if interrupt({"approve": to}) != "yes":
            return "not sent"
        sent.append(to)
        return "sent"

    model = ScriptedModel([asks(call("send_mail", {"to": "ann"}, "m1")), "mail sent"])
    app = create_react_agent(model, [send_mail], checkpointer=MemoryCheckpointer())
    try:
        paused = app.invoke({"messages": ["mail ann"]}, thread_id="mail")
        assert paused.status == "interrupted"
        assert [i.value for i in paused.interrupts] == [{"approve": "ann"}]
        assert sent == []
        done = app.invoke(Command(resume="yes"), thread_id="mail")
        assert done.status == "done"
        assert sent == ["ann"]
        assert done.state["messages"][-1]["content"] == "mail sent"
    finally:
        app.close()


def test_interrupt_before_tools_lets_a_person_approve_the_calls(compile_graph: Compile) -> None:
    model = ScriptedModel([asks(call("add", {"a": 1, "b": 1}, "c1")), "two"])
    app = create_react_agent(model, [add], checkpointer=MemoryCheckpointer(), interrupt_before=["tools"])
    try:
        paused = app.invoke({"messages": ["1 + 1?"]}, thread_id="t")
        assert paused.status == "interrupted"
        assert app.get_state("t").next == ("tools",)
        done = app.invoke(None, thread_id="t")
        assert done.state["messages"][-1]["content"] == "two"
    finally:
        app.close()


def test_tools_condition_routes_on_the_last_message() -> None:
    assert tools_condition({"messages": [asks(call("add", {}, "1"))]}) == "tools"
    assert tools_condition({"messages": [{"role": "assistant", "content": "hi"}]}) == END
    assert tools_condition([asks(call("add", {}, "1"))]) == "tools"


@pytest.mark.parametrize(
    ("model", "prompt", "says"),
    [
        (3, None, "the agent's model must be a function of the messages or have .invoke"),
        ("gpt", None, "the agent's model must be a function"),
        (
            ScriptedModel([]),
            3,
            "the agent's prompt must be a system message's text, a message, or a function",
        ),
    ],
)
def test_a_model_or_prompt_that_cannot_be_called_is_refused_when_the_agent_is_made(
    model: Any, prompt: Any, says: str
) -> None:
    with pytest.raises(ConfigError, match=says):
        create_react_agent(model, [add], prompt=prompt)


def test_a_tool_node_needs_a_reducer_for_the_messages() -> None:
    g: Graph[Any] = Graph()
    with pytest.raises(GraphValidationError, match="add_messages"):
        g.add_vertex("tools", ToolNode([add]))


def test_a_streaming_model_yields_its_tokens_in_order_and_saves_the_joined_message() -> None:
    model = ScriptedModel([asks(call("add", {"a": 1, "b": 2}, "s1")), "one plus two is three"], stream=True)
    with create_react_agent(model, [add]) as agent:
        items = list(agent.stream({"messages": ["1 + 2?"]}, mode=["messages", "values"]))
    chunks = [item for mode, item in items if mode == "messages"]
    final = next(item for mode, item in reversed(items) if mode == "values")
    answer = [c for c, meta in chunks if meta["step"] == 3]
    assert "".join(c["content"] for c in answer) == "one plus two is three"
    assert [c["content"] for c in answer] == ["one ", "plus ", "two ", "is ", "three"]
    assert {meta["vertex"] for _, meta in chunks} == {"agent"}
    assert final["messages"][-1]["content"] == "one plus two is three"
    assert final["messages"][-1]["id"] == answer[0]["id"]
    assert final["messages"][1]["tool_calls"][0]["id"] == "s1"


def test_each_call_is_bounded_by_the_vertex_timeout(compile_graph: Compile) -> None:
    release = threading.Event()

    def hang(x: int) -> str:
        """Hang on the first call."""
        if x == 1:
            release.wait(30)
        return f"fast {x}"

    app = compile_graph(_tool_graph(ToolNode([hang]), timeout=0.3))
    try:
        messages = app.invoke(
            {"messages": [asks(call("hang", {"x": 1}, "h1"), call("hang", {"x": 2}, "h2"))]}
        )
    finally:
        release.set()
    slow, fast = messages.state["messages"][1:]
    assert slow["status"] == "error"
    assert "VertexTimeoutError" in slow["content"]
    assert fast["content"] == "fast 2"


def test_a_tool_remembers_across_threads_through_the_injected_store(tmp_path: Path) -> None:
    def remember(fact: str, store: Annotated[Any, InjectedStore]) -> str:
        """Remember a fact about the user."""
        store.put(("user", "ann"), "fact", {"text": fact})
        return "remembered"

    def recall(store: Annotated[Any, InjectedStore]) -> str:
        """Recall what is known about the user."""
        item = store.get(("user", "ann"), "fact")
        return item.value["text"] if item else "nothing"

    model = ScriptedModel(
        [asks(call("remember", {"fact": "likes tea"}, "r1")), "noted", asks(call("recall", {}, "r2")), "tea"]
    )
    store = SqliteStore(str(tmp_path / "memory.db"))
    try:
        with create_react_agent(
            model, [remember, recall], checkpointer=MemoryCheckpointer(), store=store
        ) as agent:
            agent.invoke({"messages": ["I like tea"]}, thread_id="one")
            other = agent.invoke({"messages": ["what do I like?"]}, thread_id="two")
        assert [m["content"] for m in other.state["messages"] if m["role"] == "tool"] == ["likes tea"]
    finally:
        store.close()


def test_a_tool_whose_hints_cannot_be_read_is_refused_with_the_fix() -> None:
    from actorgraph import ConfigError

    def local(x: Unknown) -> str:  # type: ignore[name-defined]  # noqa: F821 - the point of the test
        """A tool annotated with a name its module does not have."""
        return str(x)

    with pytest.raises(ConfigError, match="import the names its annotations use"):
        ToolNode([local])
