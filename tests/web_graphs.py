"""Graphs for the web inbox tests (`test_web.py`); vertices are module-level functions.

Vertices count their runs in files of the test's folder (so a test sees how often
an answer was applied), and the failing vertex succeeds once a `fixed` file is there.
The folder is the run's `context={"dir": ...}` (it reaches Ray workers too), else
`$WEB_TEST_DIR` (the `actorgraph serve` subprocesses of the browser tests).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from lines import in_a_line

import actorgraph as ag

State = dict[str, Any]


def _dir(ctx: ag.Context[Any] | None = None) -> Path:
    given = ctx.context if ctx is not None else None
    if isinstance(given, dict) and "dir" in given:
        return Path(given["dir"])
    return Path(os.environ.get("WEB_TEST_DIR", "."))


def _count(name: str, ctx: ag.Context[Any]) -> None:
    with (_dir(ctx) / f"{name}.runs").open("a") as runs:
        runs.write("x")


def runs(name: str) -> int:
    """How many times the vertex `name` ran (in this test's folder)."""
    path = _dir() / f"{name}.runs"
    return len(path.read_text()) if path.exists() else 0


def _line(name: str, *vertices: tuple[str, Any]) -> ag.Graph[State]:
    return in_a_line(*vertices, name=name)


def write(state: State) -> State:
    return {**state, "draft": f"{state.get('topic', 'notes')}: draft"}


def review(state: State) -> State:
    answer = ag.interrupt({"question": "Publish this draft?", "draft": state["draft"]})
    return {**state, "answer": answer}


def publish(state: State, ctx: ag.Context[Any]) -> State:
    _count("publish", ctx)
    return {**state, "published": True}


approval = _line("approval", ("write", write), ("review", review), ("publish", publish))


def choose(state: State) -> State:
    picked = ag.interrupt({"question": "Ship it?", "choices": ["ship", "hold", {"delay": 2}]})
    return {**state, "picked": picked}


choices = _line("choices", ("choose", choose), ("publish", publish))


def ask_raw(state: State) -> State:
    return {**state, "said": ag.interrupt(state["question"])}


raw = _line("raw", ("ask", ask_raw), ("publish", publish))


def flaky(state: State, ctx: ag.Context[Any]) -> State:
    if not (_dir(ctx) / "fixed").exists():
        msg = "the service is down"
        raise ConnectionError(msg)
    return {**state, "fixed": True}


failing = _line("failing", ("flaky", flaky))
