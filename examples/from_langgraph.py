"""A LangGraph-style agent loop, written with actorgraph: the migration guide's example.

Run it: python examples/from_langgraph.py
"""

from __future__ import annotations

import operator
from typing import Any

import actorgraph as ag
from actorgraph.checkpoint import MemoryCheckpointer
from actorgraph.merge import by_key

State = dict[str, Any]


# --8<-- [start:vertices]
def agent(state: State) -> State:
    """A stand-in for the model: ask for the calculator once, then answer."""
    last = state["messages"][-1]
    if last["role"] == "user":
        reply = {"role": "assistant", "tool": "calculator", "args": "6*7"}
    else:
        reply = {"role": "assistant", "content": f"The answer is {last['content']}."}
    return {**state, "messages": [*state["messages"], reply]}  # the whole state, not a patch


def tools(state: State) -> State:
    """Run the requested tool once a person has allowed it."""
    call = state["messages"][-1]
    if ag.interrupt({"allow": call["tool"], "args": call["args"]}) != "allow":
        return {**state, "messages": [*state["messages"], {"role": "tool", "content": "denied"}]}
    left, right = call["args"].split("*")
    result = {"role": "tool", "content": str(int(left) * int(right))}
    return {**state, "messages": [*state["messages"], result]}


def should_continue(state: State) -> str:
    return "tools" if "tool" in state["messages"][-1] else ag.END


# --8<-- [end:vertices]


# --8<-- [start:graph]
def build() -> ag.Graph[State]:
    # LangGraph's Annotated[list, operator.add] becomes a reducer in the merge
    graph: ag.Graph[State] = ag.Graph(merge=by_key({"messages": operator.add}), name="agent")
    graph.add_vertex("agent", agent)  # add_node
    graph.add_vertex("tools", tools)
    graph.add_edge(ag.START, "agent")
    graph.add_conditional_edges("agent", should_continue, {"tools": "tools", ag.END: ag.END})
    graph.add_edge("tools", "agent")
    return graph


# --8<-- [end:graph]


def main() -> None:
    # --8<-- [start:run]
    with build().compile(checkpointer=MemoryCheckpointer()) as app:
        question = {"messages": [{"role": "user", "content": "What is 6 times 7?"}]}
        paused = app.invoke(question, thread_id="chat-1")  # config={"configurable": ...}
        print(f"{paused.status}: {paused.interrupts[0].value}")
        for update in app.stream(ag.Command(resume="allow"), thread_id="chat-1", mode="updates"):
            print(f"update from {list(update)}")  # {task_id: its new state}
        final = app.get_state("chat-1")
        print(f"{final.status}: {final.state['messages'][-1]['content']}")
        steps = [(snap.step, snap.next) for snap in app.get_history("chat-1")]  # get_state_history
        # --8<-- [end:run]
        assert paused.status == "interrupted"
        assert final.state["messages"][-1]["content"] == "The answer is 42."
        assert len(final.state["messages"]) == 4
        assert steps[0] == (3, ())
        # --8<-- [start:update-state]
        # paused before `tools` again; this time a person writes the tool's answer instead
        paused = app.invoke(question, thread_id="chat-2")
        by_hand = {"role": "tool", "content": "54"}
        app.update_state(
            "chat-2", {**paused.state, "messages": [*paused.state["messages"], by_hand]}, as_vertex="tools"
        )
        print(f"after update_state: next={app.get_state('chat-2').next}")  # the interrupt is gone
        answered = app.invoke(None, thread_id="chat-2")
        print(f"answered: {answered.state['messages'][-1]['content']}")
        # --8<-- [end:update-state]
        assert app.get_history("chat-2")[1].source == "update"
        assert answered.state["messages"][-1]["content"] == "The answer is 54."


if __name__ == "__main__":
    main()
