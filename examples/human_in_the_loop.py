"""Human in the loop: interrupt() and answers, interrupt ids, several answers, breakpoints.

Run it: python examples/human_in_the_loop.py
"""

from __future__ import annotations

from typing import Any

import actorgraph as ag
from actorgraph.checkpoint import MemoryCheckpointer
from actorgraph.merge import append, by_key, replace

State = dict[str, Any]


def line(*vertices: tuple[str, Any]) -> ag.Graph[State]:
    """The vertices one after the other, from START to END."""
    graph: ag.Graph[State] = ag.Graph(merge=by_key({"log": append}))
    for name, fn in vertices:
        graph.add_vertex(name, fn)
    names = [name for name, _ in vertices]
    for src, dst in zip((ag.START, *names), (*names, ag.END), strict=True):
        graph.add_edge(src, dst)
    return graph


# --8<-- [start:interview]
def interview(state: State) -> State:
    """Ask two questions; each `interrupt` pauses the run until it is answered."""
    name = ag.interrupt("What is your name?")
    age = ag.interrupt(f"How old are you, {name}?")
    return {**state, "name": name, "age": age}


def answers_in_order() -> None:
    with line(("interview", interview)).compile(MemoryCheckpointer()) as app:
        result = app.invoke({}, thread_id="form-1")
        while result.status == "interrupted":
            pending = result.interrupts[0]  # Interrupt(id, vertex, value)
            print(f"{pending.vertex} asks ({pending.id}): {pending.value}")
            answer = "Ada" if "name" in pending.value else 36
            result = app.invoke(ag.Command(resume=answer), thread_id="form-1")
    print(f"done: {result.state}")
    # --8<-- [end:interview]
    assert result.state == {"name": "Ada", "age": 36}


# --8<-- [start:by-id]
def approve(state: State) -> State:
    verdict = ag.interrupt(f"approve {state['item']}?")
    return {**state, "log": [*state["log"], f"{state['item']}={verdict}"]}


def approvals() -> ag.Graph[State]:
    """One `approve` task per item (Send): each pauses on its own."""
    graph: ag.Graph[State] = ag.Graph(merge=by_key({"log": append, "item": replace}))
    graph.add_vertex("approve", approve)
    graph.add_conditional_edges(
        ag.START, lambda s: [ag.Send("approve", {**s, "item": i}) for i in s["items"]], ["approve"]
    )
    graph.add_edge("approve", ag.END)
    return graph


def answers_by_id() -> None:
    with approvals().compile(MemoryCheckpointer()) as app:
        result = app.invoke({"items": ["laptop", "desk"], "log": []}, thread_id="buy-1")
        ids = {pending.value: pending.id for pending in result.interrupts}
        try:
            app.invoke(ag.Command(resume="yes"), thread_id="buy-1")  # which one?
        except ag.ActorGraphError as exc:
            print(f"refused: {exc}")
        result = app.invoke(ag.Command(resume={ids["approve desk?"]: "no"}), thread_id="buy-1")
        print(f"still waiting for: {[pending.value for pending in result.interrupts]}")
        result = app.invoke(ag.Command(resume={ids["approve laptop?"]: "yes"}), thread_id="buy-1")
    print(f"done: {sorted(result.state['log'])}")
    # --8<-- [end:by-id]
    assert [pending.value for pending in result.interrupts] == []
    assert sorted(result.state["log"]) == ["desk=no", "laptop=yes"]


def answered_once() -> None:
    with approvals().compile(MemoryCheckpointer()) as app:
        # --8<-- [start:once]
        result = app.invoke({"items": ["laptop", "desk"], "log": []}, thread_id="buy-2")
        laptop, desk = result.interrupts
        answer = ag.Command(resume={laptop.id: "yes"})
        app.invoke(answer, thread_id="buy-2")
        try:
            app.invoke(answer, thread_id="buy-2")  # the same request again: a double click, a retry
        except ag.AlreadyAnsweredError as exc:  # a ResumeError
            print(f"second delivery refused: {exc.vertex} {exc.interrupt_id == laptop.id}")
        still = app.get_state("buy-2").interrupts
        print(f"still waiting for: {[pending.value for pending in still]}")
        # --8<-- [end:once]
    assert [pending.id for pending in still] == [desk.id]


def step(name: str) -> Any:
    return lambda s: {**s, "log": [*s["log"], name]}


def breakpoints() -> None:
    # --8<-- [start:breakpoints]
    graph = line(("plan", step("plan")), ("act", step("act")), ("report", step("report")))
    with graph.compile(MemoryCheckpointer(), interrupt_before=["act"]) as app:
        paused = app.invoke({"log": []}, thread_id="bp-1")
        print(f"before act: {paused.status}, kind={paused.interrupts[0].kind}, log={paused.state['log']}")
        done = app.invoke(None, thread_id="bp-1")  # None passes the breakpoint
    print(f"then: {done.status}, log={done.state['log']}")

    with graph.compile(MemoryCheckpointer(), interrupt_after="*") as app:
        result = app.invoke({"log": []}, thread_id="bp-2")
        while result.status == "interrupted":  # one superstep per invoke
            print(f"  paused after superstep {result.step}: {result.state['log']}")
            result = app.invoke(None, thread_id="bp-2")
    # --8<-- [end:breakpoints]
    assert paused.state["log"] == ["plan"]
    assert done.state["log"] == ["plan", "act", "report"]
    assert result.state["log"] == ["plan", "act", "report"]


def update_then_resume() -> None:
    # --8<-- [start:update]
    def review(state: State) -> State:
        return {**state, "verdict": ag.interrupt(f"publish {state['draft']!r}?")}

    with line(("review", review)).compile(MemoryCheckpointer()) as app:
        app.invoke({"draft": "v1"}, thread_id="doc-1")
        # change the state first, then answer: the vertex re-runs with the new state
        result = app.invoke(ag.Command(update={"draft": "v2"}, resume="yes"), thread_id="doc-1")
    print(f"updated and answered: {result.state}")
    # --8<-- [end:update]
    assert result.state == {"draft": "v2", "verdict": "yes"}


def main() -> None:
    answers_in_order()
    answers_by_id()
    answered_once()
    breakpoints()
    update_then_resume()


if __name__ == "__main__":
    main()
