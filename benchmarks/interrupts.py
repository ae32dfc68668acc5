"""Ask and answer: one question per run, answered at once, live, on the fallback path, and in LangGraph.

`python -m benchmarks.interrupts [--repeat N]`. Each cycle is one run that
pauses at a vertex's `interrupt()` and the answer that finishes it, on an
in-memory checkpointer (`MemoryCheckpointer` against LangGraph's
`InMemorySaver`), a new thread per cycle. The vertex does some work before it
asks (none, or a 5 ms wait standing for a model or tool call): on the live path
that work is done once, on the fallback path and in LangGraph twice (the
vertex runs again from its first line). The three run alternately, one cycle
each per round; the figures are medians per cycle, the ratios medians of the
per-round ratios.
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import time
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import actorgraph as ag
from actorgraph.checkpoint import MemoryCheckpointer

__all__ = ["main", "rows"]

WORK = (0.0, 0.005)  # seconds of work before the question
_threads = itertools.count()


def _before(work: float) -> None:
    if work:
        time.sleep(work)


def ours(work: float, live: timedelta | None) -> tuple[Callable[[], object], Callable[[], None]]:
    """One ask-and-answer cycle of actorgraph, and what closes its graph."""

    def review(state: dict[str, Any]) -> dict[str, Any]:
        _before(work)
        return {**state, "answer": ag.interrupt("ship?")}

    g: ag.Graph = ag.Graph()
    g.add_vertex("review", review)
    g.add_edge(ag.START, "review")
    g.add_edge("review", ag.END)
    app = g.compile(MemoryCheckpointer(), live_interrupts=live)

    def cycle() -> object:
        thread = f"t{next(_threads)}"
        if app.invoke({"n": 1}, thread_id=thread).status != "interrupted":
            raise RuntimeError("the run did not pause")
        return app.invoke(ag.Command(resume="yes"), thread_id=thread).state

    return cycle, app.close


def theirs(work: float) -> Callable[[], object]:
    """One ask-and-answer cycle of LangGraph."""
    from typing import TypedDict

    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.graph import END, START, StateGraph
    from langgraph.types import Command, interrupt

    class State(TypedDict, total=False):
        n: int
        answer: str

    def review(state: State) -> State:
        _before(work)
        return {**state, "answer": interrupt("ship?")}

    builder = StateGraph(State)
    builder.add_node("review", review)
    builder.add_edge(START, "review")
    builder.add_edge("review", END)
    app = builder.compile(checkpointer=InMemorySaver())

    def cycle() -> object:
        config: Any = {"configurable": {"thread_id": f"t{next(_threads)}"}}
        app.invoke({"n": 1}, config)
        return app.invoke(Command(resume="yes"), config)

    return cycle


def _timed(cycle: Callable[[], object]) -> float:
    start = time.perf_counter()
    cycle()
    return time.perf_counter() - start


def rows(repeat: int) -> list[str]:
    """The table's rows: per cycle, live, fallback and LangGraph, and the ratios to live."""
    lines = [
        "| work before the question | live | fallback | LangGraph | fallback / live | LangGraph / live |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for work in WORK:
        live, close_live = ours(work, timedelta(minutes=10))
        fallback, close_fallback = ours(work, None)
        other = theirs(work)
        times: dict[str, list[float]] = {"live": [], "fallback": [], "theirs": []}
        for cycle in (live, fallback, other):  # warm up
            cycle()
        for _ in range(repeat):
            times["live"].append(_timed(live))
            times["fallback"].append(_timed(fallback))
            times["theirs"].append(_timed(other))
        close_live()
        close_fallback()
        med = {k: statistics.median(v) * 1e3 for k, v in times.items()}
        back = statistics.median(f / m for f, m in zip(times["fallback"], times["live"], strict=True))
        them = statistics.median(t / m for t, m in zip(times["theirs"], times["live"], strict=True))
        lines.append(
            f"| {work * 1e3:.0f} ms | {med['live']:.2f} ms | {med['fallback']:.2f} ms | "
            f"{med['theirs']:.2f} ms | {back:.2f}x | {them:.2f}x |"
        )
    return lines


def main() -> None:
    """Print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=200)
    args = parser.parse_args()
    print("\n".join(rows(args.repeat)))


if __name__ == "__main__":
    main()
