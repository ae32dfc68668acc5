"""A LangGraph-style agent loop, written with actorgraph: the migration guide's example.

Run it: python examples/from_langgraph.py
"""

# --8<-- [start:imports]
from __future__ import annotations

import operator
from typing import Annotated, Any, TypedDict

import actorgraph as ag
from actorgraph.checkpoint import MemoryCheckpointer
from actorgraph.merge import append, by_key

# --8<-- [end:imports]


# --8<-- [start:state]
class State(TypedDict):
    """The agent's state: its conversation."""

    messages: Annotated[list[dict[str, Any]], operator.add]  # as in LangGraph: the reducer is declared here


# --8<-- [end:state]


# --8<-- [start:vertices]
def agent(state: State) -> dict[str, Any]:
    """A stand-in for the model: ask for the calculator once, then answer."""
    last = state["messages"][-1]
    if last["role"] == "user":
        reply = {"role": "assistant", "tool": "calculator", "args": "6*7"}
    else:
        reply = {"role": "assistant", "content": f"The answer is {last['content']}."}
    return {"messages": [reply]}  # an update: the reducer appends it


def tools(state: State) -> dict[str, Any]:
    """Run the requested tool once a person has allowed it."""
    call = state["messages"][-1]
    if ag.interrupt({"allow": call["tool"], "args": call["args"]}) != "allow":
        return {"messages": [{"role": "tool", "content": "denied"}]}
    left, right = call["args"].split("*")
    return {"messages": [{"role": "tool", "content": str(int(left) * int(right))}]}


def should_continue(state: State) -> str:
    return "tools" if "tool" in state["messages"][-1] else ag.END


# --8<-- [end:vertices]


# --8<-- [start:graph]
def build() -> ag.Graph[State]:
    # StateGraph(State): the schema checks every state, and its Annotated reducers are the merge;
    # returns="update": vertices return only the keys they change, as LangGraph nodes do
    graph: ag.Graph[State] = ag.Graph(state=State, returns="update", name="agent")
    graph.add_vertex("agent", agent)  # add_node
    graph.add_vertex("tools", tools)
    graph.add_edge(ag.START, "agent")
    graph.add_conditional_edges("agent", should_continue, {"tools": "tools", ag.END: ag.END})
    graph.add_edge("tools", "agent")
    return graph


# --8<-- [end:graph]


# --8<-- [start:whole]
def whole_state_agent(state: dict[str, Any]) -> dict[str, Any]:
    """The same vertex in actorgraph's own style: it returns the whole new state."""
    reply = {"role": "assistant", "content": "hello"}
    return {**state, "messages": [*state["messages"], reply]}


def whole_state_graph() -> ag.Graph[dict[str, Any]]:
    graph: ag.Graph[dict[str, Any]] = ag.Graph(merge=by_key({"messages": append}))  # returns="state"
    graph.add_vertex("agent", whole_state_agent)
    graph.add_edge(ag.START, "agent")
    graph.add_edge("agent", ag.END)
    return graph


# --8<-- [end:whole]


def main() -> None:
    # --8<-- [start:run]
    app = build().compile(checkpointer=MemoryCheckpointer())
    question = {"messages": [{"role": "user", "content": "What is 6 times 7?"}]}
    paused = app.invoke(question, thread_id="chat-1")  # config={"configurable": ...}
    print(f"{paused.status}: {paused.interrupts[0].value}")
    for update in app.stream(ag.Command(resume="allow"), thread_id="chat-1", mode="updates"):
        print(f"update from {list(update)}")  # {task_id: its new state}
    final = app.get_state("chat-1")
    print(f"{final.status}: {final.state['messages'][-1]['content']}")
    steps = [(snap.step, snap.next) for snap in app.get_history("chat-1")]  # get_state_history
    # the thread remembers: the next input is an update to its last state
    thanks = app.invoke({"messages": [{"role": "user", "content": "Thanks!"}]}, thread_id="chat-1")
    print(f"second turn sees {len(thanks.state['messages']) - 1} earlier messages")
    # --8<-- [end:run]
    assert paused.status == "interrupted"
    assert final.state["messages"][-1]["content"] == "The answer is 42."
    assert len(final.state["messages"]) == 4
    assert steps[0] == (3, ())
    assert len(thanks.state["messages"]) == 6
    # --8<-- [start:update-state]
    # paused before `tools` again; this time a person writes the tool's answer instead
    app.invoke(question, thread_id="chat-2")
    by_hand = {"role": "tool", "content": "54"}
    app.update_state("chat-2", {"messages": [by_hand]}, as_vertex="tools")  # an update, as in LangGraph
    print(f"after update_state: next={app.get_state('chat-2').next}")  # the interrupt is gone
    answered = app.invoke(None, thread_id="chat-2")
    print(f"answered: {answered.state['messages'][-1]['content']}")
    # --8<-- [end:update-state]
    assert app.get_history("chat-2")[1].source == "update"
    assert answered.state["messages"][-1]["content"] == "The answer is 54."
    # --8<-- [start:spellings]
    config = {"configurable": {"thread_id": "chat-3"}, "recursion_limit": 25}  # LangGraph's, as it is
    for chunk in app.stream(question, config, stream_mode="updates"):
        print(f"chunk: {list(chunk)}")  # the last one says that the run paused
    result = app.invoke(ag.Command(resume="allow"), config)
    print(f"result['messages']: {len(result['messages'])} messages")  # reads result.state
    app.close()  # stops the graph's actors (or: with build().compile(...) as app:)
    # --8<-- [end:spellings]
    assert result.status == "done"
    with whole_state_graph().compile() as plain:
        assert plain.invoke({"messages": []}).state == {
            "messages": [{"role": "assistant", "content": "hello"}]
        }


if __name__ == "__main__":
    main()
