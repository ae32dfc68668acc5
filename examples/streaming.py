"""Watching runs: stream modes, listeners, async, logs and pictures.

Run it: python examples/streaming.py

The logs go to stderr; a PNG is drawn in a temporary directory when Graphviz's
`dot` is installed.
"""

from __future__ import annotations

import asyncio
import logging
import shutil
import tempfile
from pathlib import Path
from typing import Any

import actorgraph as ag
import actorgraph.logging
from actorgraph import events
from actorgraph.checkpoint import MemoryCheckpointer

State = dict[str, Any]


# --8<-- [start:graph]
def outline(state: State) -> State:
    return {**state, "sections": ["intro", "body", "end"]}


def write(state: State, ctx: ag.Context[Any]) -> State:
    """Write each section, telling whoever watches how far it got."""
    for done, section in enumerate(state["sections"], 1):
        ctx.emit({"section": section, "done": done, "of": len(state["sections"])})
    return {**state, "text": " / ".join(state["sections"])}


def article() -> ag.Graph[State]:
    graph: ag.Graph[State] = ag.Graph(name="article")
    graph.add_vertex("outline", outline)
    graph.add_vertex("write", write)
    graph.add_edge(ag.START, "outline")
    graph.add_edge("outline", "write")
    graph.add_edge("write", ag.END)
    return graph


# --8<-- [end:graph]


def modes(app: ag.CompiledGraph[State]) -> None:
    # --8<-- [start:values]
    for state in app.stream({"topic": "actors"}):  # mode="values": after each superstep
        print(f"values: {sorted(state)}")
    # --8<-- [end:values]
    # --8<-- [start:updates]
    for update in app.stream({"topic": "actors"}, mode="updates"):  # {task_id: new state}
        print(f"updates: {list(update)}")
    # --8<-- [end:updates]
    # --8<-- [start:custom]
    for progress in app.stream({"topic": "actors"}, mode="custom"):  # what vertices emit
        print(f"custom: {progress['section']} ({progress['done']}/{progress['of']})")
    # --8<-- [end:custom]
    # --8<-- [start:events]
    kinds = [type(event).__name__ for event in app.stream({"topic": "actors"}, mode="events")]
    print(f"events: {kinds}")
    # --8<-- [end:events]
    # --8<-- [start:pairs]
    pairs = list(app.stream({"topic": "actors"}, mode=["updates", "custom"]))
    print(f"pairs: {[mode for mode, _ in pairs]}")
    # --8<-- [end:pairs]
    assert [sorted(s) for s in app.stream({"topic": "actors"})] == [
        ["topic"],
        ["sections", "topic"],
        ["sections", "text", "topic"],
    ]
    assert [mode for mode, _ in pairs] == ["updates", "custom", "custom", "custom", "updates"]
    assert kinds[0] == "RunStarted"
    assert kinds[-1] == "RunFinished"


def details() -> None:
    with article().compile(MemoryCheckpointer()) as app:
        # --8<-- [start:tasks]
        for item in app.stream({"topic": "actors"}, mode="tasks", thread_id="detail"):
            name = item["name"]
            if "input" in item:  # a task starts: what it is given, and the tasks that sent it
                print(f"tasks: {name} starts with {sorted(item['input'])}, sent by {item['triggers']}")
            else:  # it ended: its new state (or its error, or the questions it asks)
                print(f"tasks: {name} ended with {sorted(item['result'])}, error {item['error']}")
        # --8<-- [end:tasks]
        # --8<-- [start:checkpoints]
        for item in app.stream({"topic": "actors"}, mode="checkpoints", thread_id="detail"):
            stored = app.get_state(**item["config"])  # the config reads the checkpoint back
            print(f"checkpoints: step {stored.step} ({item['metadata']['source']}), next {item['next']}")
        # --8<-- [end:checkpoints]
        # --8<-- [start:debug]
        items = app.stream({"topic": "actors"}, mode="debug", thread_id="detail")
        print(f"debug: {[(item['type'], item['step']) for item in items]}")
        # --8<-- [end:debug]
        history = app.get_history("detail")
    assert len(history) == 9  # three runs of three checkpoints each, every one streamed
    assert history[0].state["text"] == "intro / body / end"


# --8<-- [start:listener]
class TaskTimer:
    """A listener: called for each event, from the run's threads; `kinds` filters them."""

    kinds = frozenset({events.TaskFinished})

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}

    def __call__(self, event: events.Event) -> None:
        """Record how long the finished task took."""
        if isinstance(event, events.TaskFinished):  # the only kind it gets
            result = event.result
            self.seconds[result.task_id] = result.finished_at - result.started_at


# --8<-- [end:listener]


def listeners() -> None:
    # --8<-- [start:listen]
    every_run = TaskTimer()
    one_run = TaskTimer()
    with article().compile(listeners=[every_run]) as app:
        app.invoke({"topic": "actors"}, listeners=[one_run])
    print(f"timed tasks: {sorted(every_run.seconds)}")
    # --8<-- [end:listen]
    assert sorted(every_run.seconds) == sorted(one_run.seconds) == ["outline", "write"]


def run_async() -> None:
    # --8<-- [start:async]
    async def main(app: ag.CompiledGraph[State]) -> State:
        async for update in app.astream({"topic": "async"}, mode="updates"):
            print(f"astream: {list(update)}")
        result = await app.ainvoke({"topic": "async"}, timeout=10)
        return result.state

    with article().compile() as app:
        state = asyncio.run(main(app))
    print(f"ainvoke: {state['text']}")
    # --8<-- [end:async]
    assert state["text"] == "intro / body / end"


def logs() -> None:
    # --8<-- [start:logs]
    handler = actorgraph.logging.configure(json=True, level=logging.DEBUG)  # to stderr
    try:
        with article().compile() as app:
            app.invoke({"topic": "logs"}, thread_id="logged")
    finally:
        logging.getLogger("actorgraph").removeHandler(handler)
    # --8<-- [end:logs]
    print("logs: written to stderr, one JSON object per line")


def pictures(directory: Path) -> None:
    # --8<-- [start:pictures]
    with article().compile(MemoryCheckpointer()) as app:
        print(app.draw_mermaid(), end="")  # paste into any Mermaid viewer
        dot = app.draw_dot()  # Graphviz text
        app.invoke({"topic": "pictures"}, thread_id="drawn")
        coloured = app.draw_mermaid(thread_id="drawn")  # each vertex shows its last status
        if shutil.which("dot"):  # draw_png needs Graphviz's `dot` program
            png = app.draw_png(directory / "article.png", thread_id="drawn")
            print(f"drew {png.name}, {png.stat().st_size} bytes")
    # --8<-- [end:pictures]
    assert dot.startswith("digraph")
    assert "class v0 ok" in coloured


def main() -> None:
    with article().compile() as app:
        modes(app)
    details()
    listeners()
    run_async()
    logs()
    with tempfile.TemporaryDirectory() as scratch:
        pictures(Path(scratch))


if __name__ == "__main__":
    main()
