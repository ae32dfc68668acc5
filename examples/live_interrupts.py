"""Live interrupts: the vertex that asked waits in its actor and goes on from its line.

Run it: python examples/live_interrupts.py
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import actorgraph as ag
from actorgraph.checkpoint import MemoryCheckpointer

State = dict[str, Any]
charged: list[str] = []  # a side effect we must not repeat


# --8<-- [start:vertex]
def checkout(state: State) -> State:
    charged.append(state["order"])  # runs once on the live path, twice on the fallback path
    confirm = ag.interrupt(f"ship order {state['order']}?")
    return {**state, "shipped": confirm == "yes"}
    # --8<-- [end:vertex]


def graph() -> ag.Graph[State]:
    g: ag.Graph[State] = ag.Graph()
    g.add_vertex("checkout", checkout)
    g.add_edge(ag.START, "checkout")
    g.add_edge("checkout", ag.END)
    return g


def main() -> None:
    # --8<-- [start:run]
    for wait in (timedelta(minutes=10), None):  # the default, then the live path turned off
        charged.clear()
        with graph().compile(MemoryCheckpointer(), live_interrupts=wait) as app:
            app.invoke({"order": "A-1"}, thread_id="cart-1")  # returns at once, paused
            done = app.invoke(ag.Command(resume="yes"), thread_id="cart-1")
        path = "live" if wait else "fallback"
        print(f"{path}: shipped={done.state['shipped']}, charged {len(charged)} time(s)")
    # --8<-- [end:run]


if __name__ == "__main__":
    main()
