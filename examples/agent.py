"""An agent that calls tools, end to end, with a scripted model (no LLM provider, no network).

Run it: python examples/agent.py

The model is a plain function that plans its replies; swap in any chat model
with `.invoke(messages)` (a langchain-core chat model works as it is).
"""

# --8<-- [start:imports]
from __future__ import annotations

from typing import Any

from actorgraph import END, START, Graph, RetryPolicy
from actorgraph.checkpoint import MemoryCheckpointer
from actorgraph.messages import MessagesState, content_of, role_of
from actorgraph.prebuilt import ToolNode, create_react_agent, tools_condition
from actorgraph.testing import ScriptedModel

# --8<-- [end:imports]


# --8<-- [start:tools]
def add(a: int, b: int) -> int:
    """Add two whole numbers."""
    return a + b


def weather(city: str) -> dict[str, Any]:
    """Today's weather in a city."""
    return {"city": city, "sky": "sunny", "celsius": 21}


# --8<-- [end:tools]


# --8<-- [start:model]
def model(messages: list[Any]) -> dict[str, Any]:
    """A scripted model: it asks for the tools once per question, then answers from their results."""
    last = messages[-1]
    if role_of(last) == "user":
        calls = [
            {"id": f"add-{len(messages)}", "name": "add", "args": {"a": 2, "b": 3}},
            {"id": f"sky-{len(messages)}", "name": "weather", "args": {"city": "Lima"}},
        ]
        return {"role": "assistant", "content": "", "tool_calls": calls}
    results = [content_of(m) for m in messages if role_of(m) == "tool"][-2:]
    return {"role": "assistant", "content": f"2 + 3 = {results[0]}; the weather: {results[1]}"}


# --8<-- [end:model]


def main() -> None:
    # --8<-- [start:agent]
    saver = MemoryCheckpointer()
    with create_react_agent(model, [add, weather], prompt="Answer briefly.", checkpointer=saver) as agent:
        first = agent.invoke({"messages": ["What is 2 + 3, and the weather in Lima?"]}, thread_id="chat")
        print(f"answer: {content_of(first.state['messages'][-1])}")
        print(f"roles: {[role_of(m) for m in first.state['messages']]}")
        again = agent.invoke({"messages": ["And again?"]}, thread_id="chat")  # the thread remembers
        print(f"messages on the thread: {len(again.state['messages'])}")
    # --8<-- [end:agent]

    # --8<-- [start:stream]
    streaming = ScriptedModel(["Lima is sunny today."], stream=True)
    with create_react_agent(streaming, [weather]) as agent:
        for chunk, meta in agent.stream({"messages": ["Weather?"]}, mode="messages"):
            print(f"token from {meta['vertex']}: {chunk['content']!r}")
    # --8<-- [end:stream]

    # --8<-- [start:approve]
    saver = MemoryCheckpointer()
    with create_react_agent(model, [add, weather], checkpointer=saver, interrupt_before=["tools"]) as agent:
        paused = agent.invoke({"messages": ["What is 2 + 3?"]}, thread_id="review")
        asked = agent.get_state("review").state["messages"][-1]["tool_calls"]
        print(f"{paused.status}: the model wants {[c['name'] for c in asked]}")
        done = agent.invoke(None, thread_id="review")  # approved: the tools run, the model answers
        print(f"after approval: {done.status}")
    # --8<-- [end:approve]

    # --8<-- [start:graph]
    attempts = {"n": 0}

    def flaky_weather(city: str) -> str:
        """Today's weather; the service fails twice first."""
        attempts["n"] += 1
        if attempts["n"] < 3:
            raise ConnectionError("weather service unavailable")
        return f"{city}: sunny"

    def call_model(state: MessagesState) -> dict[str, Any]:
        if role_of(state["messages"][-1]) == "tool":
            return {"messages": [("assistant", content_of(state["messages"][-1]))]}
        call = {"id": "w1", "name": "flaky_weather", "args": {"city": "Lima"}}
        return {"messages": [{"role": "assistant", "content": "", "tool_calls": [call]}]}

    g = Graph(state=MessagesState)
    g.add_vertex("agent", call_model, returns="update")
    retry = RetryPolicy(max_attempts=3, initial_interval=0.01)  # each tool call is retried on its own
    g.add_vertex("tools", ToolNode([flaky_weather]), retry=retry)
    g.add_edge(START, "agent")
    g.add_conditional_edges("agent", tools_condition, {"tools": "tools", END: END})
    g.add_edge("tools", "agent")
    with g.compile() as app:
        result = app.invoke({"messages": ["Weather in Lima?"]})
        print(f"{content_of(result.state['messages'][-1])} after {attempts['n']} attempts")
    # --8<-- [end:graph]


if __name__ == "__main__":
    main()
