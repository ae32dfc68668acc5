"""Graphs for the command-line tests (`test_cli.py`), each CLI call a new process.

Vertices that must behave differently from one process to the next read files
in `$CLI_TEST_DIR`: a counter (the flaky vertex), a `fixed` file (the failing
vertex, "fixed" by creating it) and an `open` file (the gate that blocks until
the test opens it).
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import actorgraph as ag
from actorgraph.checkpoint import SqliteCheckpointer
from actorgraph.func import Entrypoint, entrypoint, task
from actorgraph.merge import append, by_key, replace

State = dict[str, Any]


def _dir() -> Path:
    return Path(os.environ.get("CLI_TEST_DIR", "."))


def _line(*vertices: tuple[str, Any], name: str, **options: Any) -> ag.Graph[State]:
    graph: ag.Graph[State] = ag.Graph(name=name)
    previous = ag.START
    for vertex, fn in vertices:
        graph.add_vertex(vertex, fn, **options.get(vertex, {}))
        graph.add_edge(previous, vertex)
        previous = vertex
    graph.add_edge(previous, ag.END)
    return graph


def write(state: State) -> State:
    return {**state, "draft": f"{state.get('topic', 'notes')}: draft"}


def review(state: State) -> State:
    answer = ag.interrupt({"question": "Publish this draft?", "draft": state["draft"]})
    return {**state, "approved": answer}


def publish(state: State) -> State:
    return {**state, "published": state["approved"] == "yes"}


approval = _line(("write", write), ("review", review), ("publish", publish), name="approval")


def approve(state: State) -> State:
    verdict = ag.interrupt(f"approve {state['item']}?")
    return {**state, "log": [f"{state['item']}={verdict}"]}


def _approvals() -> ag.Graph[State]:
    """One `approve` task per item (Send): several questions wait at once."""
    graph: ag.Graph[State] = ag.Graph(name="approvals", merge=by_key({"log": append, "item": replace}))
    graph.add_vertex("approve", approve)
    graph.add_conditional_edges(
        ag.START, lambda s: [ag.Send("approve", {**s, "item": i}) for i in s["items"]], ["approve"]
    )
    graph.add_edge("approve", ag.END)
    return graph


approvals = _approvals()


def fetch(state: State) -> State:
    """Fails on its first attempt ever (a counter file), then succeeds."""
    counter = _dir() / "fetch-attempts"
    attempts = int(counter.read_text()) + 1 if counter.exists() else 1
    counter.write_text(str(attempts))
    if attempts == 1:
        raise ConnectionError("the service timed out")
    return {**state, "fetched": attempts}


flaky = _line(
    ("fetch", fetch),
    name="flaky",
    fetch={"retry": ag.RetryPolicy(max_attempts=3, initial_interval=0.01, jitter=False)},
)


def prepare(state: State) -> State:
    return {**state, "prepared": True}


def compute(state: State) -> State:
    """Fails until `fixed` exists: the bug that is fixed between the run and the resume."""
    if not (_dir() / "fixed").exists():
        raise ValueError("division by zero in compute")
    return {**state, "result": 42}


fragile = _line(("prepare", prepare), ("compute", compute), name="fragile")


def wait(state: State) -> State:
    """Blocks until `open` exists (at most 30 s), after saying it started."""
    (_dir() / "entered").write_text("yes")
    deadline = time.monotonic() + 30
    while not (_dir() / "open").exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    return {**state, "waited": True}


def finish(state: State) -> State:
    return {**state, "finished": True}


gate = _line(("start", prepare), ("wait", wait), ("finish", finish), name="gate")

not_a_graph = 42


def _no_start() -> ag.Graph[State]:
    graph: ag.Graph[State] = ag.Graph(name="no_start")
    graph.add_vertex("lonely", prepare)
    graph.add_edge("lonely", ag.END)
    return graph


no_start = _no_start()

compiled_plain = _line(("prepare", prepare), name="plain").compile()


def compiled_with_store() -> ag.CompiledGraph[State]:
    """A compiled graph with its own store (`$CLI_TEST_DIR/own.db`)."""
    return _line(("prepare", prepare), name="own").compile(SqliteCheckpointer(_dir() / "own.db"))


# -- entrypoints (made by functions: one left open in the tests' process would keep its tasks' actors) --


@task
def draft_task(topic: str) -> str:
    return f"a draft about {topic}"


def _review(topic: str) -> dict[str, Any]:
    """The functional API guide's review loop: a task writes the draft, a person approves it."""
    text = draft_task(topic).result()
    verdict = ag.interrupt({"review": text})
    return {"text": text, "verdict": verdict}


def reviewed() -> Entrypoint[dict[str, Any]]:
    """An entrypoint without a store: `--db` (or the default) chooses it."""
    return entrypoint()(_review)


def reviewed_with_store() -> Entrypoint[dict[str, Any]]:
    """An entrypoint with its own store (`$CLI_TEST_DIR/own_review.db`)."""
    return entrypoint(checkpointer=SqliteCheckpointer(_dir() / "own_review.db"), name="review")(_review)


# -- racing answers (test_cli_answers.py) ----------------------------------------------------------


def _note(line: str) -> None:
    """Append a line to `$CLI_TEST_DIR/ledger`, flushed to disk: a side effect other processes count."""
    with (_dir() / "ledger").open("a") as ledger:
        ledger.write(line + "\n")
        ledger.flush()
        os.fsync(ledger.fileno())


def ship(state: State) -> State:
    """Asks "ship?"; each time it goes on past the question it writes `ran:<answer>` to the ledger.

    While a `hold` file exists it then waits (at most 60 s): the test kills the process there.
    """
    answer = ag.interrupt("ship?")
    _note(f"ran:{answer}")
    deadline = time.monotonic() + 60
    while (_dir() / "hold").exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    return {**state, "answer": answer}


ledger = _line(("ship", ship), name="ledger")


# -- hostile names and values (test_cli_hostile.py) -------------------------------------------------

ESC = "\x1b[2J\x1b[31m\x1b]0;owned\x07"
"""Escape sequences that would clear the screen, colour it and retitle the terminal; C1 and bidi below."""
C1_AND_BIDI = "\x9b31m\u202e"


def _loud(state: State) -> State:
    if state.get("fail"):
        raise ValueError(f"boom {ESC}{C1_AND_BIDI} [bold]not markup[/]")
    return {**state, "note": f"[red]x[/red] :warning: {ESC}{C1_AND_BIDI}", ESC: "key"}


def _ask_loudly(state: State) -> State:
    question = {"question": f"ok? {ESC}{C1_AND_BIDI} [/]", "detail": ESC}
    return {**state, "answer": ag.interrupt(question)}


hostile = _line(
    (f"[bold]loud{ESC}", _loud),
    (f"[link=https]ask{C1_AND_BIDI}", _ask_loudly),
    name=f"[bold]evil[/] {ESC}",
)


# -- large values (test_cli_large.py) -------------------------------------------------------------------


def grow(state: State) -> State:
    """A state of `size` characters (50 MB in the test), then a question as large."""
    big = "x" * int(state["size"])
    answer = ag.interrupt({"question": "keep it?", "copy": big})
    return {**state, "blob": big, "answer": answer}


large = _line(("grow", grow), name="large")
